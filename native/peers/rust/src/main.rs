//! tcpeers-rust: threadcost's Rust peer. One named workload per run, on one
//! runtime (`-runtime thread`, `tokio-ct` for Tokio's current_thread runtime,
//! `tokio-mt` for its multi-thread runtime); one JSON object on stdout; errors
//! on stderr with exit status 2. The flags and fields follow the Go peer's.

mod readiness;
mod tasks;
mod threads;
mod util;

use util::{fail, Flags};

const RUNTIMES: [&str; 3] = ["thread", "tokio-ct", "tokio-mt"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(program) = args.first() else {
        fail("usage: tcpeers-rust sleepers|million|pingpong|launch|memory|brigade -runtime thread|tokio-ct|tokio-mt [flags]")
    };
    let flags = Flags::parse(&args[1..]);
    let runtime = flags.text("runtime", "thread");
    if !RUNTIMES.contains(&runtime.as_str()) {
        fail(&format!("-runtime {runtime:?}: one of thread, tokio-ct, tokio-mt"));
    }
    if program == "readiness" && runtime != "thread" {
        readiness::run(&runtime, &flags)
    } else if runtime == "thread" {
        threads::dispatch(program, &flags)
    } else {
        tasks::dispatch(program, &runtime, &flags)
    }
}
