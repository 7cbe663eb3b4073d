//! The memory a process tree holds with each page counted once: the sum of its processes'
//! PSS (`Pss:` in /proc/PID/smaps_rollup), where a page shared by N processes counts 1/N
//! to each. Summed RSS counts a forked worker's shared pages once per process (a LiveKit
//! worker's job processes, gunicorn's or uvicorn's workers, all forked after the model
//! was loaded), so the RSS a call adds can be six times what it costs; its PSS is not.

use serde::Serialize;

/// Reading smaps_rollup walks each process's page tables (a tree of a few GB: a few ms),
/// so PSS is read at most 1 / this of a core (0.5 %, `paced`), and at most every 200 ms.
pub const PSS_SHARE_INVERSE: u32 = 200;
pub const PSS_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// A tree's PSS over a step, in KB: when load began and its highest reading.
/// Read less often than RSS (see [`PSS_SHARE_INVERSE`]), so its peak may miss a spike
/// between readings.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Pss {
    pub baseline_kb: u64,
    pub peak_kb: u64,
}

impl Pss {
    /// The first reading, the baseline; None where no process's PSS could be read.
    pub fn start(kb: Option<u64>) -> Option<Pss> {
        kb.map(|kb| Pss {
            baseline_kb: kb,
            peak_kb: kb,
        })
    }

    /// One more reading.
    pub fn took(&mut self, kb: u64) {
        self.peak_kb = self.peak_kb.max(kb);
    }

    /// The reading `kb` (taken as load begins) is the baseline, and the peak from here on.
    pub fn rebase(&mut self, kb: u64) {
        self.baseline_kb = kb;
        self.peak_kb = kb;
    }

    /// What a session added, each shared page counted once: (peak − baseline) / sessions.
    pub fn kb_per_session(&self, sessions: usize) -> f64 {
        self.peak_kb.saturating_sub(self.baseline_kb) as f64 / sessions.max(1) as f64
    }
}

/// The sum of the processes' PSS in KB; None when none could be read (gone, or another
/// user's).
pub fn tree_pss_kb(pids: &[u32]) -> Option<u64> {
    let each: Vec<u64> = pids.iter().filter_map(|p| process_pss_kb(*p)).collect();
    (!each.is_empty()).then(|| each.iter().sum())
}

fn process_pss_kb(pid: u32) -> Option<u64> {
    pss_of(&std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?)
}

/// The `Pss:` line of a smaps_rollup ("Pss:  1234 kB"), not `Pss_Anon:` and the like.
fn pss_of(rollup: &str) -> Option<u64> {
    rollup
        .lines()
        .find_map(|l| l.strip_prefix("Pss:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pss_line_is_read_not_its_parts() {
        let rollup = "55d0-7ffd ---p 00000000 00:00 0  [rollup]\nRss:  9000 kB\nPss:  1234 kB\nPss_Dirty:  800 kB\nPss_Anon:  700 kB\n";
        assert_eq!(pss_of(rollup), Some(1234));
        assert_eq!(pss_of("Rss: 10 kB\nPss_Anon: 5 kB\n"), None);
    }

    #[test]
    fn this_process_has_a_pss_and_a_gone_one_none() {
        let kb = tree_pss_kb(&[std::process::id()]).expect("our own smaps_rollup");
        assert!(kb > 100, "{kb} KB");
        assert_eq!(tree_pss_kb(&[u32::MAX - 1]), None);
    }

    #[test]
    fn a_session_costs_what_the_peak_added_over_the_baseline() {
        let mut p = Pss::start(Some(200_000)).unwrap();
        p.took(260_000);
        p.took(240_000);
        assert_eq!(p.peak_kb, 260_000);
        assert_eq!(p.kb_per_session(3), 20_000.0);
        p.rebase(250_000);
        assert_eq!(p.kb_per_session(1), 0.0);
    }
}
