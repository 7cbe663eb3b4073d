//! Leaves nothing behind, even when Plimsoll is killed with SIGKILL: every process group,
//! cgroup, scratch directory and scratch file Plimsoll makes is announced to a small watchdog process
//! (Plimsoll itself, re-run as `plimsoll __watchdog`) over a pipe, and withdrawn when
//! Plimsoll removes it. When the pipe closes — Plimsoll exited or was killed — the
//! watchdog kills what is still listed and removes it. `sweep` removes what an earlier
//! Plimsoll left when even its watchdog was killed.
//!
//! It knows nothing of steps or SUTs: only process groups, cgroup directories, plain
//! directories and files.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the watchdog is told to clean up.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Item {
    /// A process group (the SUT's): SIGKILL to all of it.
    Group(i32),
    /// A cgroup directory: every process in it killed, then the directory removed.
    Cgroup(PathBuf),
    /// A scratch directory: removed with everything in it.
    Dir(PathBuf),
    /// A scratch file (a SUT's whole output, unless a message points to it).
    File(PathBuf),
}

impl Item {
    fn line(&self, sign: char) -> String {
        match self {
            Item::Group(g) => format!("{sign}pg {g}\n"),
            Item::Cgroup(p) => format!("{sign}cg {}\n", p.display()),
            Item::Dir(p) => format!("{sign}dir {}\n", p.display()),
            Item::File(p) => format!("{sign}file {}\n", p.display()),
        }
    }

    fn parse(line: &str) -> Option<(bool, Item)> {
        let add = match line.chars().next()? {
            '+' => true,
            '-' => false,
            _ => return None,
        };
        let rest = &line[1..];
        let (kind, arg) = rest.split_once(' ')?;
        let item = match kind {
            "pg" => Item::Group(arg.trim().parse().ok()?),
            "cg" => Item::Cgroup(PathBuf::from(arg)),
            "dir" => Item::Dir(PathBuf::from(arg)),
            "file" => Item::File(PathBuf::from(arg)),
            _ => return None,
        };
        Some((add, item))
    }
}

static PIPE: Mutex<Option<std::process::ChildStdin>> = Mutex::new(None);

/// A scratch directory of this process's in the temp directory, `plimsoll-scratch-PID-WHAT`,
/// announced to the watchdog (removed if Plimsoll is killed; `sweep` knows its name).
pub fn scratch_dir(what: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("plimsoll-scratch-{}-{what}", std::process::id()));
    add(&Item::Dir(d.clone()));
    d
}

/// Removes a scratch directory and withdraws it from the watchdog.
pub fn drop_scratch_dir(d: &Path) {
    let _ = std::fs::remove_dir_all(d);
    remove(&Item::Dir(d.to_path_buf()));
}

/// A scratch directory made and announced, removed and withdrawn when dropped (on an
/// early return too).
pub struct Scratch(PathBuf);

impl Scratch {
    /// Makes `plimsoll-scratch-PID-WHAT` in the temp directory (see `scratch_dir`).
    pub fn new(what: &str) -> std::io::Result<Scratch> {
        let d = Scratch(scratch_dir(what));
        std::fs::create_dir_all(&d.0)?;
        Ok(d)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        drop_scratch_dir(&self.0);
    }
}

/// A child process in a process group of its own, announced to the watchdog: its whole
/// group killed and reaped when dropped, or by the watchdog if Plimsoll is killed first.
pub struct Owned(std::process::Child);

impl Owned {
    /// Spawns `cmd` as the leader of a new process group, reading nothing (a background
    /// group that read the terminal would be stopped).
    pub fn spawn(cmd: &mut std::process::Command) -> std::io::Result<Owned> {
        use std::os::unix::process::CommandExt;
        let child = cmd
            .stdin(std::process::Stdio::null())
            .process_group(0)
            .spawn()?;
        add(&Item::Group(child.id() as i32));
        Ok(Owned(child))
    }

    pub fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Its standard output, when piped (once). The child itself is not handed out: one
    /// reaped elsewhere would leave its pid, and so its group, free for another process.
    pub fn take_stdout(&mut self) -> Option<std::process::ChildStdout> {
        self.0.stdout.take()
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        let group = Item::Group(self.0.id() as i32);
        clean(&group);
        let _ = self.0.wait();
        remove(&group);
    }
}

