//! One sample of a process tree from /proc.

use serde::Serialize;
use std::collections::HashMap;

/// Totals over a process and all its descendants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct TreeSample {
    pub processes: u32,
    pub rss_kb: u64,
    /// OS threads (`num_threads` of each process: green threads are not counted).
    pub threads: u64,
    /// User + system CPU time, in clock ticks.
    pub cpu_ticks: u64,
    pub fds: u64,
}

struct Stat {
    ppid: u32,
    threads: u64,
    cpu_ticks: u64,
    rss_pages: u64,
}

/// `/proc/PID/stat` sums the CPU time of every thread (O(threads) in the kernel: about
/// 1 ms at 10,000 threads); `/proc/PID/task/PID/stat` is the main thread's alone but
/// carries the same parent, thread count and RSS at a fixed cost of ~20 µs. `whole`
/// picks the first (only it has the process's CPU time).
fn read_stat_file(pid: u32, whole: bool) -> Option<Stat> {
    let path = if whole {
        format!("/proc/{pid}/stat")
    } else {
        format!("/proc/{pid}/task/{pid}/stat")
    };
    let text = std::fs::read_to_string(path).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = text.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    // After ')': state(0) ppid(1) … utime(11) stime(12) … num_threads(17) … rss(21).
    Some(Stat {
        ppid: num(1)? as u32,
        threads: num(17)?,
        cpu_ticks: num(11)? + num(12)?,
        rss_pages: num(21)?,
    })
}

/// A process's command line, argument by argument (empty when it is gone or a kernel
/// thread).
pub fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn count_fds(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count() as u64)
        .unwrap_or(0)
}

fn page_kb() -> u64 {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64) / 1024
}

pub fn clock_ticks_per_sec() -> f64 {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).max(1) as f64
}

fn read_stat(pid: u32) -> Option<Stat> {
    read_stat_file(pid, true)
}

/// CPU time (user + system, clock ticks) of one process alone, without its children.
pub fn process_cpu_ticks(pid: u32) -> u64 {
    read_stat(pid).map_or(0, |s| s.cpu_ticks)
}

/// The pids of `root` and all its descendants, found through each process's parent.
pub fn tree_pids(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if let Some(st) = read_stat_file(pid, false) {
                children.entry(st.ppid).or_default().push(pid);
            }
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        if let Some(kids) = children.get(&out[i]) {
            out.extend(kids);
        }
        i += 1;
    }
    out
}

/// Samples `root` and its descendants, CPU time and open descriptors included.
pub fn sample_tree(root: u32, with_fds: bool) -> TreeSample {
    sample_pids(&tree_pids(root), true, with_fds)
}

/// Samples the given processes. RSS and threads are always read (cheaply); CPU time
/// only `with_cpu` (it costs O(threads)); descriptors only `with_fds` (a directory
/// listing per process). Fields not read stay 0.
pub fn sample_pids(pids: &[u32], with_cpu: bool, with_fds: bool) -> TreeSample {
    sample_each(pids, with_cpu, with_fds).0
}

/// The same, with each process's CPU ticks (empty without `with_cpu`).
pub fn sample_each(pids: &[u32], with_cpu: bool, with_fds: bool) -> (TreeSample, Vec<(u32, u64)>) {
    let page = page_kb();
    let mut s = TreeSample::default();
    let mut each = Vec::new();
    for &pid in pids {
        if let Some(st) = read_stat_file(pid, with_cpu) {
            s.processes += 1;
            s.rss_kb += st.rss_pages * page;
            s.threads += st.threads;
            if with_cpu {
                s.cpu_ticks += st.cpu_ticks;
                each.push((pid, st.cpu_ticks));
            }
            if with_fds {
                s.fds += count_fds(pid);
            }
        }
    }
    (s, each)
}

