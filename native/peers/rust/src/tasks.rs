//! The workloads on Tokio tasks (`tokio-ct`: current_thread runtime,
//! `tokio-mt`: multi-thread runtime), and S5's brigade (socket pairs or pipes) on both kinds.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::runtime::{Builder, Runtime};
use tokio::sync::{mpsc, RwLock};

use crate::threads::{memory_point, stagger_us};
use crate::util::{
    emit, fail, proc_status, rusage, status_of, timer_overhead_ns, Flags, Peaks, J,
};

fn runtime(kind: &str) -> Runtime {
    let mut b = if kind == "tokio-ct" {
        Builder::new_current_thread()
    } else {
        Builder::new_multi_thread()
    };
    b.enable_all().build().unwrap_or_else(|e| fail(&format!("cannot build the runtime: {e}")))
}

pub fn dispatch(program: &str, kind: &str, f: &Flags) {
    let rt = runtime(kind);
    let fields = match program {
        "sleepers" => rt.block_on(sleepers(f)),
        "million" => rt.block_on(million(f)),
        "pingpong" => rt.block_on(pingpong(f)),
        "launch" => rt.block_on(launch(f)),
        "memory" => rt.block_on(memory(f)),
        "brigade" => rt.block_on(brigade(f)),
        other => fail(&format!("unknown program {other:?}")),
    };
    emit(program, kind, fields);
}

async fn sleepers(f: &Flags) -> Vec<(&'static str, J)> {
    let count = f.int("count", 10_000, 1);
    let period_ms = f.int("period-ms", 10, 1);
    let duration_ms = f.int("duration-ms", 2000, period_ms);
    let stagger_ms = f.int("stagger-ms", 200, 0);
    let each = duration_ms / period_ms;
    let period = Duration::from_millis(period_ms as u64);
    let before = proc_status();
    let gate = Arc::new(RwLock::new(()));
    let held = gate.clone().write_owned().await;
    let wakeups = Arc::new(AtomicI64::new(0));
    let finished = Arc::new(AtomicI64::new(0));
    let spawn_start = Instant::now();
    let mut handles = Vec::with_capacity(count as usize);
    for i in 0..count {
        let (gate, wakeups, finished) = (gate.clone(), wakeups.clone(), finished.clone());
        handles.push(tokio::spawn(async move {
            drop(gate.read().await);
            tokio::time::sleep(Duration::from_micros(stagger_us(i as u64, stagger_ms))).await;
            for _ in 0..each {
                tokio::time::sleep(period).await;
            }
            wakeups.fetch_add(each, Ordering::Relaxed);
            finished.fetch_add(1, Ordering::Release);
        }));
    }
    let spawn = spawn_start.elapsed();
    let mut peaks = Peaks::default();
    peaks.sample(); // every task exists
    let (u0, s0, _) = rusage();
    let start = Instant::now();
    drop(held);
    while finished.load(Ordering::Acquire) < count {
        peaks.sample();
        tokio::time::sleep(period).await;
    }
    for h in handles {
        h.await.unwrap();
    }
    let wall = start.elapsed();
    let (u1, s1, maxrss) = rusage();
    let end = proc_status();
    let mut fields = vec![
        ("count", J::I(count)), ("started", J::I(count)), ("spawn_errno", J::I(0)),
        ("period_ms", J::I(period_ms)), ("duration_ms", J::I(duration_ms)),
        ("stagger_ms", J::I(stagger_ms)), ("wakeups", J::I(wakeups.load(Ordering::Relaxed))),
        ("wall_ns", J::I(wall.as_nanos() as i64)), ("spawn_ns", J::I(spawn.as_nanos() as i64)),
        ("user_us", J::I(u1 - u0)), ("sys_us", J::I(s1 - s0)),
    ];
    fields.extend(peaks.fields(&before));
    fields.extend([("hwm_kib", J::I(status_of(&end, "VmHWM"))), ("ru_maxrss_kib", J::I(maxrss))]);
    fields
}

