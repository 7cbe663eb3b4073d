//! Which processes are the SUT's, for the sampler: the list is read again only when it
//! may have changed — a process (or thread) was created since in this PID namespace
//! (the kernel's newest PID moved), one of ours was gone at the last sample (its children
//! are someone else's now), or 1 s passed. The last catches what makes no new PID: a
//! process matched by its command line after an exec (an MCP stdio server), a PID file
//! written late, a process moved into a cgroup, children left by a parent not yet reaped,
//! and a child read in the microseconds between its PID and its /proc entry. Reading the
//! list costs one `stat` read per process on the machine.

use std::time::{Duration, Instant};

/// The newest PID the kernel handed out (`/proc/loadavg`'s last field): while it stays
/// the same, no process (nor thread) was created in this PID namespace.
pub fn newest_pid() -> Option<u32> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().last()?.parse().ok()
}

/// The SUT's processes as last read, and what says when to read them again.
pub struct ProcessList {
    pub pids: Vec<u32>,
    newest: Option<u32>,
    read_at: Instant,
    /// One of `pids` could not be read at the last sample.
    pub lost: bool,
}

impl ProcessList {
    pub const AT_LEAST_EVERY: Duration = Duration::from_secs(1);

    pub fn read(find: &dyn Fn() -> Vec<u32>) -> ProcessList {
        // The newest PID first: a process made while the list is read moves it again.
        let newest = newest_pid();
        ProcessList {
            pids: find(),
            newest,
            read_at: Instant::now(),
            lost: false,
        }
    }

    /// Whether the list may be out of date, given the newest PID now.
    fn stale(&self, newest: Option<u32>, now: Instant) -> bool {
        self.lost
            || newest.is_none()
            || newest != self.newest
            || now.duration_since(self.read_at) >= Self::AT_LEAST_EVERY
    }

    /// Reads the list again when it may be out of date.
    pub fn refresh(&mut self, find: &dyn Fn() -> Vec<u32>) {
        if self.stale(newest_pid(), Instant::now()) {
            *self = ProcessList::read(find);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_read_again_only_when_it_may_have_changed() {
        let mut l = ProcessList::read(&|| vec![1]);
        let (at, newest) = (l.read_at, l.newest);
        let soon = at + Duration::from_millis(200);
        assert!(!l.stale(newest, soon), "nothing new");
        assert!(l.stale(newest.map(|p| p + 1), soon), "a process was made");
        assert!(l.stale(None, soon), "the newest PID unreadable");
        assert!(l.stale(newest, at + ProcessList::AT_LEAST_EVERY), "1 s on");
        l.lost = true;
        assert!(l.stale(newest, soon), "one of ours went");
    }

    #[test]
    fn a_child_made_after_the_reading_is_found() {
        let me = std::process::id();
        let mut l = ProcessList::read(&|| crate::tree::tree_pids(me));
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        l.refresh(&|| crate::tree::tree_pids(me));
        let found = l.pids.contains(&child.id());
        let _ = child.kill();
        let _ = child.wait();
        assert!(found, "{:?} lacks {}", l.pids, child.id());
    }
}
