//! Pressure stall information (PSI): how long tasks waited for a CPU. Read from the SUT's
//! own cgroup (`cpu.pressure`, cgroup v2) when it has one, else for the whole machine
//! (`/proc/pressure/cpu`), where the kernel offers it.

use std::path::Path;

/// The `some … total=` microseconds of a PSI file: time in which at least one task
/// waited for a CPU.
pub fn some_total_us(file: &Path) -> Option<u64> {
    parse_some_total(&std::fs::read_to_string(file).ok()?)
}

fn parse_some_total(text: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with("some "))?
        .split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_the_some_total() {
        let t = "some avg10=1.00 avg60=0.50 avg300=0.10 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(super::parse_some_total(t), Some(123456));
        assert_eq!(super::parse_some_total("nonsense"), None);
    }
}