async fn million(f: &Flags) -> Vec<(&'static str, J)> {
    let count = f.int("count", 1_000_000, 1);
    let sleep = Duration::from_millis(f.int("sleep-ms", 1000, 0) as u64);
    let gate = Arc::new(RwLock::new(()));
    let held = if f.flag("gate") { Some(gate.clone().write_owned().await) } else { None };
    let done = Arc::new(AtomicI64::new(0));
    let start = Instant::now();
    let mut handles = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let (gate, done) = (gate.clone(), done.clone());
        handles.push(tokio::spawn(async move {
            drop(gate.read().await);
            tokio::time::sleep(sleep).await;
            done.fetch_add(1, Ordering::Relaxed);
        }));
    }
    let spawn = start.elapsed();
    let alive = count - done.load(Ordering::Relaxed);
    let peak = proc_status();
    drop(held);
    for h in handles {
        h.await.unwrap();
    }
    vec![
        ("count", J::I(count)), ("started", J::I(count)), ("spawn_errno", J::I(0)),
        ("finished", J::I(done.load(Ordering::Relaxed))),
        ("spawn_ns", J::I(spawn.as_nanos() as i64)), ("alive_at_spawn_end", J::I(alive)),
        ("rss_at_spawn_end_kib", J::I(status_of(&peak, "VmRSS"))),
        ("hwm_kib", J::I(status_of(&proc_status(), "VmHWM"))),
    ]
}

/// Two tasks pass a value back and forth over one-slot channels; one round
/// trip is two task switches.
async fn pingpong(f: &Flags) -> Vec<(&'static str, J)> {
    let iterations = f.int("iterations", 100_000, 1) as usize;
    let warmup = f.int("warmup", 10_000, 0) as usize;
    let timer = timer_overhead_ns();
    let (ping_tx, mut ping_rx) = mpsc::channel::<usize>(1);
    let (pong_tx, mut pong_rx) = mpsc::channel::<usize>(1);
    let echo = tokio::spawn(async move {
        while let Some(v) = ping_rx.recv().await {
            if pong_tx.send(v).await.is_err() {
                break;
            }
        }
    });
    for i in 0..warmup {
        ping_tx.send(i).await.unwrap();
        pong_rx.recv().await.unwrap();
    }
    let mut samples = Vec::with_capacity(iterations);
    let mut prev = Instant::now();
    for i in 0..iterations {
        ping_tx.send(i).await.unwrap();
        pong_rx.recv().await.unwrap();
        let now = Instant::now();
        samples.push(now.duration_since(prev).as_nanos() as i64);
        prev = now;
    }
    let start = Instant::now();
    for i in 0..iterations {
        ping_tx.send(i).await.unwrap();
        pong_rx.recv().await.unwrap();
    }
    let batch = start.elapsed().as_nanos() as i64;
    drop(ping_tx);
    echo.await.unwrap();
    vec![
        ("iterations", J::I(iterations as i64)), ("warmup", J::I(warmup as i64)),
        ("timer_overhead_ns", J::I(timer)), ("batch_ns", J::I(batch)),
        ("samples_ns", J::ints(&samples)),
    ]
}

/// A task's whole life, one at a time: spawn, first poll, completion, await.
async fn launch(f: &Flags) -> Vec<(&'static str, J)> {
    let iterations = f.int("iterations", 10_000, 1) as usize;
    let warmup = f.int("warmup", 1000, 0) as usize;
    let timer = timer_overhead_ns();
    let ran = Arc::new(AtomicI64::new(0));
    for _ in 0..warmup {
        let r = ran.clone();
        tokio::spawn(async move { r.fetch_add(1, Ordering::Relaxed) }).await.unwrap();
    }
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let r = ran.clone();
        let t0 = Instant::now();
        tokio::spawn(async move { r.fetch_add(1, Ordering::Relaxed) }).await.unwrap();
        samples.push(t0.elapsed().as_nanos() as i64);
    }
    let start = Instant::now();
    for _ in 0..iterations {
        let r = ran.clone();
        tokio::spawn(async move { r.fetch_add(1, Ordering::Relaxed) }).await.unwrap();
    }
    let batch = start.elapsed().as_nanos() as i64;
    vec![
        ("iterations", J::I(iterations as i64)), ("warmup", J::I(warmup as i64)),
        ("launched", J::I(ran.load(Ordering::Relaxed))), ("timer_overhead_ns", J::I(timer)),
        ("batch_ns", J::I(batch)), ("samples_ns", J::ints(&samples)),
    ]
}

