//! The machine's CPU time on given cores, from `/proc/stat`: time spent busy (user, nice,
//! system, irq, softirq) and stolen by a hypervisor, in clock ticks. Beside the SUT's own
//! CPU time it tells what else ran on the SUT's cores during a step — another process,
//! another VM — which the SUT's own figures cannot show: its threads were runnable and
//! waiting while something else held the core.

/// Busy and stolen ticks summed over a set of cores.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ticks {
    pub busy: u64,
    pub steal: u64,
}

/// One `cpuN ...` line: (N, busy, steal).
fn parse_line(line: &str) -> Option<(usize, u64, u64)> {
    let mut words = line.split_whitespace();
    let cpu = words.next()?.strip_prefix("cpu")?.parse::<usize>().ok()?;
    let v: Vec<u64> = words.filter_map(|w| w.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal guest guest_nice (guest is in user)
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    Some((cpu, at(0) + at(1) + at(2) + at(5) + at(6), at(7)))
}

/// Busy and stolen ticks of `cores` in a `/proc/stat` text (every core when empty).
pub fn ticks_in(stat: &str, cores: &[usize]) -> Ticks {
    let mut t = Ticks::default();
    for (cpu, busy, steal) in stat.lines().filter_map(parse_line) {
        if cores.is_empty() || cores.contains(&cpu) {
            t.busy += busy;
            t.steal += steal;
        }
    }
    t
}

/// Busy and stolen ticks of `cores` now.
pub fn ticks(cores: &[usize]) -> Ticks {
    ticks_in(
        &std::fs::read_to_string("/proc/stat").unwrap_or_default(),
        cores,
    )
}

/// The cores a process may run on (`Cpus_allowed_list` of `/proc/PID/status`).
pub fn allowed_cores(pid: u32) -> Vec<usize> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| parse_list(v.trim()))
        .unwrap_or_default()
}

/// `0-2,5` → [0, 1, 2, 5].
pub fn parse_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<usize>().ok()),
        }
    }
    out
}

/// What other processes used of the machine over `over`: the busy share of all its
/// cores less this process's own CPU, in cores (0.5: half a core). A check before load.
pub fn others_now(over: std::time::Duration) -> f64 {
    let me = std::process::id();
    let own = || crate::tree::process_cpu_ticks(me);
    let (t0, o0) = (ticks(&[]), own());
    std::thread::sleep(over);
    let (t1, o1) = (ticks(&[]), own());
    let hz = crate::tree::clock_ticks_per_sec();
    let others = (t1.busy.saturating_sub(t0.busy)).saturating_sub(o1.saturating_sub(o0));
    others as f64 / hz / over.as_secs_f64().max(1e-3)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 0 50 1000 0 0 0 0 0 0
cpu0 10 1 4 500 3 2 1 7 0 0
cpu1 90 0 46 500 0 0 0 2 0 0
intr 12345
";

    #[test]
    fn busy_and_steal_are_read_per_core() {
        assert_eq!(ticks_in(STAT, &[0]), Ticks { busy: 18, steal: 7 });
        assert_eq!(
            ticks_in(STAT, &[1]),
            Ticks {
                busy: 136,
                steal: 2
            }
        );
        assert_eq!(
            ticks_in(STAT, &[]),
            Ticks {
                busy: 154,
                steal: 9
            },
            "every core"
        );
        assert_eq!(parse_list("0-2,5"), vec![0, 1, 2, 5]);
        assert_eq!(parse_list(""), Vec::<usize>::new());
        assert!(!allowed_cores(std::process::id()).is_empty());
    }
}
