//! The shape of `plimsoll.toml` as serde reads it, with spans kept for the errors;
//! `read` turns it into a [`crate::Config`].

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// plimsoll.toml: a whole experiment — the system under test, the mock it talks to, the
/// session file that drives it, a step's settings and the budget a ramp judges it by. A key
/// left out takes its default; paths count from the file's directory.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Raw {
    /// The system under test: the command that starts it and how Plimsoll knows it is
    /// ready. Give [sut] or [harness].
    #[schemars(with = "Option<RawSut>")]
    pub(crate) sut: Option<Spanned<RawSut>>,
    /// Harness mode: a command that drives its own sessions against the mock and prints
    /// `RESULT {json}`; Plimsoll probes it and merges its figures in.
    pub(crate) harness: Option<RawHarness>,
    /// The mock LLM provider the SUT talks to: its scenario and seed.
    #[serde(default)]
    pub(crate) mock: RawMock,
    /// The session file: what one session sends and expects.
    #[serde(default)]
    pub(crate) session: RawSession,
    /// One step's settings: concurrency, timeout, sampling, open-model arrivals, residents,
    /// the responsiveness probe, slow consumers.
    #[serde(default)]
    pub(crate) step: RawStep,
    /// Limits `plimsoll run` exits non-zero for (exit code 2), and the harness-bound limit.
    #[serde(default)]
    pub(crate) thresholds: RawThresholds,
    /// What "holds" means for a ramp's verdict; `--budget` overrides a key, NAME=off stops
    /// judging one.
    #[serde(default)]
    pub(crate) budget: result::Budget,
    /// Services started before the SUT (a database, a tool server), each ready before the
    /// next; their exports become template values.
    #[serde(default)]
    pub(crate) service: Vec<crate::parts::RawService>,
    /// Other processes to sample beside the SUT (a worker, a sidecar): by pid file,
    /// command-line pattern or cgroup.
    #[serde(default)]
    #[schemars(with = "Vec<crate::parts::RawProbe>")]
    pub(crate) probe: Vec<Spanned<crate::parts::RawProbe>>,
    /// Variants of [sut] that `plimsoll ramp` runs side by side, each its own command and
    /// environment.
    #[serde(default)]
    pub(crate) arm: Vec<crate::parts::RawArm>,
    /// Replay a workload derived from traces (`plimsoll workload from-traces`) instead of
    /// the session file's turns.
    pub(crate) workload: Option<RawWorkload>,
    /// The price table the cost figures use.
    #[serde(default)]
    pub(crate) cost: RawCost,
}

/// `[cost]`: the price table (the shipped one when absent).
#[derive(Deserialize, schemars::JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCost {
    /// The price table (default: the shipped one; `plimsoll prices` prints it).
    pub(crate) prices: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWorkload {
    /// The workload file `plimsoll workload from-traces` wrote.
    pub(crate) file: String,
    /// "sampled" (the default: sessions drawn from the recorded ones) or "exact" (every
    /// recorded session once, at its recorded start).
    #[schemars(with = "Option<String>")]
    pub(crate) replay: Option<Spanned<String>>,
    /// With replay = "exact": recorded time is divided by this (2.0 plays twice as fast).
    #[schemars(with = "Option<f64>")]
    pub(crate) speed: Option<Spanned<f64>>,
    /// "filler" (the default: text of the recorded token counts) or "recorded" (the
    /// recorded text where there is some).
    #[schemars(with = "Option<String>")]
    pub(crate) prompts: Option<Spanned<String>>,
}

#[derive(Deserialize, schemars::JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSut {
    /// The command that starts the SUT, as argv; {{port}} is its port, {{mock}} the mock's
    /// base URL, {{plimsoll}} this executable.
    #[schemars(with = "Option<Vec<String>>")]
    pub(crate) command: Option<Spanned<Vec<String>>>,
    /// How Plimsoll knows the SUT is ready: "http" (GET ready_path answers 2xx), "port"
    /// (the port accepts), or "log" (a line of its output contains ready_log). For its
    /// first 3 s, an answer counts only where a process of the SUT listens on the port,
    /// not another program that took it (after: a container's proxy).
    #[schemars(with = "Option<String>")]
    pub(crate) ready: Option<Spanned<String>>,
    /// With ready = "http": the path that answers 2xx once the SUT is ready (default
    /// /health).
    pub(crate) ready_path: Option<String>,
    /// With ready = "log": a line of the SUT's output containing this means it is ready.
    pub(crate) ready_log: Option<String>,
    /// Seconds to wait for the SUT to be ready before the step fails (default 30).
    #[schemars(with = "Option<f64>")]
    pub(crate) ready_timeout_s: Option<Spanned<f64>>,
    /// Seconds between SIGTERM and SIGKILL when the SUT is stopped (default 5).
    #[schemars(with = "Option<f64>")]
    pub(crate) stop_grace_s: Option<Spanned<f64>>,
    /// The SUT's port; 0 (the default) lets Plimsoll pick a free one, passed as {{port}},
    /// PORT and PLIMSOLL_SUT_PORT.
    pub(crate) port: Option<u16>,
    /// The directory the SUT starts in (default: the config's).
    pub(crate) cwd: Option<String>,
    /// Environment variables for the SUT; values may use {{port}}, {{mock}} and
    /// {{plimsoll}}.
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    /// A regex: lines of the SUT's log matching it count as warnings (its log is read for
    /// warnings and errors either way).
    #[schemars(with = "Option<String>")]
    pub(crate) log_pattern: Option<Spanned<String>>,
    /// Instances of the SUT to start, each its own process on its own port, sessions spread
    /// over them (default 1).
    #[schemars(with = "Option<i64>")]
    pub(crate) replicas: Option<Spanned<i64>>,
    /// With replicas: the command of each instance after the first, when it differs.
    #[schemars(with = "Option<Vec<String>>")]
    pub(crate) replicas_command: Option<Spanned<Vec<String>>>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHarness {
    /// The harness's command, as argv: it drives its own sessions against {{mock}} and
    /// prints `RESULT {json}`.
    #[schemars(with = "Vec<String>")]
    pub(crate) command: Spanned<Vec<String>>,
}

