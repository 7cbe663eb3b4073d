//! The budget: the limits a step must stay within to hold (`[budget]`, `--budget`), read
//! from a flag and said in words; and a budget a step broke. Which budgets a step breaks
//! is `analysis::budget`'s to decide.

use serde::{Deserialize, Serialize};

/// The limits a step must stay within to hold; a key left out is not judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Budget {
    /// p50 session time over the mock's own time.
    pub latency_inflation: Option<f64>,
    /// p50 session time over the same SUT's at the ladder's first level.
    pub latency_vs_single: Option<f64>,
    /// p99 of a turn's time, in ms.
    pub p99_turn_ms: Option<f64>,
    /// p99 of the time to the first streamed token, in ms.
    pub p99_ttft_ms: Option<f64>,
    /// p99 of the responsiveness probe (a small request beside the load, `[step] probe_path`).
    pub probe_p99_ms: Option<f64>,
    /// Failed sessions over all sessions.
    pub error_rate: Option<f64>,
    /// Peak RSS of the SUT's process tree.
    pub rss_mb: Option<f64>,
    /// Peak PSS of the SUT's process tree: each page its processes share counted once (a
    /// worker's forked job processes, a server's pre-forked workers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pss_mb: Option<f64>,
    /// Voice calls: p95 of the end of the caller's speech to the bot's first audio.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_p95_ms: Option<f64>,
    /// Voice calls: stall time (the caller's playback run dry, or holes in the audio) as a share of the time the replies played (their sound and the stalls).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_share: Option<f64>,
    /// LiveKit rooms: p99 of the wait from making the room to its agent ready in it, in
    /// ms (what calls arriving in a burst wait for dispatch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_p99_ms: Option<f64>,
    /// Voice calls: `response_p95_ms` is the default, not one the user set, so a ladder
    /// may judge it against one call's own pace (`analysis::pace`). Not a key of its own.
    #[serde(skip)]
    #[schemars(skip)]
    pub response_p95_default: bool,
    /// Voice calls: `stall_share` is the default, so a ladder may judge what more calls add
    /// to one call's own stalls (`analysis::pace`). Not a key of its own.
    #[serde(skip)]
    #[schemars(skip)]
    pub stall_share_default: bool,
}

/// A voice budget's default: replies start within 1.5 s at p95 …
pub const CALL_RESPONSE_P95_MS: f64 = 1500.0;
/// … and stall for at most 1 % of the time the replies play.
pub const CALL_STALL_SHARE: f64 = 0.01;

impl Default for Budget {
    fn default() -> Self {
        Budget {
            latency_inflation: Some(2.0),
            latency_vs_single: None,
            p99_turn_ms: None,
            p99_ttft_ms: None,
            probe_p99_ms: None,
            error_rate: Some(0.0),
            rss_mb: None,
            pss_mb: None,
            response_p95_ms: None,
            stall_share: None,
            agent_p99_ms: None,
            response_p95_default: false,
            stall_share_default: false,
        }
    }
}

impl Budget {
    /// No budget at all: what a flag naming a few fills in (`run --budget rss_mb=4096`
    /// judges the RSS and nothing else).
    pub fn none() -> Budget {
        Budget {
            latency_inflation: None,
            error_rate: None,
            ..Budget::default()
        }
    }
}

/// The names `--budget` and `[budget]` accept, in the order they are judged.
pub const BUDGETS: &[&str] = &[
    "latency_inflation",
    "latency_vs_single",
    "p99_turn_ms",
    "p99_ttft_ms",
    "probe_p99_ms",
    "error_rate",
    "rss_mb",
    "pss_mb",
    "response_p95_ms",
    "stall_share",
    "agent_p99_ms",
];

