//! Tokens in flight (threadcost notebook 09) on Tokio tasks: K tokens circulate among
//! N tasks joined in a ring of N Unix socket pairs; task i reads one 8-byte token from
//! channel i, counts its hops down and, unless that was its last hop, writes it on
//! channel i + 1. One event = one token handled. For each entry of the sweep the driver
//! puts K tokens in (spread over the ring) and times them until the last is retired;
//! getrusage counts the process's context switches over the same window.

use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream as StdStream;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::sync::mpsc;

use crate::util::{emit, fail, Flags, J};

const STOP: u32 = u32::MAX;

#[derive(Default)]
struct Counts {
    events: AtomicI64,
    reads: AtomicI64,
    writes: AtomicI64,
    _pad: [i64; 5],
}

struct Shared {
    counts: Vec<Counts>,
    retired: AtomicI64,
    target: AtomicI64,
}

fn list(f: &Flags, name: &str) -> Vec<i64> {
    f.text(name, "1")
        .split(',')
        .map(|s| s.trim().parse::<i64>().ok().filter(|v| *v >= 1)
            .unwrap_or_else(|| fail(&format!("-{name}: a list of positive integers"))))
        .collect()
}

fn switches() -> (i64, i64, i64) {
    // SAFETY: getrusage fills the zeroed struct it is given; nothing else reads it.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut ru) != 0 {
            return (0, 0, 0);
        }
        let cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1_000_000_000
            + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
        (ru.ru_nvcsw, ru.ru_nivcsw, cpu)
    }
}

fn sums(s: &Shared) -> (i64, i64, i64) {
    s.counts.iter().fold((0, 0, 0), |a, c| {
        (a.0 + c.events.load(Ordering::Relaxed), a.1 + c.reads.load(Ordering::Relaxed),
         a.2 + c.writes.load(Ordering::Relaxed))
    })
}

/// One 8-byte token written whole on a non-blocking socket (retried while it is full).
fn put(fd: RawFd, token: &[u8; 8]) -> bool {
    loop {
        // SAFETY: fd is an open socket of this process; token is 8 readable bytes.
        let w = unsafe { libc::write(fd, token.as_ptr().cast(), token.len()) };
        if w == 8 {
            return true;
        }
        let err = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        if w >= 0 || (err != libc::EAGAIN && err != libc::EINTR) {
            return false;
        }
        std::thread::yield_now();
    }
}

pub fn run(kind: &str, f: &Flags) {
    let mut b = if kind == "tokio-ct" {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let rt = b.enable_all().build().unwrap_or_else(|e| fail(&format!("runtime: {e}")));
    let fields = rt.block_on(ring(f));
    emit("readiness", kind, fields);
    std::process::exit(0); // the tasks, waiting in their reads, end with the process
}

async fn ring(f: &Flags) -> Vec<(&'static str, J)> {
    let want = f.int("tasks", 100, 2) as usize;
    let (ks, hs) = (list(f, "tokens"), list(f, "hops"));
    let timeout = Duration::from_millis(f.int("timeout-ms", 10_000, 1) as u64);
    if ks.len() != hs.len() {
        fail("-tokens and -hops: as many of each");
    }
    let mut limit = J::S(String::new());
    let mut errno = 0i64;
    let (mut readers, mut writers, mut inject) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..want {
        match StdStream::pair() {
            Ok((w, r)) => {
                for s in [&w, &r] {
                    s.set_nonblocking(true).unwrap_or_else(|e| fail(&format!("{e}")));
                }
                // the driver puts tokens in through the same fd (no dup: a task needs
                // 2 fds, as in the C models); it stays open until the process ends
                inject.push(w.as_raw_fd());
                readers.push(r);
                writers.push(w);
            }
            Err(e) => {
                errno = i64::from(e.raw_os_error().unwrap_or(0));
                if errno == i64::from(libc::EMFILE) || errno == i64::from(libc::ENFILE) {
                    limit = J::S("fds".to_string());
                } else {
                    fail(&format!("socketpair: {e}"));
                }
                let keep = readers.len().saturating_sub(8).max(1);
                readers.truncate(keep);
                writers.truncate(keep);
                inject.truncate(keep);
                break;
            }
        }
    }
    let n = readers.len();
    let shared = Arc::new(Shared {
        counts: (0..n).map(|_| Counts::default()).collect(),
        retired: AtomicI64::new(0),
        target: AtomicI64::new(0),
    });
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<()>();
    writers.rotate_left(1); // task i writes channel i + 1
    for (i, (r, w)) in readers.into_iter().zip(writers).enumerate() {
        let (s, done) = (shared.clone(), done_tx.clone());
        let mut r = UnixStream::from_std(r).unwrap_or_else(|e| fail(&format!("{e}")));
        let mut w = UnixStream::from_std(w).unwrap_or_else(|e| fail(&format!("{e}")));
        tokio::spawn(async move {
            let mut buf = [0u8; 8];
            let c = &s.counts[i];
            while r.read_exact(&mut buf).await.is_ok() {
                c.reads.fetch_add(1, Ordering::Relaxed);
                let left = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]);
                if left == STOP || left == 0 {
                    break;
                }
                c.events.fetch_add(1, Ordering::Relaxed);
                if left == 1 {
                    if s.retired.fetch_add(1, Ordering::AcqRel) + 1 == s.target.load(Ordering::Acquire) {
                        let _ = done.send(());
                    }
                    continue;
                }
                buf[0..4].copy_from_slice(&(left - 1).to_le_bytes());
                c.writes.fetch_add(1, Ordering::Relaxed);
                if w.write_all(&buf).await.is_err() {
                    break;
                }
            }
        });
    }
    let mut points = Vec::new();
    let mut timed_out = false;
    let entries: Vec<(i64, i64)> =
        std::iter::once((n as i64, 1)).chain(ks.iter().copied().zip(hs.iter().copied())).collect();
    for (e, (k, hops)) in entries.into_iter().enumerate() {
        let k = k.min(n as i64);
        shared.retired.store(0, Ordering::Release);
        shared.target.store(k, Ordering::Release);
        let (e0, r0, w0) = sums(&shared);
        let (v0, i0, c0) = switches();
        let start = Instant::now();
        let mut token = [0u8; 8];
        token[0..4].copy_from_slice(&(hops as u32).to_le_bytes());
        for j in 0..k {
            let at = (j * n as i64 / k) as usize;
            if !put(inject[at], &token) {
                fail("readiness: a write putting a token in failed");
            }
        }
        if tokio::time::timeout(timeout, done_rx.recv()).await.is_err() {
            timed_out = true;
            break;
        }
        let wall = start.elapsed().as_nanos() as i64;
        let (v1, i1, c1) = switches();
        let (e1, r1, w1) = sums(&shared);
        if e == 0 {
            continue; // the warm-up: every task one token, one hop
        }
        points.push(J::O(vec![
            ("tokens", J::I(k)), ("hops", J::I(hops)), ("events", J::I(e1 - e0)),
            ("retired", J::I(k)), ("wall_ns", J::I(wall)), ("cpu_ns", J::I(c1 - c0)),
            ("reads", J::I(r1 - r0)), ("empty_reads", J::I(0)), ("writes", J::I(w1 - w0 + k)),
            ("waits", J::I(0)), ("wait_events", J::I(0)), ("voluntary", J::I(v1 - v0)),
            ("involuntary", J::I(i1 - i0)),
        ]));
    }
    vec![("tasks_ready", J::I(n as i64)), ("limit", limit), ("errno", J::I(errno)),
         ("timed_out", J::I(i64::from(timed_out))), ("points", J::A(points))]
}
