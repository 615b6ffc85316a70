//! The workloads on `std::thread` (default 2 MiB stacks, as S1, S4 and S5 ran them).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, RwLock};
use std::thread;
use std::time::{Duration, Instant};

use crate::util::{
    emit, fail, proc_status, rusage, status_of, timer_overhead_ns, Flags, Peaks, J,
};

pub fn dispatch(program: &str, f: &Flags) {
    match program {
        "sleepers" => sleepers(f),
        "million" => million(f),
        "pingpong" => pingpong(f),
        "launch" => launch(f),
        "memory" => memory(f),
        "brigade" => crate::tasks::brigade_threads(f),
        other => fail(&format!("unknown program {other:?}")),
    }
}

/// The pseudo-random start delay of worker `index`, below `stagger_ms` (µs).
pub fn stagger_us(index: u64, stagger_ms: i64) -> u64 {
    if stagger_ms <= 0 {
        return 0;
    }
    (index.wrapping_mul(2_654_435_761) & 0xffff_ffff) % (stagger_ms as u64 * 1000)
}

fn spawn_error(e: &std::io::Error) -> i64 {
    e.raw_os_error().unwrap_or(-1) as i64
}

/// S4's program: `count` threads each sleep `period_ms`, `duration_ms / period_ms`
/// times, after a staggered start; peak RSS and page tables (VmPTE) are sampled
/// once every thread exists, then every period.
fn sleepers(f: &Flags) {
    let count = f.int("count", 10_000, 1);
    let period_ms = f.int("period-ms", 10, 1);
    let duration_ms = f.int("duration-ms", 2000, period_ms);
    let stagger_ms = f.int("stagger-ms", 200, 0);
    let pin = f.text("pin", "none");
    if pin != "none" && pin != "round-robin" {
        fail(&format!("-pin {pin:?}: one of none, round-robin"));
    }
    let cpus = if pin == "round-robin" { allowed_cpus() } else { Vec::new() };
    let each = duration_ms / period_ms;
    let period = Duration::from_millis(period_ms as u64);
    let before = proc_status();
    let gate = Arc::new(RwLock::new(()));
    let held = gate.write().unwrap();
    let wakeups = Arc::new(AtomicI64::new(0));
    let spawn_start = Instant::now();
    let mut handles = Vec::with_capacity(count as usize);
    let mut errno = 0;
    for i in 0..count {
        let (gate, wakeups) = (gate.clone(), wakeups.clone());
        let cpu = if cpus.is_empty() { None } else { Some(cpus[i as usize % cpus.len()]) };
        match thread::Builder::new().spawn(move || {
            if let Some(cpu) = cpu {
                pin_to(cpu);
            }
            drop(gate.read().unwrap());
            thread::sleep(Duration::from_micros(stagger_us(i as u64, stagger_ms)));
            for _ in 0..each {
                thread::sleep(period);
            }
            wakeups.fetch_add(each, Ordering::Relaxed);
        }) {
            Ok(h) => handles.push(h),
            Err(e) => {
                errno = spawn_error(&e);
                break;
            }
        }
    }
    let spawn = spawn_start.elapsed();
    let mut peaks = Peaks::default();
    peaks.sample(); // every thread exists (its stack mapped, its descriptor at the top)
    let (u0, s0, _) = rusage();
    let start = Instant::now();
    drop(held);
    while handles.iter().any(|h| !h.is_finished()) {
        peaks.sample();
        thread::sleep(period);
    }
    let started = handles.len() as i64;
    for h in handles {
        h.join().unwrap();
    }
    let wall = start.elapsed();
    let (u1, s1, maxrss) = rusage();
    let end = proc_status();
    let mut fields = vec![
        ("count", J::I(count)), ("started", J::I(started)), ("spawn_errno", J::I(errno)),
        ("period_ms", J::I(period_ms)), ("duration_ms", J::I(duration_ms)),
        ("stagger_ms", J::I(stagger_ms)), ("wakeups", J::I(wakeups.load(Ordering::Relaxed))),
        ("wall_ns", J::I(wall.as_nanos() as i64)), ("spawn_ns", J::I(spawn.as_nanos() as i64)),
        ("user_us", J::I(u1 - u0)), ("sys_us", J::I(s1 - s0)),
    ];
    fields.extend(peaks.fields(&before));
    fields.extend([
        ("hwm_kib", J::I(status_of(&end, "VmHWM"))), ("ru_maxrss_kib", J::I(maxrss)),
        ("pin", J::S(pin)), ("cpus", J::A(cpus.iter().map(|c| J::I(*c as i64)).collect())),
    ]);
    emit("sleepers", "thread", fields);
}

/// The CPUs this process may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills the zeroed set it is given.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            fail("sched_getaffinity failed");
        }
        (0..libc::CPU_SETSIZE as usize).filter(|c| libc::CPU_ISSET(*c, &set)).collect()
    }
}

