//! The few /proc and rlimit readings the benchmark needs.

/// CPU time of a process, in seconds: (user, system).
pub fn cpu_seconds(pid: u32) -> std::io::Result<(f64, f64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the parenthesised command name; utime and stime are 14 and 15.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    let hz = probe::tree::clock_ticks_per_sec();
    Ok((ticks(11) / hz.max(1.0), ticks(12) / hz.max(1.0)))
}

/// Resident set size of a process, in KiB.
pub fn rss_kb(pid: u32) -> std::io::Result<u64> {
    let s = probe::tree::sample_pids(&[pid], false, false);
    if s.processes == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("process {pid} is gone"),
        ));
    }
    Ok(s.rss_kb)
}