/// `count` idle tasks each awaiting a lock; /proc/self/status read at `points` counts.
async fn memory(f: &Flags) -> Vec<(&'static str, J)> {
    let count = f.int("count", 10_000, 1);
    let points = f.int("points", 11, 2);
    let gate = Arc::new(RwLock::new(()));
    let held = gate.clone().write_owned().await;
    let ready = Arc::new(AtomicI64::new(0));
    let mut out = vec![memory_point(0)];
    let mut handles = Vec::new();
    for i in 1..points {
        let target = count * i / (points - 1);
        while (handles.len() as i64) < target {
            let (gate, ready) = (gate.clone(), ready.clone());
            handles.push(tokio::spawn(async move {
                ready.fetch_add(1, Ordering::Release);
                drop(gate.read().await);
            }));
        }
        while ready.load(Ordering::Acquire) < target {
            tokio::task::yield_now().await;
        }
        out.push(memory_point(target));
    }
    drop(held);
    for h in handles {
        h.await.unwrap();
    }
    vec![("count", J::I(count)), ("points", J::A(out))]
}

fn brigade_fields(shape: (i64, i64, i64), timer: i64, rss: (i64, i64), samples: &[i64],
                  wrong: i64, socket: bool) -> Vec<(&'static str, J)> {
    let ((tasks, iterations, warmup), (before, ready)) = (shape, rss);
    let link = if socket { "socketpair" } else { "pipe" };
    vec![
        ("transport", J::S(link.to_string())), ("tasks", J::I(tasks)), ("iterations", J::I(iterations)), ("warmup", J::I(warmup)),
        ("timer_overhead_ns", J::I(timer)), ("rss_before_kib", J::I(before)),
        ("rss_ready_kib", J::I(ready)), ("bytes_wrong", J::I(wrong)),
        ("samples_ns", J::ints(samples)),
    ]
}

fn brigade_flags(f: &Flags) -> (i64, i64, i64) {
    (f.int("tasks", 500, 1), f.int("iterations", 1000, 1), f.int("warmup", 100, 0))
}

/// `-transport`: `socketpair` (S5's: a Unix stream socket pair, one end read, the
/// other written) or `pipe` (a pipe(2)); either way one byte in, one byte out.
fn transport(f: &Flags) -> bool {
    match f.text("transport", "pipe").as_str() {
        "pipe" => false,
        "socketpair" => true,
        other => fail(&format!("-transport {other:?}: one of pipe, socketpair")),
    }
}

type Tx = Box<dyn Write + Send>;
type Rx = Box<dyn Read + Send>;

/// One blocking link of the chain: (its write end, its read end).
fn link(socket: bool) -> (Tx, Rx) {
    if socket {
        let (rx, tx) = std::os::unix::net::UnixStream::pair()
            .unwrap_or_else(|e| fail(&format!("socketpair: {e}")));
        (Box::new(tx), Box::new(rx))
    } else {
        let (rx, tx) = std::io::pipe().unwrap_or_else(|e| fail(&format!("pipe: {e}")));
        (Box::new(tx), Box::new(rx))
    }
}

type ATx = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;
type ARx = Box<dyn tokio::io::AsyncRead + Send + Unpin>;

/// One link registered with the runtime's reactor: (its write end, its read end).
fn async_link(socket: bool) -> (ATx, ARx) {
    if socket {
        let (rx, tx) = tokio::net::UnixStream::pair()
            .unwrap_or_else(|e| fail(&format!("socketpair: {e}")));
        (Box::new(tx), Box::new(rx))
    } else {
        let (tx, rx) = tokio::net::unix::pipe::pipe()
            .unwrap_or_else(|e| fail(&format!("pipe: {e}")));
        (Box::new(tx), Box::new(rx))
    }
}

