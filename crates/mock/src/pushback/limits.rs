//! What a provider's pushback is set to: per-key quotas and generation capacity.
//!
//! ```toml
//! [provider]                 # the whole provider: every model shares these
//! quota = { rpm = 600, itpm = 100000, otpm = 20000, burst_s = 1 }
//! capacity = { max_in_flight = 8, max_queue = 32, slowdown_at_full = 2.0 }
//! [models."gpt-4o-mini"]     # or one model (each key has its own buckets per model)
//! quota = { rpm = 60, tpm = 30000 }
//! ```
//!
//! A quota holds per API key (`Authorization: Bearer KEY` or `x-api-key`): requests
//! (`rpm`), input plus output tokens (`tpm`, OpenAI's), input tokens (`itpm`) and output
//! tokens (`otpm`, Anthropic's) per minute, each a token bucket that holds `burst_s`
//! seconds of the quota (60 by default: a whole minute's quota may go at once; providers
//! may enforce it per second, `burst_s = 1`); a request larger than a bucket passes when
//! the bucket is full and leaves it in debt, and only one larger than the whole minute's
//! quota is refused as too large. Capacity is the provider's generation
//! slots: `max_in_flight` replies at once, the rest wait first in, first out (the wait
//! counts in their time to first token); with `max_queue` the queue is bounded and a
//! request that finds it full gets 529 `overloaded_error` (Anthropic) or 503 (OpenAI)
//! with `retry-after`. `slowdown_at_full` stretches the time per token with occupancy:
//! 1.0 with one reply in flight, rising linearly to this factor when every slot is busy.

use serde::{Deserialize, Serialize};

/// Per-key quotas, per minute.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quota {
    /// Requests per minute per API key (positive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpm: Option<f64>,
    /// Input plus output tokens per minute per API key (positive; OpenAI's kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm: Option<f64>,
    /// Input tokens per minute per API key (positive; Anthropic's kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itpm: Option<f64>,
    /// Output tokens per minute per API key (positive; Anthropic's kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otpm: Option<f64>,
    /// Seconds of quota a full bucket holds.
    #[serde(default = "minute")]
    pub burst_s: f64,
}

fn minute() -> f64 {
    60.0
}

/// Generation slots and their queue.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Capacity {
    /// Replies generated at once, 1 to 1000000. Required.
    pub max_in_flight: u32,
    /// Requests that may wait for a slot; none: the queue is unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_queue: Option<u32>,
    /// Factor on the time per token when every slot is busy, rising linearly from 1.0 with
    /// one reply in flight; 1.0 to 100. Default 1.0.
    #[serde(default = "one")]
    pub slowdown_at_full: f64,
    /// What `retry-after` / `retry-after-ms` announce when the queue is full.
    #[serde(default = "second")]
    pub retry_after_ms: u64,
}

fn one() -> f64 {
    1.0
}

fn second() -> u64 {
    1000
}

/// A provider's or one model's pushback.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Per-API-key quotas per minute, as token buckets; a request over one gets the API's
    /// 429 with retry-after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<Quota>,
    /// The provider's generation slots and their queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
}

/// Which bucket of a quota: what it counts (its names in headers and words are the
/// APIs', in `wire`).
pub use wire::Bucket as Dim;

impl Quota {
    /// The quota per minute of each bucket that is set.
    pub fn dims(&self) -> impl Iterator<Item = (Dim, f64)> + '_ {
        Dim::ALL.into_iter().filter_map(|d| Some((d, self.get(d)?)))
    }

    pub fn get(&self, d: Dim) -> Option<f64> {
        match d {
            Dim::Requests => self.rpm,
            Dim::Tokens => self.tpm,
            Dim::InputTokens => self.itpm,
            Dim::OutputTokens => self.otpm,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.dims().next().is_none() {
            return Err(
                "a quota needs at least one of rpm, tpm, itpm, otpm (per minute, per API key)"
                    .into(),
            );
        }
        for (d, v) in self.dims() {
            if !v.is_finite() || !(0.001..=1e12).contains(&v) {
                return Err(format!(
                    "{} must be a positive number per minute (got {v})",
                    ["rpm", "tpm", "itpm", "otpm"][d as usize]
                ));
            }
        }
        if !self.burst_s.is_finite() || !(0.001..=3600.0).contains(&self.burst_s) {
            return Err(format!(
                "burst_s must be between 0.001 and 3600 seconds (got {})",
                self.burst_s
            ));
        }
        Ok(())
    }
}