impl Budget {
    /// Sets one budget by name; `off` (or `none`) stops judging it.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let v = match value.trim() {
            // A voice budget turned off stays off when `for_calls` fills in the defaults.
            "off" | "none" if VOICE.contains(&name.trim()) => Some(f64::INFINITY),
            "off" | "none" => None,
            t => {
                let x: f64 = t
                    .trim_end_matches("ms")
                    .trim_end_matches("MB")
                    .parse()
                    .map_err(|_| format!("budget {name}: {value:?} is not a number (or off)"))?;
                if x.is_nan() || x < 0.0 {
                    return Err(format!("budget {name}: must be 0 or more (got {x})"));
                }
                Some(x)
            }
        };
        let slot = match name.trim() {
            "latency_inflation" => &mut self.latency_inflation,
            "latency_vs_single" => &mut self.latency_vs_single,
            "p99_turn_ms" => &mut self.p99_turn_ms,
            "p99_ttft_ms" => &mut self.p99_ttft_ms,
            "probe_p99_ms" => &mut self.probe_p99_ms,
            "error_rate" => &mut self.error_rate,
            "rss_mb" => &mut self.rss_mb,
            "pss_mb" => &mut self.pss_mb,
            "response_p95_ms" => &mut self.response_p95_ms,
            "stall_share" => &mut self.stall_share,
            "agent_p99_ms" => &mut self.agent_p99_ms,
            other => {
                return Err(format!(
                    "budget {other:?} is not known; use one of {}",
                    BUDGETS.join(", ")
                ))
            }
        };
        *slot = v;
        Ok(())
    }

    /// `latency_inflation=3,p99_turn_ms=800` over these budgets.
    pub fn apply_flag(&mut self, s: &str) -> Result<(), String> {
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| {
                format!(
                    "--budget {part:?}: write NAME=VALUE, e.g. latency_inflation=3,p99_turn_ms=800"
                )
            })?;
            self.set(k, v)?;
        }
        Ok(())
    }

    /// The budgets in force, in words: "latency inflation ≤ 2, error rate ≤ 0".
    pub fn describe(&self) -> String {
        let mut out = Vec::new();
        for (name, v) in self.entries() {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                out.push(format!("{} ≤ {}", words(name), num(v)));
            }
        }
        if out.is_empty() {
            "no budget".into()
        } else {
            out.join(", ")
        }
    }

    /// The budget a run of voice calls is judged by: the voice budgets (their defaults
    /// where unset: response p95 ≤ 1.5 s, stalls ≤ 1 % of the replies' time) in place of
    /// the latency budgets made for text sessions — a call's time is its speech, not the
    /// SUT's work, so latency inflation, latency vs 1 session and TTFT say nothing of it.
    pub fn for_calls(self) -> Budget {
        Budget {
            latency_inflation: None,
            latency_vs_single: None,
            p99_ttft_ms: None,
            response_p95_ms: Some(self.response_p95_ms.unwrap_or(CALL_RESPONSE_P95_MS)),
            response_p95_default: self.response_p95_ms.is_none(),
            stall_share: Some(self.stall_share.unwrap_or(CALL_STALL_SHARE)),
            stall_share_default: self.stall_share.is_none(),
            ..self
        }
    }

    pub fn entries(&self) -> [(&'static str, Option<f64>); 11] {
        [
            ("latency_inflation", self.latency_inflation),
            ("latency_vs_single", self.latency_vs_single),
            ("p99_turn_ms", self.p99_turn_ms),
            ("p99_ttft_ms", self.p99_ttft_ms),
            ("probe_p99_ms", self.probe_p99_ms),
            ("error_rate", self.error_rate),
            ("rss_mb", self.rss_mb),
            ("pss_mb", self.pss_mb),
            ("response_p95_ms", self.response_p95_ms),
            ("stall_share", self.stall_share),
            ("agent_p99_ms", self.agent_p99_ms),
        ]
    }
}

/// The budgets only voice calls are judged by.
const VOICE: &[&str] = &["response_p95_ms", "stall_share"];

