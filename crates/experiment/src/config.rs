//! `plimsoll.toml`: a whole experiment. Every field has a default; paths are relative
//! to the file.
//!
//! ```toml
//! [sut]
//! command = ["{{plimsoll}}", "floor", "--listen", "127.0.0.1:{{port}}"]
//! ready = "http"            # "http" (GET ready_path answers 2xx), "port", or "log"
//! ready_path = "/health"
//! ready_log = "listening"   # with ready = "log": a line of output containing this
//! ready_timeout_s = 30
//! stop_grace_s = 5
//! port = 0                  # 0: Plimsoll picks a free port, passed as {{port}}, PORT and PLIMSOLL_SUT_PORT
//! cwd = "."
//! env = { LOG_LEVEL = "warn" }
//! # Its own log is read for warnings and errors (Python logging, Go log/slog, Rust
//! # tracing, JSON lines with a level); lines matching this regex count as warnings too.
//! log_pattern = "heartbeat .* (timeout|deadline)"
//!
//! [mock]
//! scenario = "../../scenarios/memory.toml"   # default: the built-in chat defaults
//! seed = 1
//!
//! [session]
//! file = "session.toml"
//!
//! [step]
//! concurrency = 20
//! timeout_s = 300
//! sample_ms = 50
//! # arrival_rate = 20      # open model: `concurrency` sessions arrive at 20/s instead of all at once
//! # probe_path = "/health" # a GET every 100 ms beside the load: probe_p50_ms, probe_p99_ms
//! # slow_share = 0.1       # slow consumers: this share of the sessions read replies slowly
//! # slow_read_bps = 65536  # at this many bytes a second
//! # resident = 200         # 200 sessions opened first ([[setup]]), `concurrency` of them active at a time
//!
//! [thresholds]
//! error_rate = 0.0          # failed sessions / sessions above this: outcome "error_rate"
//! p99_session_ms = 0        # 0 = no limit; above it: exit code 2
//! peak_rss_mb = 0           # 0 = no limit; above it: exit code 2
//! harness_lag_ms = 10       # mock lateness or driver lag p99 above this (and above 5 % of
//!                           # the p50 turn): harness-bound
//!
//! [cost]
//! prices = "prices.toml"    # the price table (default: the shipped one; `plimsoll prices` prints it)
//!
//! [budget]                  # what "holds" means for a ramp's verdict (--budget overrides)
//! latency_inflation = 2.0   # p50 session time / the mock's own time
//! # latency_vs_single = 2.0 # p50 session time / the same SUT's at the first level
//! # p99_turn_ms = 800
//! # p99_ttft_ms = 500
//! error_rate = 0.0          # failed sessions / sessions
//! # rss_mb = 512            # peak RSS of the SUT's process tree
//! ```
//!
//! In `command` and `env`, `{{port}}` is the SUT's port, `{{mock}}` the mock's base URL
//! and `{{plimsoll}}` this executable.

pub use crate::parts::ReadyKind;
use std::path::{Path, PathBuf};

/// A plimsoll.toml that cannot be used, with where and why.
pub type ConfigError = spans::FileError;