/// Starts the watchdog: `exe` run with `arg` (the hidden subcommand that calls `watch`).
/// Without one (it could not start) nothing is guarded beyond Plimsoll's own cleanup.
/// It leads a process group of its own: a kill of Plimsoll's whole group (`timeout -s
/// KILL`, a cancelled CI job) leaves it to clean up.
pub fn start(exe: &Path, arg: &str) -> std::io::Result<()> {
    use std::os::unix::process::CommandExt;
    let child = std::process::Command::new(exe)
        .arg(arg)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .process_group(0)
        .spawn()?;
    *PIPE.lock().unwrap_or_else(|p| p.into_inner()) = child.stdin;
    Ok(())
}

fn tell(line: &str) {
    if let Some(p) = PIPE.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        let _ = p.write_all(line.as_bytes());
        let _ = p.flush();
    }
}

/// Something to clean up if Plimsoll dies before it does.
pub fn add(item: &Item) {
    tell(&item.line('+'));
}

/// Plimsoll cleaned it up itself.
pub fn remove(item: &Item) {
    tell(&item.line('-'));
}

/// The watchdog's whole life: read the list until the pipe closes, then clean up what is
/// still on it. Ignores SIGINT and SIGTERM (a Ctrl-C reaches the whole process group;
/// Plimsoll handles it and closes the pipe when done).
pub fn watch(input: impl BufRead) {
    // SAFETY: setting signal dispositions of this single-threaded process.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
    }
    let mut live = BTreeSet::new();
    for line in input.lines().map_while(Result::ok) {
        match Item::parse(&line) {
            Some((true, item)) => {
                live.insert(item);
            }
            Some((false, item)) => {
                live.remove(&item);
            }
            None => {}
        }
    }
    // Process groups first, then the cgroups they ran in, then their directories.
    for item in &live {
        clean(item);
    }
}

/// Kills or removes one item; returns whether anything was there.
pub fn clean(item: &Item) -> bool {
    match item {
        Item::Group(g) => {
            // SAFETY: signalling a process group this Plimsoll created.
            unsafe { libc::kill(-g, libc::SIGKILL) == 0 }
        }
        Item::Cgroup(dir) => {
            if !dir.exists() {
                return false;
            }
            // Up to 5 s for its processes to exit: a SUT SIGKILLed on a loaded machine has
            // been seen to take over 1 s, and a cgroup v1 directory stays busy until then
            // (CI: cpu and cpuset left while memory, tried last, was gone).
            for _ in 0..250 {
                let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
                for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                    // SAFETY: signalling processes in a cgroup Plimsoll created.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            true
        }
        Item::Dir(dir) => std::fs::remove_dir_all(dir).is_ok(),
        Item::File(f) => std::fs::remove_file(f).is_ok(),
    }
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 || *libc::__errno_location() == libc::EPERM }
}

/// The pid in a name Plimsoll gave, `plimsoll-PID-…`, `plimsoll-sut-PID-…`,
/// `plimsoll-compare-PID`, `plimsoll-scratch-PID-…` or `plimsoll-log-PID-…` (a SUT's whole
/// output; one a message points to is `plimsoll-kept-log-…`, which has no owner here).
fn owner(name: &str) -> Option<i32> {
    let rest = name.strip_prefix("plimsoll-")?;
    let rest = rest
        .strip_prefix("sut-")
        .or_else(|| rest.strip_prefix("compare-"))
        .or_else(|| rest.strip_prefix("scratch-"))
        .or_else(|| rest.strip_prefix("log-"))
        .unwrap_or(rest);
    rest.split('-').next()?.parse().ok()
}

