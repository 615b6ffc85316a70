//! Shared plumbing: flags, /proc readings, rusage and a tiny JSON writer.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Instant;

/// Print a message on stderr and leave with status 2 (the peer contract).
pub fn fail(msg: &str) -> ! {
    eprintln!("tcpeers-rust: {msg}");
    std::process::exit(2)
}

/// `-name value` flags, as the Go peer takes them.
pub struct Flags(HashMap<String, String>);

impl Flags {
    pub fn parse(args: &[String]) -> Flags {
        let mut map = HashMap::new();
        let mut i = 0;
        while i < args.len() {
            let name = args[i].trim_start_matches('-').to_string();
            if !args[i].starts_with('-') || name.is_empty() {
                fail(&format!("unexpected argument {:?}", args[i]));
            }
            if name == "gate" {
                map.insert(name, "1".to_string());
                i += 1;
                continue;
            }
            match args.get(i + 1) {
                Some(v) => map.insert(name, v.clone()),
                None => fail(&format!("flag -{name} needs a value")),
            };
            i += 2;
        }
        Flags(map)
    }

    pub fn int(&self, name: &str, default: i64, minimum: i64) -> i64 {
        let v = match self.0.get(name) {
            Some(s) => s.parse::<i64>().unwrap_or_else(|_| fail(&format!("-{name} {s:?}: not an integer"))),
            None => default,
        };
        if v < minimum {
            fail(&format!("-{name} {v}: must be at least {minimum}"));
        }
        v
    }

    pub fn text(&self, name: &str, default: &str) -> String {
        self.0.get(name).cloned().unwrap_or_else(|| default.to_string())
    }

    pub fn flag(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }
}

/// The kB fields of /proc/self/status the peers report (and the thread count).
pub fn proc_status() -> HashMap<String, i64> {
    let mut out = HashMap::new();
    if let Ok(text) = std::fs::read_to_string("/proc/self/status") {
        for line in text.lines() {
            if let Some((name, rest)) = line.split_once(':') {
                if matches!(name, "VmSize" | "VmRSS" | "RssAnon" | "VmHWM" | "Threads" | "VmPTE") {
                    if let Some(Ok(v)) = rest.split_whitespace().next().map(str::parse::<i64>) {
                        out.insert(name.to_string(), v);
                    }
                }
            }
        }
    }
    out
}

pub fn status_of(s: &HashMap<String, i64>, name: &str) -> i64 {
    s.get(name).copied().unwrap_or(0)
}

/// The largest VmRSS, VmSize, Threads and VmPTE (the process's page tables, KiB)
/// of /proc/self/status read so far: sampled once every task exists, at the gate,
/// then every period while they run.
#[derive(Default)]
pub struct Peaks {
    pub rss: i64,
    pub vsz: i64,
    pub threads: i64,
    pub page_tables: i64,
}

impl Peaks {
    pub fn sample(&mut self) {
        let s = proc_status();
        self.rss = self.rss.max(status_of(&s, "VmRSS"));
        self.vsz = self.vsz.max(status_of(&s, "VmSize"));
        self.threads = self.threads.max(status_of(&s, "Threads"));
        self.page_tables = self.page_tables.max(status_of(&s, "VmPTE"));
    }

    /// The sleepers fields of these peaks (with the readings before the first spawn).
    pub fn fields(&self, before: &HashMap<String, i64>) -> Vec<(&'static str, J)> {
        vec![
            ("rss_before_kib", J::I(status_of(before, "VmRSS"))),
            ("vsz_before_kib", J::I(status_of(before, "VmSize"))),
            ("page_tables_before_kib", J::I(status_of(before, "VmPTE"))),
            ("peak_rss_kib", J::I(self.rss)), ("peak_vsz_kib", J::I(self.vsz)),
            ("peak_threads", J::I(self.threads)),
            ("peak_page_tables_kib", J::I(self.page_tables)),
        ]
    }
}

/// User and system CPU time (µs) and ru_maxrss (KiB) of this process.
pub fn rusage() -> (i64, i64, i64) {
    // SAFETY: getrusage fills the zeroed struct it is given; nothing else reads it.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut ru) != 0 {
            return (-1, -1, -1);
        }
        (
            ru.ru_utime.tv_sec * 1_000_000 + ru.ru_utime.tv_usec,
            ru.ru_stime.tv_sec * 1_000_000 + ru.ru_stime.tv_usec,
            ru.ru_maxrss,
        )
    }
}

/// Median cost of one `Instant::now()`.
pub fn timer_overhead_ns() -> i64 {
    let mut d: Vec<i64> = (0..10_001)
        .map(|_| {
            let a = Instant::now();
            let b = Instant::now();
            b.duration_since(a).as_nanos() as i64
        })
        .collect();
    d.sort_unstable();
    d[d.len() / 2]
}

pub fn rustc_version() -> &'static str {
    env!("TCPEERS_RUSTC_VERSION")
}

/// One JSON value, enough for the peer contract.
pub enum J {
    I(i64),
    S(String),
    A(Vec<J>),
    O(Vec<(&'static str, J)>),
}

impl J {
    pub fn ints(v: &[i64]) -> J {
        J::A(v.iter().map(|x| J::I(*x)).collect())
    }

    fn write(&self, out: &mut String) {
        match self {
            J::I(v) => write!(out, "{v}").unwrap(),
            J::S(s) => {
                out.push('"');
                for c in s.chars() {
                    match c {
                        '"' => out.push_str("\\\""),
                        '\\' => out.push_str("\\\\"),
                        c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).unwrap(),
                        c => out.push(c),
                    }
                }
                out.push('"');
            }
            J::A(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            J::O(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    J::S((*k).to_string()).write(out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// Print the run's one JSON object, with the fields every peer reports first.
pub fn emit(program: &str, runtime: &str, mut fields: Vec<(&'static str, J)>) {
    let mut all = vec![
        ("program", J::S(program.to_string())),
        ("language", J::S("rust".to_string())),
        ("runtime", J::S(runtime.to_string())),
        ("version", J::S(rustc_version().to_string())),
    ];
    all.append(&mut fields);
    let mut out = String::new();
    J::O(all).write(&mut out);
    println!("{out}");
}
