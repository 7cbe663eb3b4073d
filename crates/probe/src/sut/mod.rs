//! Starting the system under test fresh, waiting until it is ready, and stopping it.
//!
//! The SUT runs in its own process group, so a stop reaches every process it started
//! (SIGTERM, then SIGKILL after the grace period), and in a private scratch directory
//! (`PLIMSOLL_SCRATCH`, also `TMPDIR`, and `{{scratch}}` in its command and environment)
//! that is counted and removed at the end. Its stdout and stderr are kept as a short tail
//! for error messages and for naming a collapse's cause, read line by line into a
//! `log::LogBook`, and written whole to a file that is kept when it dies by itself (its
//! path is in the message; `log::crash` puts the cause first). Dropping a `Sut` that was not stopped kills its group at once.
//!
//! `spec` is what a start takes, `launch` spawns the process and reads its output,
//! `ready` probes it; this module holds the running SUT from start to stop. Sampling it
//! is `sampler`'s business.

mod launch;
mod ready;
mod spec;

pub use spec::{Ready, Role, SutError, SutSpec};

use crate::log::LogBook;
use launch::{command, read_output, spawn_cause, Whole};
use ready::{answer_is_the_suts, http_ok, never_ready};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::process::Child;

pub struct Sut {
    child: Child,
    pub pid: u32,
    pub scratch: PathBuf,
    tail: Arc<Mutex<VecDeque<String>>>,
    log: Arc<Mutex<LogBook>>,
    whole: Arc<Mutex<Whole>>,
    disk: Option<crate::disk::DiskWatch>,
    stop_grace: Duration,
    stopped: bool,
}

/// How the SUT ended.
#[derive(Debug, Clone, Default)]
pub struct Stopped {
    /// Exit code, if it exited on its own terms.
    pub code: Option<i32>,
    /// Signal that ended it, if any.
    pub signal: Option<i32>,
    /// Whether it was already gone before Plimsoll stopped it.
    pub died_on_its_own: bool,
    /// Files and directories it left in its scratch directory.
    pub files_created: u64,
    /// Its scratch directory at its fullest, and the room its filesystem had left.
    pub disk: crate::disk::DiskSummary,
    pub tail: String,
    /// What it logged, read for warnings and errors.
    pub log: LogBook,
    /// The file of its whole output, kept when it died by itself.
    pub whole: Option<PathBuf>,
}