/// S5's bucket brigade on threads: `tasks` threads in a chain of links (`-transport`:
/// Unix socket pairs, S5's, or pipes), each reading one byte and writing it on; one
/// trip passes `tasks + 1` links. `-mode one-thread`: S5's one-thread-brigade, the
/// same links with one thread doing every read and write in turn (the I/O alone,
/// S5's baseline).
pub fn brigade_threads(f: &Flags) {
    match f.text("mode", "threads").as_str() {
        "threads" => {}
        "one-thread" => return brigade_one_thread(f),
        other => fail(&format!("-mode {other:?}: one of threads, one-thread")),
    }
    let (n, iterations, warmup) = brigade_flags(f);
    let socket = transport(f);
    // -stack-kib: each thread's stack (S5: 1024); 0 leaves Rust's default (2 MiB)
    let stack_kib = f.int("stack-kib", 0, 0);
    let timer = timer_overhead_ns();
    let before = status_of(&proc_status(), "VmRSS");
    let (mut head, first_rx) = link(socket);
    let mut rx = first_rx;
    let mut handles = Vec::new();
    for _ in 0..n {
        let (mut tx, next_rx) = link(socket);
        let mut mine = std::mem::replace(&mut rx, next_rx);
        let mut builder = std::thread::Builder::new();
        if stack_kib > 0 {
            builder = builder.stack_size(stack_kib as usize * 1024);
        }
        handles.push(builder.spawn(move || {
            // the CPU each read returned on, one a trip (the CPU it writes on)
            let mut cpus = Vec::with_capacity((warmup + iterations) as usize);
            let mut b = [0u8; 1];
            while mine.read_exact(&mut b).is_ok() {
                cpus.push(cpu_now());
                if tx.write_all(&b).is_err() {
                    break;
                }
            }
            cpus
        }).unwrap_or_else(|e| fail(&format!("thread spawn: {e}"))));
    }
    let ready = status_of(&proc_status(), "VmRSS");
    let mut tail = rx;
    let mut wrong = 0;
    let mut samples = Vec::with_capacity(iterations as usize);
    // the driver's CPU as it writes the byte in and as its read of the byte returns
    let (mut sent_on, mut got_on) = (Vec::new(), Vec::new());
    let mut cpu = CpuTime::default();
    for i in 0..(warmup + iterations) {
        cpu.start_at(i, warmup);
        let byte = [(i % 251) as u8];
        sent_on.push(cpu_now());
        let t0 = Instant::now();
        head.write_all(&byte).unwrap();
        let mut b = [0u8; 1];
        tail.read_exact(&mut b).unwrap();
        if i >= warmup {
            samples.push(t0.elapsed().as_nanos() as i64);
        }
        got_on.push(cpu_now());
        wrong += i64::from(b != byte);
    }
    let timed = cpu.fields();
    drop(head);
    let mut cpus = vec![sent_on];
    for h in handles {
        cpus.push(h.join().unwrap());
    }
    cpus.push(got_on);
    let mut out = brigade_fields((n, iterations, warmup), timer, (before, ready), &samples,
                                 wrong, socket);
    out.push(("cross_cpu_per_trip", J::ints(&cross_cpu_per_trip(&cpus, warmup))));
    out.extend(timed);
    emit("brigade", "thread", out);
}

/// The process's user and system CPU time and the wall time over the timed trips (all
/// threads; µs, getrusage's resolution, and ns): `fields` right after the last one.
#[derive(Default)]
struct CpuTime {
    start: Option<(i64, i64, Instant)>,
}

impl CpuTime {
    fn start_at(&mut self, trip: i64, warmup: i64) {
        if trip == warmup {
            let (user, system, _) = rusage();
            self.start = Some((user, system, Instant::now()));
        }
    }

    fn fields(&self) -> Vec<(&'static str, J)> {
        let Some((user, system, t0)) = self.start else { return Vec::new() };
        let wall = t0.elapsed().as_nanos() as i64;
        let (user_end, system_end, _) = rusage();
        vec![("timed_user_us", J::I(user_end - user)),
             ("timed_system_us", J::I(system_end - system)), ("timed_wall_ns", J::I(wall))]
    }
}

