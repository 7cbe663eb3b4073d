//! The mock a benchmark measures, as its own process (so its CPU and memory are its
//! own): started on a free loopback port with the bench's scenario, in a process group of
//! its own that the watchdog kills should the bench be killed; killed when dropped. What
//! load is put on it is each benchmark's business.

use anyhow::Context;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};

/// The mock process, killed when dropped, whatever happened.
pub(crate) struct MockProcess(guard::Owned);

impl MockProcess {
    pub(crate) fn pid(&self) -> u32 {
        self.0.pid()
    }
}

/// Starts `exe mock` with `scenario` (and `workers` tokio threads, if given) and waits for
/// the address it listens on.
pub(crate) fn start_mock(
    exe: &Path,
    workers: Option<usize>,
    scenario: &Path,
) -> anyhow::Result<(MockProcess, SocketAddr)> {
    start_mock_on(exe, workers, scenario, &[])
}

/// The same, the mock and every thread it starts held to `cores` (empty: any core).
pub(crate) fn start_mock_on(
    exe: &Path,
    workers: Option<usize>,
    scenario: &Path,
    cores: &[usize],
) -> anyhow::Result<(MockProcess, SocketAddr)> {
    let mut cmd = Command::new(exe);
    if !cores.is_empty() {
        use std::os::unix::process::CommandExt;
        let cores = cores.to_vec();
        // SAFETY: between fork and exec only async-signal-safe calls: sched_setaffinity
        // on a set built on the stack (the list was copied before the fork).
        unsafe {
            cmd.pre_exec(move || {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for &c in &cores {
                    libc::CPU_SET(c, &mut set);
                }
                match libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            });
        }
    }
    cmd.args(["mock", "--listen", "127.0.0.1:0", "--scenario"])
        .arg(scenario)
        .stderr(Stdio::null());
    if let Some(w) = workers {
        cmd.args(["--workers", &w.to_string()]);
    }
    let (child, addr) = listening(&mut cmd, "mock")?;
    Ok((MockProcess(child), addr))
}

/// Starts `cmd` (`what`, for messages) as a guarded child and waits for the first line it
/// prints, `listening http://ADDR`, as the mock and the driver bench's null SUT do.
pub(crate) fn listening(
    cmd: &mut Command,
    what: &str,
) -> anyhow::Result<(guard::Owned, SocketAddr)> {
    let mut child = guard::Owned::spawn(cmd.stdout(Stdio::piped()))
        .with_context(|| format!("starting the {what}"))?;
    let stdout = child.take_stdout().context("its stdout")?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let addr = line
        .trim()
        .strip_prefix("listening http://")
        .with_context(|| format!("unexpected first line from the {what}: {line:?}"))?
        .parse()?;
    Ok((child, addr))
}

/// Client and mock on cores of their own, so neither makes the other late: the mock on
/// the upper half of the cores this process may use, this thread (and so the client's
/// runtime, built after it) on the lower half. Returns the mock's cores and the client's;
/// with one core, none (they share it).
pub fn partition_client_and_mock() -> Option<(Vec<usize>, Vec<usize>)> {
    let cores = probe::affinity::available();
    if cores.len() < 2 {
        return None;
    }
    let (client, mock) = cores.split_at(cores.len() / 2);
    probe::affinity::pin_current(client).ok()?;
    Some((mock.to_vec(), client.to_vec()))
}