impl Sut {
    pub async fn start(spec: &SutSpec) -> Result<Sut, SutError> {
        let scratch = std::env::temp_dir().join(format!(
            "plimsoll-sut-{}-{}",
            std::process::id(),
            SCRATCH_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::create_dir_all(&scratch);
        let mut child = command(spec, &scratch).spawn().map_err(|e| {
            let _ = std::fs::remove_dir_all(&scratch);
            SutError::Spawn {
                role: spec.role,
                command: spec.command.clone(),
                why: spawn_cause(spec, &e),
            }
        })?;
        let pid = child.id().unwrap_or(0);
        // Should Plimsoll die before it stops the SUT, its watchdog does it.
        guard::add(&guard::Item::Group(pid as i32));
        guard::add(&guard::Item::Dir(scratch.clone()));
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let log = Arc::new(Mutex::new(LogBook::new(spec.log_pattern.clone())));
        let seq = SCRATCH_SEQ.load(std::sync::atomic::Ordering::Relaxed);
        let whole = Whole::create(&format!("plimsoll-log-{}-{seq}-{pid}", std::process::id()));
        guard::add(&guard::Item::File(whole.path.clone()));
        let whole = Arc::new(Mutex::new(whole));
        let seen = read_output(
            &mut child,
            spec,
            &(tail.clone(), log.clone(), whole.clone()),
        );
        let sut = Sut {
            child,
            pid,
            scratch,
            tail,
            log,
            whole,
            disk: None,
            stop_grace: spec.stop_grace,
            stopped: false,
        };
        sut.until_ready(spec, seen).await
    }

    /// Polls the readiness probe until it answers, the SUT exits, or the time is up.
    async fn until_ready(
        mut self,
        spec: &SutSpec,
        mut seen_rx: tokio::sync::watch::Receiver<bool>,
    ) -> Result<Sut, SutError> {
        let began = tokio::time::Instant::now();
        let deadline = began + spec.ready_timeout;
        loop {
            // Running is all `Started` asks: a harness that is done already is done, not
            // a start-up failure.
            let exited = match spec.ready {
                Ready::Started => None,
                _ => self.child.try_wait().ok().flatten(),
            };
            if let Some(status) = exited {
                tokio::time::sleep(Duration::from_millis(50)).await; // let the tail readers finish
                return Err(SutError::ExitedEarly {
                    role: spec.role,
                    status: status.to_string(),
                    tail: self.tail(),
                    whole: self.keep_whole(),
                });
            }
            let ready = match &spec.ready {
                Ready::Http(url) => http_ok(url).await,
                Ready::Port(p) => tokio::net::TcpStream::connect(("127.0.0.1", *p))
                    .await
                    .is_ok(),
                Ready::Log(_) => *seen_rx.borrow_and_update(),
                Ready::Started => true,
            };
            if ready
                && answer_is_the_suts(&spec.ready, self.pid, began.elapsed(), spec.ready_timeout)
            {
                self.disk = Some(crate::disk::DiskWatch::start(
                    &self.scratch,
                    Duration::from_millis(500),
                ));
                return Ok(self);
            }
            if tokio::time::Instant::now() >= deadline {
                let tail = self.tail();
                let whole = self.keep_whole();
                self.stop().await;
                return Err(SutError::NotReady {
                    role: spec.role,
                    secs: spec.ready_timeout.as_secs_f64(),
                    what: never_ready(&spec.ready),
                    tail,
                    whole,
                });
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The file of its whole output, written out and kept (not removed at stop).
    fn keep_whole(&self) -> Option<PathBuf> {
        let mut w = self.whole.lock().unwrap_or_else(|p| p.into_inner());
        let listed = w.path.clone();
        let kept = w.keep();
        w.kept = kept.is_some();
        if w.kept {
            // A message will point to it: the watchdog leaves it too.
            guard::remove(&guard::Item::File(listed));
        }
        kept
    }

    /// The last lines the SUT printed.
    pub fn tail(&self) -> String {
        let t = self.tail.lock().unwrap_or_else(|p| p.into_inner());
        t.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Whether the SUT has exited by itself.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// SIGTERM to the whole group, SIGKILL after the grace period, reap, count and
    /// remove the scratch directory.
    pub async fn stop(mut self) -> Stopped {
        use std::os::unix::process::ExitStatusExt;
        let already = self.child.try_wait().ok().flatten();
        let disk = self.disk.take().map(|d| d.finish()).unwrap_or_default();
        let pgid = self.pid as i32;
        if already.is_none() {
            self.log
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .stopping();
        }
        if pgid > 0 {
            // SAFETY: signalling our own child's process group.
            unsafe { libc::kill(-pgid, libc::SIGTERM) };
        }
        let status = match tokio::time::timeout(self.stop_grace, self.child.wait()).await {
            Ok(Ok(s)) => Some(s),
            _ => None,
        };
        // Whatever is left of the group, leader or not, goes now.
        if pgid > 0 {
            // SAFETY: as above.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
        let status = match status {
            Some(s) => s,
            None => self
                .child
                .wait()
                .await
                .unwrap_or_else(|_| std::process::ExitStatus::from_raw(9)),
        };
        self.stopped = true;
        let files_created = count_files(&self.scratch);
        let _ = std::fs::remove_dir_all(&self.scratch);
        // Died by itself: its whole output is kept for the message that names the cause.
        let whole = already.and_then(|_| self.keep_whole());
        self.unguard();
        let ended = already.unwrap_or(status);
        tokio::time::sleep(Duration::from_millis(20)).await;
        Stopped {
            code: ended.code(),
            signal: ended.signal(),
            died_on_its_own: already.is_some(),
            files_created,
            disk,
            tail: self.tail(),
            log: std::mem::take(&mut *self.log.lock().unwrap_or_else(|p| p.into_inner())),
            whole,
        }
    }
}

impl Drop for Sut {
    fn drop(&mut self) {
        if !self.stopped && self.pid > 0 {
            // SAFETY: signalling our own child's process group.
            unsafe { libc::kill(-(self.pid as i32), libc::SIGKILL) };
            let _ = std::fs::remove_dir_all(&self.scratch);
            self.unguard();
        }
    }
}

impl Sut {
    /// Plimsoll has stopped the SUT and removed its directory: nothing for the watchdog.
    fn unguard(&self) {
        let w = self.whole.lock().unwrap_or_else(|p| p.into_inner());
        if !w.kept {
            let _ = std::fs::remove_file(&w.path);
        }
        // Removed, or kept for a message that points to it: either way not the watchdog's.
        guard::remove(&guard::Item::File(w.path.clone()));
        guard::remove(&guard::Item::Group(self.pid as i32));
        guard::remove(&guard::Item::Dir(self.scratch.clone()));
    }
}

static SCRATCH_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn count_files(dir: &std::path::Path) -> u64 {
    let mut n = 0;
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            n += 1;
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                n += count_files(&e.path());
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(cmd: &str, ready: Ready) -> SutSpec {
        SutSpec {
            command: vec!["sh".into(), "-c".into(), cmd.into()],
            env: vec![("GREETING".into(), "hello".into())],
            cwd: None,
            ready,
            ready_timeout: Duration::from_secs(3),
            stop_grace: Duration::from_millis(500),
            cores: Vec::new(),
            log_pattern: None,
            role: Default::default(),
        }
    }

    #[tokio::test]
    async fn starts_on_a_log_line_and_reaps_the_whole_group() {
        let s = spec(
            "echo $GREETING; touch $PLIMSOLL_SCRATCH/a $PLIMSOLL_SCRATCH/b; sleep 30 & sleep 30 & echo ready; wait",
            Ready::Log("ready".into()),
        );
        let sut = Sut::start(&s).await.unwrap();
        let pid = sut.pid;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let pids = crate::tree::tree_pids(pid);
        assert_eq!(pids.len(), 3, "{pids:?}");
        let scratch = sut.scratch.clone();
        let stopped = sut.stop().await;
        assert_eq!(stopped.files_created, 2);
        assert!(stopped.tail.contains("hello"));
        assert!(!scratch.exists());
        for p in pids {
            assert!(
                !std::path::Path::new(&format!("/proc/{p}")).exists() || is_zombie(p),
                "{p} survived"
            );
        }
    }

    fn is_zombie(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        })
    }

    #[tokio::test]
    async fn early_exit_and_timeout_show_the_output() {
        let e = Sut::start(&spec("echo boom >&2; exit 3", Ready::Port(1)))
            .await
            .err()
            .unwrap();
        let msg = e.to_string();
        assert!(
            msg.contains("exit status: 3") && msg.contains("boom"),
            "{msg}"
        );
        let mut s = spec("echo still starting; sleep 30", Ready::Log("never".into()));
        s.ready_timeout = Duration::from_millis(300);
        let msg = Sut::start(&s).await.err().unwrap().to_string();
        assert!(
            msg.starts_with("the SUT was not ready after")
                && msg.contains("raise [sut] ready_timeout_s")
                && msg.contains("still starting"),
            "{msg}"
        );
        // A service started for the SUT is named as one, with its own setting.
        s.role = Role::Service;
        let msg = Sut::start(&s).await.err().unwrap().to_string();
        assert!(
            msg.starts_with("the service was not ready after")
                && msg.contains("raise its ready_timeout_s"),
            "{msg}"
        );
        let mut s = spec("exit 3", Ready::Port(1));
        s.role = Role::Service;
        let msg = Sut::start(&s).await.err().unwrap().to_string();
        assert!(
            msg.starts_with("the service exited during start-up"),
            "{msg}"
        );
    }

    #[tokio::test]
    async fn a_command_that_cannot_start_names_the_real_cause_once() {
        let mut sp = spec("true", Ready::Started);
        sp.command = vec!["no-such-agent-xyz".into()];
        let e = Sut::start(&sp).await.err().unwrap().to_string();
        assert!(e.ends_with("no-such-agent-xyz is not on PATH (give its full path, or the path relative to the config's directory)"), "{e}");
        sp.command = vec!["./missing/agent".into()];
        let e = Sut::start(&sp).await.err().unwrap().to_string();
        assert!(
            e.contains("./missing/agent does not exist (relative paths count from ."),
            "{e}"
        );
        sp.command = vec!["true".into()];
        sp.cwd = Some("/no/such/dir".into());
        let e = Sut::start(&sp).await.err().unwrap().to_string();
        assert!(
            e.contains("working directory /no/such/dir does not exist"),
            "{e}"
        );
        assert_eq!(e.matches("No such file").count(), 0, "{e}");
    }
}
