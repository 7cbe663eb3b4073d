//! Deterministic failure scripts: failures that happen by rule, not by a draw, so a retry
//! path can be tested the same way every time.
//!
//! ```toml
//! [[models."m".fail]]
//! attempts = 2            # the first 2 attempts of each call fail …
//! with = "overloaded"     # … with 529 (Anthropic) / 503 (OpenAI); the 3rd succeeds
//! [[models."m".fail]]
//! every = 5               # every 5th request to this model fails (retries included)
//! with = "server_error"
//! [[models."m".fail]]
//! attempts = 1            # the first attempt of each call is cut mid-stream …
//! with = "cut"
//! at_token = 20           # … after 20 tokens; the retry streams whole
//! ```
//!
//! A call is one conversation sent by one session; its attempts are how many times the
//! same conversation was sent (the ledger counts them). The first rule that applies wins,
//! and a scripted failure takes the place of the seeded draw for that request. `with` is
//! one of rate_limit, server_error, overloaded, reset, cut.

use crate::failures::rates::Injected;
use serde::Deserialize;

/// One rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FailRule {
    pub when: When,
    pub with: Injected,
    /// For `cut`: the tokens sent before the cut (none: half-way).
    pub at_token: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// The first N attempts of each call.
    Attempts(u32),
    /// Every Mth call to the model.
    Every(u64),
}

/// A failure rule: which requests fail and how — exactly one of `attempts` or `every`,
/// and `with`, the failure.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRule {
    /// Fail the first N attempts (≥ 1) of each call, a call being one conversation sent by
    /// one session; attempt N+1 succeeds.
    attempts: Option<u32>,
    /// Fail every Mth request (≥ 1) to this model over the run, retries included.
    every: Option<u64>,
    /// How the request fails: "rate_limit" (429), "server_error" (500), "overloaded"
    /// (503/529), "reset" (connection dropped) or "cut" (stream cut mid-way).
    with: String,
    /// For with = "cut" only: output tokens sent before the cut. Default: half-way.
    at_token: Option<u32>,
}

impl RawRule {
    /// The rule, or what is wrong with it.
    pub(crate) fn check(&self) -> Result<FailRule, String> {
        let when = match (self.attempts, self.every) {
            (Some(n), None) if n >= 1 => When::Attempts(n),
            (None, Some(m)) if m >= 1 => When::Every(m),
            (Some(_), None) | (None, Some(_)) => {
                return Err("attempts and every count from 1".into())
            }
            _ => {
                return Err(
                    "each rule needs exactly one of attempts = N (the first N attempts of each call) or every = M (every Mth call)"
                        .into(),
                )
            }
        };
        let with = match self.with.as_str() {
            "rate_limit" => Injected::RateLimit,
            "server_error" => Injected::ServerError,
            "overloaded" => Injected::Overloaded,
            "reset" => Injected::Reset,
            "cut" => Injected::Cut,
            other => {
                return Err(format!(
                    "with = {other:?}: use rate_limit, server_error, overloaded, reset or cut"
                ))
            }
        };
        if self.at_token.is_some() && with != Injected::Cut {
            return Err("at_token belongs to with = \"cut\"".into());
        }
        Ok(FailRule {
            when,
            with,
            at_token: self.at_token,
        })
    }
}

/// The scripted failure of a request: its call's attempt (0 for the first) and the
/// model's call count so far (1 for the first call of the run).
pub fn scripted(rules: &[FailRule], attempt: u32, nth_call: u64) -> Option<FailRule> {
    rules.iter().copied().find(|r| match r.when {
        When::Attempts(n) => attempt < n,
        When::Every(m) => nth_call.is_multiple_of(m),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(attempts: Option<u32>, every: Option<u64>, with: &str) -> Result<FailRule, String> {
        RawRule {
            attempts,
            every,
            with: with.into(),
            at_token: None,
        }
        .check()
    }

    #[test]
    fn the_first_attempts_fail_then_the_call_goes_through() {
        let rules = [rule(Some(2), None, "overloaded").unwrap()];
        let fates: Vec<bool> = (0..4).map(|a| scripted(&rules, a, 1).is_some()).collect();
        assert_eq!(fates, [true, true, false, false]);
        let every = [rule(None, Some(3), "server_error").unwrap()];
        let hits: Vec<u64> = (1..=9)
            .filter(|n| scripted(&every, 0, *n).is_some())
            .collect();
        assert_eq!(hits, [3, 6, 9]);
    }

    #[test]
    fn bad_rules_say_what_to_write() {
        assert!(rule(None, None, "cut")
            .unwrap_err()
            .contains("exactly one of"));
        assert!(rule(Some(1), Some(2), "cut")
            .unwrap_err()
            .contains("exactly one of"));
        assert!(rule(Some(0), None, "cut")
            .unwrap_err()
            .contains("count from 1"));
        assert!(rule(Some(1), None, "boom")
            .unwrap_err()
            .contains("use rate_limit"));
        let mut r = RawRule {
            attempts: Some(1),
            every: None,
            with: "reset".into(),
            at_token: Some(3),
        };
        assert!(r.check().unwrap_err().contains("at_token belongs"));
        r.with = "cut".into();
        assert_eq!(r.check().unwrap().at_token, Some(3));
    }
}
