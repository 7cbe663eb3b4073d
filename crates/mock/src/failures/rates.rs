//! Failure injection: which requests fail, and how, drawn from a seeded RNG.
//!
//! Rates are per request and per kind. Early kinds (429, 500, 503/529, a dropped
//! connection) replace the answer; late kinds (a stream cut mid-way, a stall between
//! chunks, a latency spike before the first token) spoil it while it is sent. The draw
//! is seeded from the conversation and how many times that same conversation was sent
//! before, so a retry can succeed where the first try failed, and a run replays exactly.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Failure rates (0..=1) and their parameters for one model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Failures {
    /// 429 with `retry-after` and the provider's rate-limit headers.
    pub rate_limit: f64,
    /// 500.
    pub server_error: f64,
    /// 503 (OpenAI) / 529 (Anthropic).
    pub overloaded: f64,
    /// Connection closed before the first byte of the response.
    pub reset: f64,
    /// Streaming: the connection is cut after part of the stream (non-streaming: like reset).
    pub cut: f64,
    /// Streaming: one stall of `stall_ms` between two chunks.
    pub stall: f64,
    /// Time to first token grows by `spike_ms`.
    pub spike: f64,
    /// What `retry-after` / `retry-after-ms` announce on a 429.
    pub retry_after_ms: u64,
    /// Length of an injected stall, in ms (≥ 0). Default 2000.
    pub stall_ms: f64,
    /// Time an injected latency spike adds to the time to first token, in ms (≥ 0). Default
    /// 3000.
    pub spike_ms: f64,
}

impl Default for Failures {
    fn default() -> Self {
        Failures::NONE
    }
}

/// What happens to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Injected {
    RateLimit,
    ServerError,
    Overloaded,
    Reset,
    Cut,
    Stall,
    Spike,
}

impl Injected {
    pub const ALL: [Injected; 7] = [
        Injected::RateLimit,
        Injected::ServerError,
        Injected::Overloaded,
        Injected::Reset,
        Injected::Cut,
        Injected::Stall,
        Injected::Spike,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Injected::RateLimit => "rate_limit",
            Injected::ServerError => "server_error",
            Injected::Overloaded => "overloaded",
            Injected::Reset => "reset",
            Injected::Cut => "cut",
            Injected::Stall => "stall",
            Injected::Spike => "spike",
        }
    }
}

/// The draw for one request: at most one early failure, and any late ones.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Draw {
    pub early: Option<Injected>,
    pub cut: bool,
    pub stall: bool,
    pub spike: bool,
}

impl Failures {
    /// No failures, and the default parameters for when rates are raised.
    pub const NONE: Failures = Failures {
        rate_limit: 0.0,
        server_error: 0.0,
        overloaded: 0.0,
        reset: 0.0,
        cut: 0.0,
        stall: 0.0,
        spike: 0.0,
        retry_after_ms: 1000,
        stall_ms: 2000.0,
        spike_ms: 3000.0,
    };

    pub fn is_none(&self) -> bool {
        self.rates().iter().all(|(_, r)| *r <= 0.0)
    }

