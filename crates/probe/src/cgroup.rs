//! Memory figures of the cgroup the SUT runs in — when that cgroup is the SUT's own.
//!
//! A process always sits in some cgroup, often one shared with everything else on the
//! machine (or with Plimsoll itself); its figures would describe the neighbours too. So
//! the figures are read only when every process in the cgroup belongs to the SUT's
//! tree. cgroup v2 (`memory.current`, `memory.peak`, `memory.events`) and v1
//! (`memory.usage_in_bytes`, `memory.max_usage_in_bytes`, `memory.oom_control`), and from
//! `memory.stat` the two kinds apart: anonymous memory (the processes' own heaps and
//! stacks, each page once however many processes map it) and file pages (the page cache,
//! which the kernel takes back under pressure).

use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CgroupMemory {
    /// The cgroup directory read.
    pub path: PathBuf,
    pub version: u8,
    pub current_kb: u64,
    /// The cgroup's own high-water mark (or the highest current value seen).
    pub peak_kb: u64,
    /// OOM kills the kernel counted in this cgroup.
    pub oom_kills: u64,
    /// The highest anonymous memory read (`memory.stat`: v2 `anon`, v1 `total_rss`).
    pub anon_kb: Option<u64>,
    /// The highest file-backed memory read (v2 `file`, v1 `total_cache`).
    pub file_kb: Option<u64>,
}

/// `memory.stat`'s anonymous and file-backed bytes, in KB.
fn stat_kb(dir: &Path, version: u8) -> (Option<u64>, Option<u64>) {
    let stat = dir.join("memory.stat");
    let (anon, file) = if version == 1 {
        ("total_rss ", "total_cache ")
    } else {
        ("anon ", "file ")
    };
    (
        keyed(&stat, anon).map(|b| b / 1024),
        keyed(&stat, file).map(|b| b / 1024),
    )
}

impl CgroupMemory {
    /// This reading with the highest marks of an earlier one kept.
    pub fn with_highs_of(mut self, earlier: &CgroupMemory) -> Self {
        self.peak_kb = self.peak_kb.max(earlier.peak_kb);
        self.anon_kb = self.anon_kb.max(earlier.anon_kb);
        self.file_kb = self.file_kb.max(earlier.file_kb);
        self
    }
}

fn read_u64(p: &Path) -> Option<u64> {
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

fn keyed(p: &Path, key: &str) -> Option<u64> {
    std::fs::read_to_string(p)
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(key).and_then(|v| v.trim().parse().ok()))
}

/// The memory cgroup directory of `pid`: (version, directory).
fn memory_cgroup_dir(pid: u32) -> Option<(u8, PathBuf)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let rel = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "memory") {
            let dir = Path::new("/sys/fs/cgroup/memory").join(rel);
            if dir.join("memory.usage_in_bytes").exists() {
                return Some((1, dir));
            }
        }
        if controllers.is_empty() {
            for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                let dir = Path::new(root).join(rel);
                if dir.join("memory.current").exists() {
                    return Some((2, dir));
                }
            }
        }
    }
    None
}

/// Reads a known cgroup's figures again, members or not (after the SUT has ended, to
/// catch an OOM kill that came after the last sample). Keeps the higher peak.
pub fn reread(known: &CgroupMemory) -> CgroupMemory {
    let dir = &known.path;
    let (current, peak, ooms) = if known.version == 1 {
        (
            read_u64(&dir.join("memory.usage_in_bytes")),
            read_u64(&dir.join("memory.max_usage_in_bytes")),
            keyed(&dir.join("memory.oom_control"), "oom_kill "),
        )
    } else {
        (
            read_u64(&dir.join("memory.current")),
            read_u64(&dir.join("memory.peak")),
            keyed(&dir.join("memory.events"), "oom_kill "),
        )
    };
    CgroupMemory {
        path: dir.clone(),
        version: known.version,
        current_kb: current.map_or(known.current_kb, |c| c / 1024),
        peak_kb: known.peak_kb.max(peak.unwrap_or(0) / 1024),
        oom_kills: ooms.unwrap_or(known.oom_kills).max(known.oom_kills),
        // What the stat says once the SUT has gone is not its high mark: kept as read.
        anon_kb: known.anon_kb,
        file_kb: known.file_kb,
    }
}

