//! Launching the SUT's process: its command line (own process group, scratch directory,
//! pinned cores), the real cause when it cannot spawn, and its stdout and stderr read
//! line by line into a bounded tail, the log book and a file of its whole output (kept
//! when it dies, for the message that names the cause). Waiting for it to be ready and
//! stopping it are the `sut` module's business.

use super::spec::{Ready, SutSpec};
use crate::log::LogBook;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Lines of SUT output kept for messages (and for a harness's RESULT line).
const TAIL: usize = 200;

/// The SUT's command: its own process group, its scratch directory (`{{scratch}}` in its
/// arguments and environment, `PLIMSOLL_SCRATCH`, `TMPDIR`), its output piped, pinned to
/// its cores when it has some.
pub(super) fn command(spec: &SutSpec, scratch: &std::path::Path) -> Command {
    let here = scratch.display().to_string();
    let fill = |s: &String| s.replace("{{scratch}}", &here);
    let mut cmd = Command::new(fill(&spec.command[0]));
    cmd.args(spec.command[1..].iter().map(fill))
        .envs(spec.env.iter().map(|(k, v)| (k, fill(v))))
        .env("PLIMSOLL_SCRATCH", scratch)
        .env("TMPDIR", scratch)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    if !spec.cores.is_empty() {
        let cores = spec.cores.clone();
        // SAFETY: between fork and exec only sched_setaffinity runs (no allocation).
        unsafe {
            cmd.pre_exec(move || crate::affinity::pin_current(&cores));
        }
    }
    cmd
}

/// The SUT's whole output, written as it comes (at most [`WHOLE_MAX`] bytes), outside
/// its scratch directory so it outlives a crash.
pub(super) struct Whole {
    pub path: PathBuf,
    file: Option<std::io::BufWriter<std::fs::File>>,
    bytes: u64,
    /// Kept for a message: not removed when the SUT is stopped.
    pub kept: bool,
}

/// A chatty SUT's whole output stops being written here.
const WHOLE_MAX: u64 = 64 << 20;

impl Whole {
    pub fn create(name: &str) -> Whole {
        let path = std::env::temp_dir().join(format!("{name}.log"));
        let file = std::fs::File::create(&path)
            .ok()
            .map(std::io::BufWriter::new);
        Whole {
            path,
            file,
            bytes: 0,
            kept: false,
        }
    }

    fn add(&mut self, line: &str) {
        use std::io::Write;
        if let Some(f) = self.file.as_mut().filter(|_| self.bytes < WHOLE_MAX) {
            let _ = writeln!(f, "{line}");
            self.bytes += line.len() as u64 + 1;
        }
    }

    /// Written out, to be read, under a name the next command's sweep leaves alone
    /// (`plimsoll-log-…` becomes `plimsoll-kept-log-…`): its path, or None when it could
    /// not be written.
    pub fn keep(&mut self) -> Option<PathBuf> {
        use std::io::Write;
        let f = self.file.as_mut()?;
        f.flush().ok()?;
        let name = self.path.file_name()?.to_string_lossy().to_string();
        if let Some(rest) = name.strip_prefix("plimsoll-log-") {
            let kept = self
                .path
                .with_file_name(format!("plimsoll-kept-log-{rest}"));
            if std::fs::rename(&self.path, &kept).is_ok() {
                self.path = kept;
            }
        }
        Some(self.path.clone())
    }
}

/// Where each output line goes.
pub(super) type Sinks = (
    Arc<Mutex<VecDeque<String>>>,
    Arc<Mutex<LogBook>>,
    Arc<Mutex<Whole>>,
);

/// Reads the SUT's stdout and stderr into its tail, its log book and its whole output;
/// the receiver says when a line with the `Ready::Log` text has appeared.
pub(super) fn read_output(
    child: &mut Child,
    spec: &SutSpec,
    sinks: &Sinks,
) -> tokio::sync::watch::Receiver<bool> {
    let (seen_tx, seen_rx) = tokio::sync::watch::channel(false);
    let wanted = match &spec.ready {
        Ready::Log(text) => Some(text.clone()),
        _ => None,
    };
    let seen_tx = Arc::new(seen_tx);
    if let Some(out) = child.stdout.take() {
        tokio::spawn(keep_tail(
            BufReader::new(out),
            sinks.clone(),
            wanted.clone(),
            seen_tx.clone(),
        ));
    }
    if let Some(err) = child.stderr.take() {
        tokio::spawn(keep_tail(
            BufReader::new(err),
            sinks.clone(),
            wanted,
            seen_tx,
        ));
    }
    seen_rx
}

/// Why a command could not start, in words that point at the fix.
pub(super) fn spawn_cause(spec: &SutSpec, e: &std::io::Error) -> String {
    if let Some(dir) = spec.cwd.as_ref().filter(|d| !d.is_dir()) {
        return format!(
            "its working directory {} does not exist (set [sut] cwd)",
            dir.display()
        );
    }
    let program = &spec.command[0];
    if e.kind() == std::io::ErrorKind::NotFound {
        let base = spec.cwd.clone().unwrap_or_else(|| PathBuf::from("."));
        return if program.contains('/') {
            format!(
                "{program} does not exist (relative paths count from {})",
                base.display()
            )
        } else {
            format!("{program} is not on PATH (give its full path, or the path relative to the config's directory)")
        };
    }
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        return format!(
            "{program} is not executable (chmod +x it, or run it through its interpreter)"
        );
    }
    e.to_string()
}

async fn keep_tail<R: tokio::io::AsyncRead + Unpin>(
    reader: BufReader<R>,
    (tail, log, whole): Sinks,
    wanted: Option<String>,
    seen: Arc<tokio::sync::watch::Sender<bool>>,
) {
    let mut lines = reader.lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if wanted.as_deref().is_some_and(|w| line.contains(w)) {
            let _ = seen.send(true);
        }
        log.lock().unwrap_or_else(|p| p.into_inner()).add(&line);
        whole.lock().unwrap_or_else(|p| p.into_inner()).add(&line);
        let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
        if t.len() == TAIL {
            t.pop_front();
        }
        t.push_back(line);
    }
}