#[derive(Deserialize, schemars::JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMock {
    /// The mock's scenario file (default: the built-in chat defaults; see scenarios/).
    pub(crate) scenario: Option<String>,
    /// The seed of the mock's choices (reply lengths, tool calls, jitter): the same seed,
    /// the same replies. Default 1; it replaces the scenario's own seed.
    pub(crate) seed: Option<u64>,
}

#[derive(Deserialize, schemars::JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSession {
    /// The session file (default session.toml).
    pub(crate) file: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStep {
    /// Concurrent sessions (default 10; `--concurrency` overrides).
    #[schemars(with = "Option<i64>")]
    pub(crate) concurrency: Option<Spanned<i64>>,
    /// Seconds a step may take before it stops with outcome "timeout" (default 300).
    #[schemars(with = "Option<f64>")]
    pub(crate) timeout_s: Option<Spanned<f64>>,
    /// How often the SUT's process tree is sampled, in ms (default 50).
    #[schemars(with = "Option<i64>")]
    pub(crate) sample_ms: Option<Spanned<i64>>,
    /// Open model: `concurrency` sessions arrive at this rate per second instead of all at
    /// once; latency counts from each intended start.
    #[schemars(with = "Option<f64>")]
    pub(crate) arrival_rate: Option<Spanned<f64>>,
    /// Resident sessions: this many opened first ([[setup]] run), `concurrency` of them
    /// active at a time.
    #[schemars(with = "Option<i64>")]
    pub(crate) resident: Option<Spanned<i64>>,
    /// The responsiveness probe: a GET of this path every 100 ms beside the load
    /// (probe_p50_ms, probe_p99_ms).
    #[schemars(with = "Option<String>")]
    pub(crate) probe_path: Option<Spanned<String>>,
    /// Slow consumers: this share of the sessions read replies slowly.
    #[schemars(with = "Option<f64>")]
    pub(crate) slow_share: Option<Spanned<f64>>,
    /// Slow consumers read at this many bytes a second.
    #[schemars(with = "Option<f64>")]
    pub(crate) slow_read_bps: Option<Spanned<f64>>,
    /// Voice calls: whose audio is kept as WAV files (what the caller said, what it
    /// heard, a note of where each reply begins): "failed" (default: calls with a failed,
    /// wrong, unheard or sound-only reply), "all", or "none". Into .plimsoll/audio/, or --keep-audio DIR.
    #[schemars(with = "Option<String>")]
    pub(crate) keep_audio: Option<Spanned<String>>,
    /// Voice calls: at most this many calls' audio kept a step (default 20).
    #[schemars(with = "Option<i64>")]
    pub(crate) keep_audio_calls: Option<Spanned<i64>>,
}

#[derive(Deserialize, schemars::JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawThresholds {
    /// Failed sessions over sessions above this: outcome "error_rate" (default 0).
    #[schemars(with = "Option<f64>")]
    pub(crate) error_rate: Option<Spanned<f64>>,
    /// p99 session time above this: exit code 2 (0, the default, is no limit).
    #[schemars(with = "Option<f64>")]
    pub(crate) p99_session_ms: Option<Spanned<f64>>,
    /// Peak RSS of the SUT above this: exit code 2 (0, the default, is no limit).
    #[schemars(with = "Option<f64>")]
    pub(crate) peak_rss_mb: Option<Spanned<f64>>,
    /// Mock lateness or driver lag p99 above this (and above 5 % of the p50 turn): the step
    /// is harness-bound (default 10).
    #[schemars(with = "Option<f64>")]
    pub(crate) harness_lag_ms: Option<Spanned<f64>>,
}

/// The JSON Schema of plimsoll.toml, made by `g` from the types that read it.
pub fn schema(g: schemars::SchemaGenerator) -> schemars::Schema {
    g.into_root_schema_for::<Raw>()
}