fn cpu_now() -> i32 {
    // SAFETY: sched_getcpu takes no argument and only reads the CPU this thread is on.
    unsafe { libc::sched_getcpu() }
}

/// Per timed trip: the hops whose reader ran on another CPU than the writer that woke it.
/// `cpus[0]`: the driver's CPU as it wrote the byte in; `cpus[1..=n]`: the CPU of each
/// task as its read returned (where it then writes); `cpus[n + 1]`: the driver's as its
/// read of the byte returned. A trip is the n + 1 hops between neighbours.
fn cross_cpu_per_trip(cpus: &[Vec<i32>], warmup: i64) -> Vec<i64> {
    let trips = cpus.iter().map(Vec::len).min().unwrap_or(0);
    (warmup as usize..trips)
        .map(|t| cpus.windows(2).filter(|w| w[0][t] != w[1][t]).count() as i64)
        .collect()
}

fn brigade_one_thread(f: &Flags) {
    let (n, iterations, warmup) = brigade_flags(f);
    let socket = transport(f);
    let timer = timer_overhead_ns();
    let before = status_of(&proc_status(), "VmRSS");
    let (mut head, first_rx) = link(socket);
    let mut rx = first_rx;
    let mut links = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (tx, next_rx) = link(socket);
        links.push((std::mem::replace(&mut rx, next_rx), tx));
    }
    let ready = status_of(&proc_status(), "VmRSS");
    let mut tail = rx;
    let mut wrong = 0;
    let mut samples = Vec::with_capacity(iterations as usize);
    let mut cpu = CpuTime::default();
    for i in 0..(warmup + iterations) {
        cpu.start_at(i, warmup);
        let byte = [(i % 251) as u8];
        let t0 = Instant::now();
        head.write_all(&byte).unwrap();
        let mut b = [0u8; 1];
        for (up, down) in links.iter_mut() {
            up.read_exact(&mut b).unwrap();
            down.write_all(&b).unwrap();
        }
        tail.read_exact(&mut b).unwrap();
        if i >= warmup {
            samples.push(t0.elapsed().as_nanos() as i64);
        }
        wrong += i64::from(b != byte);
    }
    let mut out = brigade_fields((n, iterations, warmup), timer, (before, ready), &samples,
                                 wrong, socket);
    out.extend(cpu.fields());
    emit("brigade", "one-thread", out);
}

async fn brigade(f: &Flags) -> Vec<(&'static str, J)> {
    let (n, iterations, warmup) = brigade_flags(f);
    let socket = transport(f);
    let timer = timer_overhead_ns();
    let before = status_of(&proc_status(), "VmRSS");
    let (mut head, first_rx) = async_link(socket);
    let mut rx = first_rx;
    let mut handles = Vec::new();
    for _ in 0..n {
        let (mut tx, next_rx) = async_link(socket);
        let mut mine = std::mem::replace(&mut rx, next_rx);
        handles.push(tokio::spawn(async move {
            let mut b = [0u8; 1];
            while mine.read_exact(&mut b).await.is_ok() {
                if tx.write_all(&b).await.is_err() {
                    break;
                }
            }
        }));
    }
    let ready = status_of(&proc_status(), "VmRSS");
    let mut tail = rx;
    let mut wrong = 0;
    let mut samples = Vec::with_capacity(iterations as usize);
    for i in 0..(warmup + iterations) {
        let byte = [(i % 251) as u8];
        let t0 = Instant::now();
        head.write_all(&byte).await.unwrap();
        let mut b = [0u8; 1];
        tail.read_exact(&mut b).await.unwrap();
        if i >= warmup {
            samples.push(t0.elapsed().as_nanos() as i64);
        }
        wrong += i64::from(b != byte);
    }
    drop(head);
    for h in handles {
        h.await.unwrap();
    }
    let mut out = brigade_fields((n, iterations, warmup), timer, (before, ready), &samples,
                                 wrong, socket);
    // the runtime's worker threads (current_thread: 1; multi-thread: one per usable CPU)
    let workers = tokio::runtime::Handle::current().metrics().num_workers();
    out.push(("workers", J::I(workers as i64)));
    out
}
