//! The shape of `plimsoll.toml` as serde reads it, with spans kept for the errors;
//! `read` turns it into a [`crate::Config`].

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Raw {
    pub(crate) sut: Option<Spanned<RawSut>>,
    pub(crate) harness: Option<RawHarness>,
    #[serde(default)]
    pub(crate) mock: RawMock,
    #[serde(default)]
    pub(crate) session: RawSession,
    #[serde(default)]
    pub(crate) step: RawStep,
    #[serde(default)]
    pub(crate) thresholds: RawThresholds,
    #[serde(default)]
    pub(crate) budget: result::Budget,
    #[serde(default)]
    pub(crate) service: Vec<crate::parts::RawService>,
    #[serde(default)]
    pub(crate) probe: Vec<Spanned<crate::parts::RawProbe>>,
    #[serde(default)]
    pub(crate) arm: Vec<crate::parts::RawArm>,
    pub(crate) workload: Option<RawWorkload>,
    #[serde(default)]
    pub(crate) cost: RawCost,
}

/// `[cost]`: the price table (the shipped one when absent).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCost {
    pub(crate) prices: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWorkload {
    pub(crate) file: String,
    pub(crate) replay: Option<Spanned<String>>,
    pub(crate) speed: Option<Spanned<f64>>,
    pub(crate) prompts: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSut {
    pub(crate) command: Option<Spanned<Vec<String>>>,
    pub(crate) ready: Option<Spanned<String>>,
    pub(crate) ready_path: Option<String>,
    pub(crate) ready_log: Option<String>,
    pub(crate) ready_timeout_s: Option<Spanned<f64>>,
    pub(crate) stop_grace_s: Option<Spanned<f64>>,
    pub(crate) port: Option<u16>,
    pub(crate) cwd: Option<String>,
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) log_pattern: Option<Spanned<String>>,
    pub(crate) replicas: Option<Spanned<i64>>,
    pub(crate) replicas_command: Option<Spanned<Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHarness {
    pub(crate) command: Spanned<Vec<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMock {
    pub(crate) scenario: Option<String>,
    pub(crate) seed: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSession {
    pub(crate) file: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStep {
    pub(crate) concurrency: Option<Spanned<i64>>,
    pub(crate) timeout_s: Option<Spanned<f64>>,
    pub(crate) sample_ms: Option<Spanned<i64>>,
    pub(crate) arrival_rate: Option<Spanned<f64>>,
    pub(crate) resident: Option<Spanned<i64>>,
    pub(crate) probe_path: Option<Spanned<String>>,
    pub(crate) slow_share: Option<Spanned<f64>>,
    pub(crate) slow_read_bps: Option<Spanned<f64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawThresholds {
    pub(crate) error_rate: Option<Spanned<f64>>,
    pub(crate) p99_session_ms: Option<Spanned<f64>>,
    pub(crate) peak_rss_mb: Option<Spanned<f64>>,
    pub(crate) harness_lag_ms: Option<Spanned<f64>>,
}