/// Removes what Plimsolls that are gone left behind: cgroups named `plimsoll-PID-…`
/// under the cgroup roots (their processes killed first), and scratch directories
/// `plimsoll-sut-PID-…` / `plimsoll-compare-PID` / `plimsoll-scratch-PID-…` and output files
/// `plimsoll-log-PID-…` in `tmp`. Returns what it removed.
pub fn sweep(cgroup_roots: &[&Path], tmp: &Path) -> Vec<PathBuf> {
    let me = std::process::id() as i32;
    let stale = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                owner(&e.file_name().to_string_lossy()).is_some_and(|p| p != me && !alive(p))
            })
            .map(|e| e.path())
            .collect()
    };
    let mut removed = Vec::new();
    for root in cgroup_roots {
        for d in stale(root)
            .into_iter()
            .filter(|d| d.join("cgroup.procs").exists())
        {
            if clean(&Item::Cgroup(d.clone())) && !d.exists() {
                removed.push(d);
            }
        }
    }
    for d in stale(tmp) {
        let item = match d.is_dir() {
            true => Item::Dir(d.clone()),
            false => Item::File(d.clone()),
        };
        if clean(&item) {
            removed.push(d);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        for item in [
            Item::Group(42),
            Item::Cgroup("/sys/fs/cgroup/memory/plimsoll-1-c2".into()),
            Item::Dir("/tmp/plimsoll-sut-1-0".into()),
            Item::File("/tmp/plimsoll-log-1-0-2.log".into()),
        ] {
            let add = item.line('+');
            assert_eq!(Item::parse(add.trim_end()), Some((true, item.clone())));
            assert_eq!(Item::parse(item.line('-').trim_end()), Some((false, item)));
        }
        assert_eq!(Item::parse("junk"), None);
    }

    #[test]
    fn scratch_and_owned_leave_nothing_when_dropped() {
        let scratch = Scratch::new("guard-test").unwrap();
        let dir = scratch.path().to_path_buf();
        std::fs::write(dir.join("f"), "x").unwrap();
        assert_eq!(
            owner(&dir.file_name().unwrap().to_string_lossy()),
            Some(std::process::id() as i32)
        );
        drop(scratch);
        assert!(!dir.exists(), "the scratch directory goes with its owner");
        // A shell whose own child would outlive it alone: the whole group goes.
        let mut sh = std::process::Command::new("sh");
        sh.args(["-c", "sleep 30 & echo $!; wait"])
            .stdout(std::process::Stdio::piped());
        let mut owned = Owned::spawn(&mut sh).unwrap();
        let mut line = String::new();
        let out = owned.take_stdout().unwrap();
        std::io::BufReader::new(out).read_line(&mut line).unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        assert!(alive(grandchild));
        drop(owned);
        // Reaped by its init once killed; give the kernel a moment to tell.
        let gone = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            !alive(grandchild) || zombie(grandchild)
        });
        assert!(gone, "the group's other process was killed too");
    }

    fn zombie(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(true)
    }

    #[test]
    fn owners_are_read_from_names() {
        assert_eq!(owner("plimsoll-123-c4"), Some(123));
        assert_eq!(owner("plimsoll-sut-77-3"), Some(77));
        assert_eq!(owner("plimsoll-compare-9"), Some(9));
        assert_eq!(owner("plimsoll-scratch-41-merge"), Some(41));
        assert_eq!(owner("plimsoll-log-41-2-77.log"), Some(41));
        assert_eq!(
            owner("plimsoll-kept-log-41-2-77.log"),
            None,
            "kept for a message"
        );
        assert_eq!(owner("plimsoll-demo"), None);
        assert_eq!(owner("other"), None);
    }

    #[test]
    fn the_watchdog_cleans_what_is_still_listed_when_the_pipe_closes() {
        let tmp = std::env::temp_dir().join(format!("guard-test-{}", std::process::id()));
        let (kept, gone) = (tmp.join("kept"), tmp.join("gone"));
        let (log, kept_log) = (tmp.join("a.log"), tmp.join("kept.log"));
        std::fs::create_dir_all(&kept).unwrap();
        std::fs::create_dir_all(&gone).unwrap();
        std::fs::write(&log, "x").unwrap();
        std::fs::write(&kept_log, "x").unwrap();
        let script = format!(
            "+dir {}\n+dir {}\n-dir {}\n+file {}\n+file {}\n-file {}\n",
            gone.display(),
            kept.display(),
            kept.display(),
            log.display(),
            kept_log.display(),
            kept_log.display()
        );
        watch(std::io::Cursor::new(script));
        assert!(!gone.exists() && !log.exists(), "still listed: removed");
        assert!(kept.exists() && kept_log.exists(), "withdrawn: left alone");
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn a_sweep_removes_only_what_dead_owners_left() {
        let tmp = std::env::temp_dir().join(format!("guard-sweep-{}", std::process::id()));
        // A pid far above pid_max is never alive; our own pid is.
        let dead = tmp.join("plimsoll-sut-99999999-0");
        let mine = tmp.join(format!("plimsoll-sut-{}-0", std::process::id()));
        std::fs::create_dir_all(&dead).unwrap();
        std::fs::create_dir_all(&mine).unwrap();
        let (log, kept) = (
            tmp.join("plimsoll-log-99999999-1-5.log"),
            tmp.join("plimsoll-kept-log-99999999-1-5.log"),
        );
        std::fs::write(&log, "x").unwrap();
        std::fs::write(&kept, "x").unwrap();
        let mut removed = sweep(&[], &tmp);
        removed.sort();
        assert_eq!(removed, vec![log.clone(), dead.clone()]);
        assert!(!dead.exists() && !log.exists() && mine.exists() && kept.exists());
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
