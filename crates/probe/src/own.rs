//! Plimsoll's own CPU, by thread: what the kernel charged this process and each of its
//! threads (by name), and what the sampler spent reading the SUT's threads. A step adds
//! these up into the harness's parts (driver, mock, probe, orchestration).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The name of the sampler's thread: what a step counts as the probe's CPU.
pub const THREAD_NAME: &str = "plimsoll-probe";

/// CPU (ns) the sampler spent reading the SUT's threads one by one, over the process's
/// life (a step takes the difference).
static THREAD_READS_NS: AtomicU64 = AtomicU64::new(0);

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only into `ts`, a valid timespec.
    match unsafe { libc::clock_gettime(clock, &mut ts) } {
        0 => ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64,
        _ => 0,
    }
}

/// This process's CPU so far, ns: every thread's, the ones that have ended too.
pub fn process_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// The calling thread's CPU so far, ns.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Runs `f` (a read of the SUT's threads) and counts the CPU it took.
pub(crate) fn reading_threads<T>(f: impl FnOnce() -> T) -> T {
    let t0 = thread_cpu_ns();
    let out = f();
    THREAD_READS_NS.fetch_add(thread_cpu_ns().saturating_sub(t0), Relaxed);
    out
}

/// CPU (ns) spent reading the SUT's threads so far.
pub fn thread_reads_ns() -> u64 {
    THREAD_READS_NS.load(Relaxed)
}

/// Each living thread of this process: its name and its CPU so far, ns (from
/// `/proc/self/task/T/schedstat`, the kernel's own nanosecond count). Threads that have
/// ended are not here; their time is in [`process_cpu_ns`].
pub fn threads_cpu_ns() -> Vec<(String, u64)> {
    tasks_cpu_ns("/proc/self/task")
}

/// The same for another process of ours (a bench's null SUT): each living thread's name
/// and CPU so far, ns; empty when it is gone.
pub fn threads_cpu_ns_of(pid: u32) -> Vec<(String, u64)> {
    tasks_cpu_ns(&format!("/proc/{pid}/task"))
}

fn tasks_cpu_ns(tasks: &str) -> Vec<(String, u64)> {
    let Ok(dir) = std::fs::read_dir(tasks) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let p = e.path();
            let name = std::fs::read_to_string(p.join("comm")).ok()?;
            let stat = std::fs::read_to_string(p.join("schedstat")).ok()?;
            let ns = stat.split_whitespace().next()?.parse().ok()?;
            Some((name.trim_end().to_string(), ns))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_thread_is_charged_under_its_name() {
        let spin = std::thread::Builder::new()
            .name("plimsoll-own-t".into())
            .spawn(|| {
                let t0 = thread_cpu_ns();
                let mut x = 0u64;
                while thread_cpu_ns() - t0 < 50_000_000 {
                    x = x.wrapping_add(1);
                    std::hint::black_box(x);
                }
                threads_cpu_ns()
                    .into_iter()
                    .find(|(n, _)| n == "plimsoll-own-t")
                    .map(|(_, ns)| ns)
            })
            .unwrap();
        let ns = spin.join().unwrap().expect("the thread is listed by name");
        assert!((50_000_000..200_000_000).contains(&ns), "{ns}");
        assert!(process_cpu_ns() >= ns);
    }

    #[test]
    fn reading_threads_counts_its_cpu() {
        let before = thread_reads_ns();
        reading_threads(|| {
            let t0 = thread_cpu_ns();
            while thread_cpu_ns() - t0 < 5_000_000 {}
        });
        assert!(thread_reads_ns() - before >= 5_000_000);
    }
}