/// `[step] keep_audio`: whose audio a step of voice calls keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum KeepAudio {
    /// Calls with a failed, wrong, unheard or sound-only reply.
    #[default]
    Failed,
    All,
    None,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub file: PathBuf,
    /// The SUT (empty when only a harness is given).
    pub command: Vec<String>,
    /// Harness mode: this command drives its own sessions and prints a RESULT line.
    pub harness: Option<Vec<String>>,
    pub ready: ReadyKind,
    pub ready_timeout_s: f64,
    pub stop_grace_s: f64,
    pub port: u16,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    /// Lines of the SUT's log matching this count as warnings.
    pub log_pattern: Option<regex::Regex>,
    pub scenario: Option<PathBuf>,
    pub seed: u64,
    pub session_file: PathBuf,
    pub concurrency: usize,
    pub timeout_s: f64,
    pub sample_ms: u64,
    /// Open model: sessions per second (`concurrency` sessions arrive at this rate).
    pub arrival_rate: Option<f64>,
    /// Resident sessions: this many opened first, `concurrency` of them active at a time.
    pub resident: Option<usize>,
    /// The responsiveness probe's path on the SUT (`/health`).
    pub probe_path: Option<String>,
    /// Slow consumers: (share of the sessions, bytes a second they read).
    pub slow: Option<(f64, f64)>,
    /// Voice calls: whose audio is kept, and at most how many calls' a step.
    pub keep_audio: KeepAudio,
    pub keep_audio_calls: usize,
    pub error_rate: f64,
    pub p99_session_ms: f64,
    pub peak_rss_mb: f64,
    pub harness_lag_ms: f64,
    /// What "holds" means for a ramp's verdict.
    pub budget: result::Budget,
    /// `[[service]]`: programs started fresh for each step before the SUT.
    pub services: Vec<crate::parts::Service>,
    /// `[[probe]]`: processes Plimsoll does not start, sampled beside the SUT.
    pub watches: Vec<crate::parts::Watch>,
    /// `[[arm]]`: variants of the SUT that a ramp runs side by side.
    pub arms: Vec<crate::parts::Arm>,
    /// The arm this config runs (set by `with_arm`).
    pub arm: Option<String>,
    /// Instances of the SUT, each its own process on its own port, sessions spread over
    /// them sticky by session (`[sut] replicas`, or a ramp's `--replicas`).
    pub replicas: usize,
    /// With replicas: one process that runs `{{replicas}}` workers itself (a server that
    /// takes a worker count), instead of one process a replica.
    pub replicas_command: Option<Vec<String>>,
    /// `[workload]`: a recorded workload replayed (see `replay`).
    pub workload: Option<crate::replay::WorkloadSettings>,
    /// The prices the step's LLM calls are priced with.
    pub prices: std::sync::Arc<result::PriceTable>,
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            spans::unreadable(
                path,
                &e,
                "; write one for your system with `plimsoll init --command '…'` (docs/your-system.md), or name another with --config FILE",
            )
        })?;
        Config::parse(&text, path)
    }
}

impl Config {
    /// This config with an arm's command and environment over `[sut]`'s; None when it has
    /// no arm of that name.
    pub fn with_arm(&self, name: &str) -> Option<Config> {
        let arm = self.arms.iter().find(|a| a.name == name)?;
        let mut c = self.clone();
        if let Some(cmd) = &arm.command {
            c.command = cmd.clone();
        }
        for (k, v) in &arm.env {
            c.env.retain(|(k2, _)| k2 != k);
            c.env.push((k.clone(), v.clone()));
        }
        c.arm = Some(arm.name.clone());
        Some(c)
    }

    /// The SUT's command for a step, `{{replicas}}` filled, and how many processes of it
    /// to start: one a replica, or one running every replica (`replicas_command`).
    pub fn sut_command(&self) -> (Vec<String>, usize) {
        let fill = |w: &Vec<String>| -> Vec<String> {
            w.iter()
                .map(|x| x.replace("{{replicas}}", &self.replicas.to_string()))
                .collect()
        };
        match &self.replicas_command {
            Some(c) if self.replicas > 1 => (fill(c), 1),
            _ => (fill(&self.command), self.replicas),
        }
    }

    /// This config with `n` replicas of the SUT.
    pub fn with_replicas(&self, n: usize) -> Config {
        Config {
            replicas: n.max(1),
            ..self.clone()
        }
    }

    /// The arms' names, for a message naming what there is.
    pub fn arm_names(&self) -> String {
        match self.arms.len() {
            0 => format!("{} has no [[arm]] tables", self.file.display()),
            _ => format!(
                "its arms are {}",
                self.arms
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}