/// CPU time of a changing set of processes, added up process by process: each counted
/// from the first sample (or from its start, when it was born after), and kept after it
/// is gone. A sum of whatever processes are alive now would drop a process's CPU when it
/// exits (a database backend when its client hangs up) and add a newcomer's past.
#[derive(Clone, Debug, Default)]
pub struct CpuAccount {
    seen: HashMap<u32, (u64, u64)>,
}

impl CpuAccount {
    /// Counting from these processes' CPU now.
    pub fn start(each: &[(u32, u64)]) -> CpuAccount {
        CpuAccount {
            seen: each.iter().map(|&(p, t)| (p, (t, t))).collect(),
        }
    }

    /// A later reading; processes not seen before are counted from their start.
    pub fn update(&mut self, each: &[(u32, u64)]) {
        for &(p, t) in each {
            let e = self.seen.entry(p).or_insert((0, 0));
            e.1 = e.1.max(t);
        }
    }

    /// Ticks used since the start.
    pub fn total(&self) -> u64 {
        self.seen.values().map(|(a, b)| b.saturating_sub(*a)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_of_processes_that_come_and_go_is_kept() {
        let mut a = CpuAccount::start(&[(1, 100), (2, 50)]);
        a.update(&[(1, 130), (2, 70), (3, 15)]);
        assert_eq!(a.total(), 30 + 20 + 15);
        // 2 exited, 3 went on: what 2 used stays counted.
        a.update(&[(1, 140), (3, 40)]);
        assert_eq!(a.total(), 40 + 20 + 40);
    }

    #[test]
    fn samples_a_child_tree() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & sleep 5 & wait"])
            .spawn()
            .unwrap();
        // Sampled until sh has forked both sleeps: at once on a quiet machine, maybe not
        // within a fixed 200 ms on a busy one; a tree that never shows them fails at 10 s.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut s = sample_tree(child.id(), true);
        while s.processes < 3 && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
            s = sample_tree(child.id(), true);
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(s.processes, 3, "sh and two sleeps: {s:?}");
        assert!(s.threads >= 3 && s.rss_kb > 0 && s.fds >= 3, "{s:?}");
    }

    #[test]
    fn counts_this_process_threads() {
        let me = std::process::id();
        // The four threads live until the sample is taken (a barrier, not a 300 ms sleep
        // that a busy machine could outlast before sampling).
        let gate = std::sync::Arc::new(std::sync::Barrier::new(5));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let gate = gate.clone();
                std::thread::spawn(move || {
                    gate.wait();
                })
            })
            .collect();
        let s = sample_tree(me, false);
        gate.wait();
        assert!(s.threads >= 5, "{s:?}");
        for h in handles {
            h.join().unwrap();
        }
    }
}

/// Nanoseconds the given processes' threads have spent runnable but waiting for a CPU
/// (the second field of `/proc/PID/task/TID/schedstat`), summed. Threads that exited
/// during a step take their share with them, so this reads low for a SUT that starts a
/// thread per request.
pub fn run_queue_wait_ns(pids: &[u32]) -> u64 {
    let mut total = 0u64;
    for pid in pids {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let text = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
            total += wait_of(&text).unwrap_or(0);
        }
    }
    total
}

/// The run-queue wait of one `schedstat` line: `<on-cpu ns> <waiting ns> <timeslices>`.
fn wait_of(schedstat: &str) -> Option<u64> {
    schedstat.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod schedstat_tests {
    #[test]
    fn the_wait_is_the_second_field() {
        assert_eq!(super::wait_of("123456 7890 12\n"), Some(7890));
        assert_eq!(super::wait_of(""), None);
        assert_eq!(super::run_queue_wait_ns(&[u32::MAX]), 0, "no such process");
        // This very thread's line reads, where the kernel keeps schedstats.
        if let Ok(line) = std::fs::read_to_string("/proc/thread-self/schedstat") {
            assert!(super::wait_of(&line).is_some(), "{line:?}");
        }
    }
}