/// Pin the calling thread to one CPU (S4's round-robin placement).
fn pin_to(cpu: usize) {
    // SAFETY: the set is built here and only read by sched_setaffinity.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// S1's program: `count` threads that each sleep `sleep-ms`, then join them all
/// (`-gate`: each waits until all exist, so all sleep at once). A refused
/// spawn stops the launch; `started` and `spawn_errno` say where.
fn million(f: &Flags) {
    let count = f.int("count", 1_000_000, 1);
    let sleep = Duration::from_millis(f.int("sleep-ms", 1000, 0) as u64);
    let gated = f.flag("gate");
    let gate = Arc::new(RwLock::new(()));
    let held = if gated { Some(gate.write().unwrap()) } else { None };
    let done = Arc::new(AtomicI64::new(0));
    let start = Instant::now();
    let mut handles = Vec::with_capacity(count as usize);
    let mut errno = 0;
    for _ in 0..count {
        let (gate, done) = (gate.clone(), done.clone());
        match thread::Builder::new().spawn(move || {
            drop(gate.read().unwrap());
            thread::sleep(sleep);
            done.fetch_add(1, Ordering::Relaxed);
        }) {
            Ok(h) => handles.push(h),
            Err(e) => {
                errno = spawn_error(&e);
                break;
            }
        }
    }
    let spawn = start.elapsed();
    let alive = handles.len() as i64 - done.load(Ordering::Relaxed);
    let peak = proc_status();
    drop(held);
    let started = handles.len() as i64;
    for h in handles {
        h.join().unwrap();
    }
    emit("million", "thread", vec![
        ("count", J::I(count)), ("started", J::I(started)), ("spawn_errno", J::I(errno)),
        ("finished", J::I(done.load(Ordering::Relaxed))),
        ("spawn_ns", J::I(spawn.as_nanos() as i64)), ("alive_at_spawn_end", J::I(alive)),
        ("rss_at_spawn_end_kib", J::I(status_of(&peak, "VmRSS"))),
        ("hwm_kib", J::I(status_of(&proc_status(), "VmHWM"))),
    ]);
}

/// Two threads pass a value back and forth over rendezvous channels; one round
/// trip is two thread switches.
fn pingpong(f: &Flags) {
    let iterations = f.int("iterations", 100_000, 1) as usize;
    let warmup = f.int("warmup", 10_000, 0) as usize;
    let timer = timer_overhead_ns();
    let (ping_tx, ping_rx) = sync_channel::<usize>(0);
    let (pong_tx, pong_rx) = sync_channel::<usize>(0);
    let echo = thread::spawn(move || {
        for v in ping_rx {
            if pong_tx.send(v).is_err() {
                break;
            }
        }
    });
    let trip = |i: usize| {
        ping_tx.send(i).unwrap();
        pong_rx.recv().unwrap();
    };
    (0..warmup).for_each(trip);
    let mut samples = Vec::with_capacity(iterations);
    let mut prev = Instant::now();
    for i in 0..iterations {
        trip(i);
        let now = Instant::now();
        samples.push(now.duration_since(prev).as_nanos() as i64);
        prev = now;
    }
    let start = Instant::now();
    (0..iterations).for_each(trip);
    let batch = start.elapsed().as_nanos() as i64;
    drop(ping_tx);
    echo.join().unwrap();
    emit("pingpong", "thread", vec![
        ("iterations", J::I(iterations as i64)), ("warmup", J::I(warmup as i64)),
        ("timer_overhead_ns", J::I(timer)), ("batch_ns", J::I(batch)),
        ("samples_ns", J::ints(&samples)),
    ]);
}

/// A thread's whole life, one at a time: spawn, first run, exit, join.
fn launch(f: &Flags) {
    let iterations = f.int("iterations", 10_000, 1) as usize;
    let warmup = f.int("warmup", 1000, 0) as usize;
    let timer = timer_overhead_ns();
    let ran = Arc::new(AtomicI64::new(0));
    let one = || {
        let ran = ran.clone();
        thread::spawn(move || {
            ran.fetch_add(1, Ordering::Relaxed);
        })
        .join()
        .unwrap();
    };
    (0..warmup).for_each(|_| one());
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let t0 = Instant::now();
        one();
        samples.push(t0.elapsed().as_nanos() as i64);
    }
    let start = Instant::now();
    (0..iterations).for_each(|_| one());
    let batch = start.elapsed().as_nanos() as i64;
    emit("launch", "thread", vec![
        ("iterations", J::I(iterations as i64)), ("warmup", J::I(warmup as i64)),
        ("launched", J::I(ran.load(Ordering::Relaxed))), ("timer_overhead_ns", J::I(timer)),
        ("batch_ns", J::I(batch)), ("samples_ns", J::ints(&samples)),
    ]);
}

pub fn memory_point(tasks: i64) -> J {
    let s = proc_status();
    J::O(vec![
        ("tasks", J::I(tasks)), ("vsz_kib", J::I(status_of(&s, "VmSize"))),
        ("rss_kib", J::I(status_of(&s, "VmRSS"))),
        ("rss_anon_kib", J::I(status_of(&s, "RssAnon"))),
        ("threads", J::I(status_of(&s, "Threads"))),
    ])
}

/// `count` idle threads blocked on a lock; /proc/self/status read at `points` counts.
fn memory(f: &Flags) {
    let count = f.int("count", 10_000, 1);
    let points = f.int("points", 11, 2);
    let gate = Arc::new(RwLock::new(()));
    let held = gate.write().unwrap();
    let mut out = vec![memory_point(0)];
    let mut handles = Vec::new();
    for i in 1..points {
        let target = count * i / (points - 1);
        let ready = Arc::new(AtomicI64::new(0));
        let mut batch = 0;
        while (handles.len() as i64) < target {
            let (gate, ready) = (gate.clone(), ready.clone());
            handles.push(thread::spawn(move || {
                ready.fetch_add(1, Ordering::Release);
                drop(gate.read().unwrap());
            }));
            batch += 1;
        }
        while ready.load(Ordering::Acquire) < batch {
            thread::yield_now();
        }
        thread::sleep(Duration::from_millis(2)); // let the last ones reach the lock
        out.push(memory_point(handles.len() as i64));
    }
    drop(held);
    for h in handles {
        h.join().unwrap();
    }
    emit("memory", "thread", vec![("count", J::I(count)), ("points", J::A(out))]);
}