/// The SUT's cgroup memory, if `root`'s memory cgroup holds only `tree` processes.
pub fn sut_cgroup(root: u32, tree: &[u32]) -> Option<CgroupMemory> {
    let (version, dir) = memory_cgroup_dir(root)?;
    let procs = std::fs::read_to_string(dir.join("cgroup.procs")).ok()?;
    let members: Vec<u32> = procs
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    if members.is_empty() || !members.iter().all(|p| tree.contains(p)) {
        return None;
    }
    let (current, peak, ooms) = if version == 1 {
        (
            read_u64(&dir.join("memory.usage_in_bytes"))?,
            read_u64(&dir.join("memory.max_usage_in_bytes")).unwrap_or(0),
            keyed(&dir.join("memory.oom_control"), "oom_kill ").unwrap_or(0),
        )
    } else {
        (
            read_u64(&dir.join("memory.current"))?,
            read_u64(&dir.join("memory.peak")).unwrap_or(0),
            keyed(&dir.join("memory.events"), "oom_kill ").unwrap_or(0),
        )
    };
    let (anon_kb, file_kb) = stat_kb(&dir, version);
    Some(CgroupMemory {
        path: dir,
        version,
        current_kb: current / 1024,
        peak_kb: peak.max(current) / 1024,
        oom_kills: ooms,
        anon_kb,
        file_kb,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Needs root and a writable cgroup v1 memory hierarchy (this project's machines have
    /// one); elsewhere it says so and checks only the shared-cgroup rule.
    #[test]
    fn reads_a_dedicated_cgroup_and_ignores_a_shared_one() {
        // Plimsoll's own cgroup is shared with this test process: never reported for a child.
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        assert_eq!(sut_cgroup(child.id(), &[child.id()]), None);
        let _ = child.kill();
        let _ = child.wait();

        let dir = PathBuf::from(format!(
            "/sys/fs/cgroup/memory/plimsoll-probe-test-{}",
            std::process::id()
        ));
        if std::fs::create_dir(&dir).is_err() {
            eprintln!("no writable cgroup v1 memory hierarchy here; skipping the dedicated case");
            return;
        }
        // 8 MB of its own written (anonymous memory), then asleep: one process in the cgroup.
        let script = format!(
            "echo $$ > {}/cgroup.procs && exec python3 -c \"x = b'a' * 8000000; import time; time.sleep(5)\"",
            dir.display()
        );
        let mut sut = std::process::Command::new("sh")
            .args(["-c", &script])
            .spawn()
            .unwrap();
        // Read until sh has joined the cgroup: at once on a quiet machine, maybe not within
        // a fixed 200 ms on a busy one; a cgroup never read fails at 10 s.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut got = sut_cgroup(sut.id(), &[sut.id()]);
        let filled = |g: &Option<CgroupMemory>| g.as_ref().and_then(|g| g.anon_kb) > Some(4000);
        while !filled(&got) && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
            got = sut_cgroup(sut.id(), &[sut.id()]);
        }
        let _ = sut.kill();
        let _ = sut.wait();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let _ = std::fs::remove_dir(&dir);
        let got = got.expect("the dedicated cgroup is read");
        assert_eq!(got.version, 1);
        assert!(
            got.current_kb > 0 && got.peak_kb >= got.current_kb && got.oom_kills == 0,
            "{got:?}"
        );
        // Python's 8 MB (and its interpreter's own) are anonymous memory, apart from the
        // page cache its files came through.
        assert!(got.anon_kb > Some(4000) && got.file_kb.is_some(), "{got:?}");
    }
}