impl Capacity {
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=1_000_000).contains(&self.max_in_flight) {
            return Err(format!(
                "max_in_flight must be between 1 and 1000000 (got {})",
                self.max_in_flight
            ));
        }
        let s = self.slowdown_at_full;
        if !s.is_finite() || !(1.0..=100.0).contains(&s) {
            return Err(format!(
                "slowdown_at_full must be between 1.0 (no slowdown) and 100 (got {s})"
            ));
        }
        Ok(())
    }

    /// The factor on the time per token with `occupied` slots busy (this reply's included).
    pub fn slowdown(&self, occupied: u32) -> f64 {
        if self.max_in_flight <= 1 {
            return 1.0;
        }
        let share = (occupied.saturating_sub(1)) as f64 / (self.max_in_flight - 1) as f64;
        1.0 + (self.slowdown_at_full - 1.0) * share.min(1.0)
    }
}

impl Limits {
    pub fn is_none(&self) -> bool {
        self.quota.is_none() && self.capacity.is_none()
    }

    pub fn validate(&self) -> Result<(), String> {
        if let Some(q) = &self.quota {
            q.validate().map_err(|e| format!("quota: {e}"))?;
        }
        if let Some(c) = &self.capacity {
            c.validate().map_err(|e| format!("capacity: {e}"))?;
        }
        Ok(())
    }

    /// "600 requests/min and 100,000 input tokens/min per key; 8 slots, queue of 32".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(q) = &self.quota {
            let each: Vec<String> = q
                .dims()
                .map(|(d, v)| format!("{} {}/min", thousands(v), d.words()))
                .collect();
            parts.push(format!("{} per key", each.join(" and ")));
        }
        if let Some(c) = &self.capacity {
            let queue = match c.max_queue {
                Some(q) => format!("queue of {q}"),
                None => "unbounded queue".into(),
            };
            parts.push(format!("{} slots, {queue}", c.max_in_flight));
        }
        parts.join("; ")
    }
}

/// 100000 → "100,000"; fractions keep one decimal.
pub fn thousands(v: f64) -> String {
    if v.fract().abs() > 1e-9 {
        return format!("{v:.1}");
    }
    let digits = format!("{}", v as u64);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slowdown_is_linear_from_one_to_full() {
        let c = Capacity {
            max_in_flight: 5,
            max_queue: None,
            slowdown_at_full: 3.0,
            retry_after_ms: 1000,
        };
        assert_eq!(c.slowdown(1), 1.0);
        assert_eq!(c.slowdown(3), 2.0);
        assert_eq!(c.slowdown(5), 3.0);
        assert_eq!(c.slowdown(9), 3.0);
    }

    #[test]
    fn described_and_validated() {
        let l = Limits {
            quota: Some(Quota {
                rpm: Some(600.0),
                tpm: None,
                itpm: Some(100_000.0),
                otpm: None,
                burst_s: 60.0,
            }),
            capacity: Some(Capacity {
                max_in_flight: 8,
                max_queue: Some(32),
                slowdown_at_full: 1.0,
                retry_after_ms: 1000,
            }),
        };
        assert_eq!(
            l.describe(),
            "600 requests/min and 100,000 input tokens/min per key; 8 slots, queue of 32"
        );
        assert!(l.validate().is_ok());
        let mut bad = l;
        bad.quota.as_mut().unwrap().rpm = Some(-1.0);
        assert_eq!(
            bad.validate().unwrap_err(),
            "quota: rpm must be a positive number per minute (got -1)"
        );
        let empty = Quota {
            rpm: None,
            tpm: None,
            itpm: None,
            otpm: None,
            burst_s: 60.0,
        };
        assert!(empty
            .validate()
            .unwrap_err()
            .contains("at least one of rpm"));
    }
}