/// One check a step is judged by: a figure against its limit. A step's checks are one
/// list (the config's `[thresholds]` and the budgets it is judged by), which its exit
/// code, its JUnit cases, its CI summary and its terminal lines all read; a ladder's
/// levels are judged by budget checks of the same kind (`analysis::budget::checks`).
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The limit's key as written: `p99_session_ms`, `peak_rss_mb`, or a budget's name.
    pub name: String,
    pub from: CheckFrom,
    pub limit: f64,
    /// The step's figure; None where the step has none (the check is then skipped).
    pub value: Option<f64>,
    pub over: bool,
}

/// The config's `[thresholds]` a step is checked against (0: not checked).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Thresholds {
    pub p99_session_ms: f64,
    pub peak_rss_mb: f64,
}

/// Where a check's limit was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckFrom {
    /// `[thresholds]` in the config.
    Threshold,
    /// A budget (`run --budget`, or the config's `[budget]` where it is judged).
    Budget,
}

impl Check {
    /// The budget this check found broken, when it is a budget's and over.
    pub fn breach(&self) -> Option<Breach> {
        (self.over && self.from == CheckFrom::Budget).then(|| Breach {
            budget: self.name.clone(),
            value: self.value.unwrap_or_default(),
            limit: self.limit,
        })
    }
}

/// A budget a step broke.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Breach {
    pub budget: String,
    pub value: f64,
    pub limit: f64,
}

impl Breach {
    pub fn text(&self) -> String {
        format!(
            "{} {} > {}",
            words(&self.budget),
            num(self.value),
            num(self.limit)
        )
    }
}

pub fn words(name: &str) -> String {
    match name {
        "latency_vs_single" => "latency vs 1 session".into(),
        "p99_turn_ms" => "p99 turn ms".into(),
        "p99_ttft_ms" => "p99 TTFT ms".into(),
        "probe_p99_ms" => "probe p99 ms".into(),
        "rss_mb" => "RSS MB".into(),
        "pss_mb" => "PSS MB".into(),
        "response_p95_ms" => "response p95 ms".into(),
        "agent_p99_ms" => "agent ready p99 ms".into(),
        other => other.replace('_', " "),
    }
}

/// A number as people read it: 3 significant digits, no trailing zeros.
pub fn num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_people_write_them() {
        assert_eq!(num(1.0234), "1.02");
        assert_eq!(num(3.2674901460423217e-6), "0.00000327");
        assert_eq!(num(553.2136109950518), "553");
        assert_eq!(num(2.0), "2");
        assert_eq!(num(97.4), "97.4");
        assert_eq!(num(0.0), "0");
    }

    #[test]
    fn flags_set_and_unset_budgets_and_name_the_fix() {
        let mut b = Budget::default();
        b.apply_flag("latency_inflation=3, p99_turn_ms=800ms,error_rate=off")
            .unwrap();
        assert_eq!(b.latency_inflation, Some(3.0));
        assert_eq!(b.p99_turn_ms, Some(800.0));
        assert_eq!(b.error_rate, None);
        assert!(b.apply_flag("p99=3").unwrap_err().contains("one of"));
        assert!(b.apply_flag("rss_mb").unwrap_err().contains("NAME=VALUE"));
        assert!(b
            .apply_flag("rss_mb=lots")
            .unwrap_err()
            .contains("not a number"));
        assert_eq!(
            Budget::default().describe(),
            "latency inflation ≤ 2, error rate ≤ 0"
        );
    }

    #[test]
    fn calls_are_judged_by_the_voice_budget_and_off_stays_off() {
        assert_eq!(
            Budget::default().for_calls().describe(),
            "error rate ≤ 0, response p95 ms ≤ 1500, stall share ≤ 0.01"
        );
        let mut b = Budget::default();
        b.apply_flag("response_p95_ms=off,stall_share=0.05,rss_mb=500")
            .unwrap();
        assert_eq!(
            b.for_calls().describe(),
            "error rate ≤ 0, RSS MB ≤ 500, stall share ≤ 0.05"
        );
    }
}