    fn rates(&self) -> [(&'static str, f64); 7] {
        [
            ("rate_limit", self.rate_limit),
            ("server_error", self.server_error),
            ("overloaded", self.overloaded),
            ("reset", self.reset),
            ("cut", self.cut),
            ("stall", self.stall),
            ("spike", self.spike),
        ]
    }

    /// Names the first rate outside 0..=1, or a negative duration.
    pub fn validate(&self) -> Result<(), String> {
        for (name, r) in self.rates() {
            if !(0.0..=1.0).contains(&r) {
                return Err(format!("{name} must be a rate between 0 and 1 (got {r})"));
            }
        }
        let early = self.rate_limit + self.server_error + self.overloaded + self.reset;
        if early > 1.0 + 1e-9 {
            return Err(format!(
                "rate_limit + server_error + overloaded + reset must not exceed 1 (got {early})"
            ));
        }
        for (name, ms) in [("stall_ms", self.stall_ms), ("spike_ms", self.spike_ms)] {
            if !ms.is_finite() || ms < 0.0 {
                return Err(format!("{name} must be ≥ 0 (got {ms})"));
            }
        }
        Ok(())
    }

    /// Draws the fate of one request. Uses its own RNG so failure settings never
    /// change the content of successful replies.
    pub fn draw(&self, rng: &mut ChaCha8Rng) -> Draw {
        if self.is_none() {
            return Draw::default();
        }
        let u: f64 = rng.gen();
        let mut edge = 0.0;
        let mut early = None;
        for (kind, rate) in [
            (Injected::RateLimit, self.rate_limit),
            (Injected::ServerError, self.server_error),
            (Injected::Overloaded, self.overloaded),
            (Injected::Reset, self.reset),
        ] {
            edge += rate;
            if u < edge {
                early = Some(kind);
                break;
            }
        }
        Draw {
            early,
            cut: rng.gen::<f64>() < self.cut,
            stall: rng.gen::<f64>() < self.stall,
            spike: rng.gen::<f64>() < self.spike,
        }
    }

    /// Applies `PLIMSOLL_FAIL_<FIELD>` environment variables (e.g.
    /// `PLIMSOLL_FAIL_RATE_LIMIT=0.1`) on top of these settings.
    pub fn with_env(mut self, get: &impl Fn(&str) -> Option<String>) -> Result<Failures, String> {
        let mut map = serde_json::to_value(self).map_err(|e| e.to_string())?;
        let obj = map
            .as_object_mut()
            .expect("a struct serializes to an object");
        let keys: Vec<String> = obj.keys().cloned().collect();
        for key in keys {
            let var = format!("PLIMSOLL_FAIL_{}", key.to_uppercase());
            if let Some(raw) = get(&var) {
                let n: f64 = raw
                    .trim()
                    .parse()
                    .map_err(|_| format!("{var}={raw:?}: expected a number such as 0.05"))?;
                obj.insert(key, serde_json::json!(n));
            }
        }
        if let Some(ms) = obj.get("retry_after_ms").and_then(|v| v.as_f64()) {
            obj.insert(
                "retry_after_ms".into(),
                serde_json::json!(ms.max(0.0) as u64),
            );
        }
        self = serde_json::from_value(map).map_err(|e| e.to_string())?;
        self.validate()
            .map_err(|e| format!("PLIMSOLL_FAIL_*: {e}"))?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn rates_are_honoured_and_seeded() {
        let f = Failures {
            rate_limit: 0.2,
            overloaded: 0.1,
            cut: 0.5,
            ..Failures::default()
        };
        let run = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..10_000).map(|_| f.draw(&mut rng)).collect::<Vec<_>>()
        };
        let draws = run(4);
        assert_eq!(draws, run(4));
        let share = |pred: &dyn Fn(&Draw) -> bool| {
            draws.iter().filter(|d| pred(d)).count() as f64 / 10_000.0
        };
        assert!((share(&|d| d.early == Some(Injected::RateLimit)) - 0.2).abs() < 0.02);
        assert!((share(&|d| d.early == Some(Injected::Overloaded)) - 0.1).abs() < 0.02);
        assert!((share(&|d| d.cut) - 0.5).abs() < 0.02);
        assert_eq!(share(&|d| d.early == Some(Injected::Reset)), 0.0);
    }

    #[test]
    fn env_overrides_and_validates() {
        let env = |k: &str| (k == "PLIMSOLL_FAIL_SERVER_ERROR").then(|| "0.25".to_string());
        assert_eq!(
            Failures::default().with_env(&env).unwrap().server_error,
            0.25
        );
        let bad = |k: &str| (k == "PLIMSOLL_FAIL_CUT").then(|| "lots".to_string());
        assert!(Failures::default()
            .with_env(&bad)
            .unwrap_err()
            .contains("PLIMSOLL_FAIL_CUT"));
        let too_big = |k: &str| (k == "PLIMSOLL_FAIL_RESET").then(|| "2".to_string());
        assert!(Failures::default()
            .with_env(&too_big)
            .unwrap_err()
            .contains("reset must be a rate"));
    }
}
