//! Processes Plimsoll does not start (a database, a broker, a sidecar), found again at
//! every sample: by a pid file, by a pattern on their command line, or by a cgroup.

use std::path::{Path, PathBuf};

/// How to find the processes of a `[[probe]]`.
#[derive(Clone, Debug)]
pub enum Target {
    /// The process whose pid the file holds, and its descendants.
    PidFile(PathBuf),
    /// Every process whose command line (arguments joined by spaces) matches, and their
    /// descendants; never Plimsoll itself or what it started.
    Pattern(regex::Regex),
    /// Every process in this cgroup directory (`cgroup.procs`).
    Cgroup(PathBuf),
}

impl Target {
    /// The processes it names now (none when the file, the cgroup or a match is gone).
    pub fn pids(&self) -> Vec<u32> {
        let roots = match self {
            Target::PidFile(f) => read_pid(f).into_iter().collect(),
            Target::Pattern(re) => matching(re),
            Target::Cgroup(dir) => return procs(dir),
        };
        let mut out: Vec<u32> = Vec::new();
        for r in roots {
            if !out.contains(&r) {
                out.extend(crate::tree::tree_pids(r));
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// What it looks for, in words ("pid file /run/x.pid").
    pub fn describe(&self) -> String {
        match self {
            Target::PidFile(f) => format!("pid file {}", f.display()),
            Target::Pattern(re) => format!("command lines matching {:?}", re.as_str()),
            Target::Cgroup(d) => format!("cgroup {}", d.display()),
        }
    }
}

fn read_pid(file: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(file).ok()?;
    let pid: u32 = text.lines().next()?.trim().parse().ok()?;
    Path::new(&format!("/proc/{pid}")).exists().then_some(pid)
}

fn procs(dir: &Path) -> Vec<u32> {
    let text = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    let mut v: Vec<u32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    v.sort_unstable();
    v
}

/// Processes whose command line matches, leaving out Plimsoll and its own descendants
/// (the pattern is on Plimsoll's own command line, its watchdog's, its SUT's).
fn matching(re: &regex::Regex) -> Vec<u32> {
    let me = std::process::id();
    let mine = crate::tree::tree_pids(me);
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if mine.contains(&pid) || watchdog_of(pid, me) {
            continue;
        }
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let line = String::from_utf8_lossy(&raw)
            .trim_end_matches('\0')
            .replace('\0', " ");
        if !line.is_empty() && re.is_match(&line) {
            out.push(pid);
        }
    }
    out
}

/// Plimsoll's watchdog is its parent's child too: known by its `__watchdog` argument.
fn watchdog_of(pid: u32, me: u32) -> bool {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw).contains("__watchdog")
        && std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.contains(&format!(" {me} ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_process_by_pid_file_and_by_pattern_but_never_itself() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "exec sleep 7.654321"])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let pid = child.id();
        let file = std::env::temp_dir().join(format!("plimsoll-pidfile-{}", std::process::id()));
        std::fs::write(&file, format!("{pid}\n")).unwrap();
        assert_eq!(Target::PidFile(file.clone()).pids(), vec![pid]);
        // The test process is this sleep's parent: it is left out as Plimsoll would be,
        // so the pattern finds it only when asked from elsewhere. Its own line matches:
        let re = regex::Regex::new(r"sleep 7\.654321").unwrap();
        let found = Target::Pattern(re).pids();
        assert!(
            found.is_empty(),
            "a descendant of Plimsoll is not external: {found:?}"
        );
        let _ = child.kill();
        let _ = child.wait();
        assert!(Target::PidFile(file.clone()).pids().is_empty(), "gone");
        let _ = std::fs::remove_file(&file);
        assert!(Target::Cgroup("/no/such/cgroup".into()).pids().is_empty());
    }

    #[test]
    fn a_cgroup_names_its_members_from_cgroup_procs() {
        // A cgroup directory as the kernel shows it: its members, a pid a line.
        let dir = std::env::temp_dir().join(format!("plimsoll-cg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let me = std::process::id();
        std::fs::write(dir.join("cgroup.procs"), format!("{me}\n1\n")).unwrap();
        let t = Target::Cgroup(dir.clone());
        assert_eq!(t.pids(), vec![1, me]);
        assert_eq!(t.describe(), format!("cgroup {}", dir.display()));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_pattern_finds_a_process_plimsoll_did_not_start() {
        // A process reparented away from us: sh starts it in the background and exits.
        let marker = format!("sleep 6.{}", std::process::id());
        let status = std::process::Command::new("sh")
            .args(["-c", &format!("setsid {marker} >/dev/null 2>&1 &")])
            .status()
            .unwrap();
        assert!(status.success());
        std::thread::sleep(std::time::Duration::from_millis(200));
        let re = regex::Regex::new(&regex::escape(&marker)).unwrap();
        let found = Target::Pattern(re).pids();
        for p in &found {
            // SAFETY: killing the sleep this test started.
            unsafe { libc::kill(*p as i32, libc::SIGKILL) };
        }
        assert_eq!(found.len(), 1, "{found:?}");
    }
}
