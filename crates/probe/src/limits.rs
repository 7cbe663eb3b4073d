//! What the box lets a process have, read once when sampling starts: threads (the
//! kernel's `threads-max`, and its cgroup's `pids.max` when it is in one with a limit)
//! and open files (its soft `RLIMIT_NOFILE`, from `/proc/PID/limits`). Growth per session
//! runs into these.

/// The smaller of the kernel's and the cgroup's thread limits, and the open files.
pub fn of(pid: u32, cgroup_dir: Option<&std::path::Path>) -> result::BoxLimits {
    let read = |p: &std::path::Path| std::fs::read_to_string(p).ok();
    let kernel = read(std::path::Path::new("/proc/sys/kernel/threads-max"))
        .and_then(|t| t.trim().parse::<u64>().ok());
    let pids_max = cgroup_dir
        .and_then(|d| read(&d.join("pids.max")))
        .and_then(|t| t.trim().parse::<u64>().ok());
    let threads = match (kernel, pids_max) {
        (Some(k), Some(p)) => Some(k.min(p)),
        (k, p) => k.or(p),
    };
    let open_files =
        read(std::path::Path::new(&format!("/proc/{pid}/limits"))).and_then(|t| open_files(&t));
    result::BoxLimits {
        threads,
        open_files,
    }
}

/// The soft limit on the "Max open files" line of a `/proc/PID/limits` text.
fn open_files(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_open_files_limit_and_the_kernel_s_threads() {
        let text = "Limit                     Soft Limit           Hard Limit           Units\nMax processes             95413                95413                processes\nMax open files            1024                 1048576              files\n";
        assert_eq!(open_files(text), Some(1024));
        assert_eq!(open_files("nothing"), None);
        let me = of(std::process::id(), None);
        assert!(
            me.threads.is_some_and(|t| t > 0) && me.open_files.is_some_and(|f| f > 0),
            "{me:?}"
        );
    }
}
