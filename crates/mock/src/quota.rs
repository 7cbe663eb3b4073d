//! Per-key token buckets: whether a request may pass its quota, what it leaves, and
//! the rate-limit headers that say so (OpenAI's `x-ratelimit-*`, Anthropic's
//! `anthropic-ratelimit-*`), on refusals and on every successful reply.
//!
//! A bucket holds `burst_s` seconds of its quota, refills continuously at the quota's
//! rate and starts full. A request needs one request and its input tokens; output tokens
//! are known only once the reply is decided, so a request needs the output bucket not to
//! be empty, and its reply's tokens are taken afterwards (the bucket may go below zero,
//! and the next requests wait until it refills).

use crate::clock::{now_unix_ms, rfc3339};
use crate::limits::{Dim, Quota};
use axum::http::{HeaderMap, HeaderValue};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Instant;
use wire::Api;

const SHARDS: usize = 16;

#[derive(Clone, Copy, Debug)]
struct Bucket {
    level: f64,
    at: Instant,
}

/// One bucket's size and rate.
#[derive(Clone, Copy, Debug)]
struct Size {
    per_min: f64,
    cap: f64,
}

impl Size {
    fn of(per_min: f64, burst_s: f64) -> Size {
        Size {
            per_min,
            cap: (per_min * burst_s / 60.0).max(1.0),
        }
    }

    fn per_s(&self) -> f64 {
        self.per_min / 60.0
    }
}

impl Bucket {
    fn refill(&mut self, s: Size, now: Instant) {
        let dt = now.saturating_duration_since(self.at).as_secs_f64();
        self.level = (self.level + dt * s.per_s()).min(s.cap);
        self.at = now;
    }

    /// Milliseconds until the bucket holds `need` (0 when it does).
    fn wait_ms(&self, s: Size, need: f64) -> u64 {
        let short = need - self.level;
        if short <= 0.0 {
            0
        } else {
            (short / s.per_s() * 1000.0).ceil() as u64
        }
    }
}

/// What one key has used under one quota.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Usage {
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub refused: u64,
}

impl Usage {
    fn add(&mut self, o: &Usage) {
        self.requests += o.requests;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.refused += o.refused;
    }
}

struct KeyState {
    quota: Quota,
    buckets: [Option<Bucket>; 4],
    usage: Usage,
}

impl KeyState {
    fn new(q: &Quota, now: Instant) -> KeyState {
        let mut buckets = [None; 4];
        for (d, per_min) in q.dims() {
            buckets[d as usize] = Some(Bucket {
                level: Size::of(per_min, q.burst_s).cap,
                at: now,
            });
        }
        KeyState {
            quota: *q,
            buckets,
            usage: Usage::default(),
        }
    }

    /// Each set bucket, refilled to `now`, with its size.
    fn refilled(&mut self, now: Instant) -> impl Iterator<Item = (Dim, Size, &mut Bucket)> {
        let q = self.quota;
        self.buckets
            .iter_mut()
            .enumerate()
            .filter_map(move |(i, b)| {
                let b = b.as_mut()?;
                let d = Dim::ALL[i];
                let s = Size::of(q.get(d).unwrap_or(1.0), q.burst_s);
                b.refill(s, now);
                Some((d, s, b))
            })
    }

    fn readings(&mut self, now: Instant) -> Vec<Reading> {
        self.refilled(now)
            .map(|(dim, s, b)| Reading {
                dim,
                limit: s.per_min,
                remaining: b.level.max(0.0).floor() as u64,
                reset_ms: b.wait_ms(s, s.cap),
            })
            .collect()
    }
}

/// What a bucket says after a request: its quota per minute, what is left, and how long
/// until it is full again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    pub dim: Dim,
    pub limit: f64,
    pub remaining: u64,
    pub reset_ms: u64,
}

/// A request over its quota.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Refused {
    pub dim: Dim,
    pub limit: f64,
    pub requested: u64,
    /// Until the bucket holds what the request needs.
    pub retry_after_ms: u64,
    /// The request can never pass: it needs more than the bucket holds when full.
    pub too_large: bool,
}

/// Every key's buckets, by scope and key: a scope is `*` for the provider's quota or a
/// model's name for its own. Sharded by key, so keys rarely share a lock.
pub struct Quotas {
    shards: Vec<Mutex<HashMap<String, HashMap<String, KeyState>>>>,
}

impl Default for Quotas {
    fn default() -> Self {
        Quotas {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }
}

impl Quotas {
    fn with<R>(
        &self,
        scope: &str,
        key: &str,
        q: &Quota,
        now: Instant,
        f: impl FnOnce(&mut KeyState) -> R,
    ) -> R {
        let i = (crate::hash::fnv1a(0, key.as_bytes()) as usize) % SHARDS;
        let mut shard = self.shards[i].lock().unwrap_or_else(|p| p.into_inner());
        // Looked up by &str first: no allocation for a scope and key already seen.
        if !shard.contains_key(scope) {
            shard.insert(scope.to_string(), HashMap::new());
        }
        let keys = shard.get_mut(scope).expect("inserted above");
        if !keys.contains_key(key) {
            keys.insert(key.to_string(), KeyState::new(q, now));
        }
        let st = keys.get_mut(key).expect("inserted above");
        if st.quota != *q {
            // Changed live: the new quota starts with full buckets, the usage stays.
            let usage = st.usage;
            *st = KeyState::new(q, now);
            st.usage = usage;
        }
        f(st)
    }

    /// Takes one request and its input tokens, or refuses with the first bucket short.
    pub fn admit(
        &self,
        scope: &str,
        key: &str,
        q: &Quota,
        input_tokens: u32,
        now: Instant,
    ) -> Result<(), Refused> {
        self.with(scope, key, q, now, |st| {
            let input = input_tokens as f64;
            let need = |d: Dim| match d {
                Dim::Requests => 1.0,
                Dim::Tokens | Dim::InputTokens => input,
                // Output is taken after the reply; an empty bucket refuses.
                Dim::OutputTokens => 1.0,
            };
            let mut short = None;
            for (d, s, b) in st.refilled(now) {
                if b.level < need(d) - 1e-9 {
                    short = Some(Refused {
                        dim: d,
                        limit: s.per_min,
                        requested: need(d) as u64,
                        retry_after_ms: b.wait_ms(s, need(d)).max(1),
                        too_large: need(d) > s.cap,
                    });
                    break;
                }
            }
            if let Some(r) = short {
                st.usage.refused += 1;
                return Err(r);
            }
            for (d, _, b) in st.refilled(now) {
                if d != Dim::OutputTokens {
                    b.level -= need(d);
                }
            }
            st.usage.requests += 1;
            st.usage.input_tokens += input_tokens as u64;
            Ok(())
        })
    }

    /// Takes a decided reply's output tokens, and reads every bucket for the headers.
    pub fn spend_output(
        &self,
        scope: &str,
        key: &str,
        q: &Quota,
        output_tokens: u32,
        now: Instant,
    ) -> Vec<Reading> {
        self.with(scope, key, q, now, |st| {
            for (d, _, b) in st.refilled(now) {
                if matches!(d, Dim::Tokens | Dim::OutputTokens) {
                    b.level -= output_tokens as f64;
                }
            }
            st.usage.output_tokens += output_tokens as u64;
            st.readings(now)
        })
    }

    /// What each key used, by the key's label, over every scope.
    pub fn usage(&self) -> BTreeMap<String, Usage> {
        let mut out: BTreeMap<String, Usage> = BTreeMap::new();
        for shard in &self.shards {
            for keys in shard.lock().unwrap_or_else(|p| p.into_inner()).values() {
                for (key, st) in keys {
                    out.entry(label(key)).or_default().add(&st.usage);
                }
            }
        }
        out
    }
}

/// The key as reports show it: short keys whole, long ones by their ends.
pub fn label(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 12 {
        key.to_string()
    } else {
        let head: String = chars[..4].iter().collect();
        let tail: String = chars[chars.len() - 4..].iter().collect();
        format!("{head}…{tail}")
    }
}

/// The API key a request carries (`-` for none).
pub fn key_of(headers: &HeaderMap) -> String {
    let get = |n: &str| headers.get(n).and_then(|v| v.to_str().ok());
    get("authorization")
        .map(|v| v.strip_prefix("Bearer ").unwrap_or(v).trim())
        .or_else(|| get("x-api-key").map(str::trim))
        .filter(|k| !k.is_empty())
        .unwrap_or("-")
        .to_string()
}

/// 1500 → "1.5s", 360000 → "6m0s", 20 → "20ms": OpenAI's reset format.
fn go_duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        let s = format!("{:.3}", ms as f64 / 1000.0);
        format!("{}s", s.trim_end_matches('0').trim_end_matches('.'))
    } else {
        format!("{}m{}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

/// The names of a bucket's limit, remaining and reset headers in `api` (OpenAI has no
/// headers for separate input and output token quotas).
fn header_names(api: Api, d: Dim) -> Option<[&'static str; 3]> {
    Some(match (api == Api::Messages, d) {
        (true, Dim::Requests) => [
            "anthropic-ratelimit-requests-limit",
            "anthropic-ratelimit-requests-remaining",
            "anthropic-ratelimit-requests-reset",
        ],
        (true, Dim::Tokens) => [
            "anthropic-ratelimit-tokens-limit",
            "anthropic-ratelimit-tokens-remaining",
            "anthropic-ratelimit-tokens-reset",
        ],
        (true, Dim::InputTokens) => [
            "anthropic-ratelimit-input-tokens-limit",
            "anthropic-ratelimit-input-tokens-remaining",
            "anthropic-ratelimit-input-tokens-reset",
        ],
        (true, Dim::OutputTokens) => [
            "anthropic-ratelimit-output-tokens-limit",
            "anthropic-ratelimit-output-tokens-remaining",
            "anthropic-ratelimit-output-tokens-reset",
        ],
        (false, Dim::Requests) => [
            "x-ratelimit-limit-requests",
            "x-ratelimit-remaining-requests",
            "x-ratelimit-reset-requests",
        ],
        (false, Dim::Tokens) => [
            "x-ratelimit-limit-tokens",
            "x-ratelimit-remaining-tokens",
            "x-ratelimit-reset-tokens",
        ],
        (false, _) => return None,
    })
}

/// The rate-limit headers of `api` for these readings.
pub fn put_headers(h: &mut HeaderMap, api: Api, readings: &[Reading]) {
    for r in readings {
        let Some([limit, remaining, reset]) = header_names(api, r.dim) else {
            continue;
        };
        let reset_value = if api == Api::Messages {
            rfc3339(now_unix_ms() + r.reset_ms)
        } else {
            go_duration(r.reset_ms)
        };
        for (name, value) in [
            (limit, (r.limit.round() as u64).to_string()),
            (remaining, r.remaining.to_string()),
            (reset, reset_value),
        ] {
            if let Ok(v) = HeaderValue::from_str(&value) {
                h.insert(axum::http::HeaderName::from_static(name), v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn q(rpm: f64, burst_s: f64) -> Quota {
        Quota {
            rpm: Some(rpm),
            tpm: None,
            itpm: None,
            otpm: None,
            burst_s,
        }
    }

    #[test]
    fn a_minute_of_requests_passes_then_the_bucket_refills_at_its_rate() {
        let qs = Quotas::default();
        let t0 = Instant::now();
        let quota = q(60.0, 60.0);
        for _ in 0..60 {
            qs.admit("*", "k1", &quota, 10, t0).unwrap();
        }
        let r = qs.admit("*", "k1", &quota, 10, t0).unwrap_err();
        assert_eq!(
            (r.dim, r.retry_after_ms, r.too_large),
            (Dim::Requests, 1000, false)
        );
        // Another key has its own bucket.
        qs.admit("*", "k2", &quota, 10, t0).unwrap();
        // One second later one request has come back.
        let t1 = t0 + Duration::from_millis(1000);
        qs.admit("*", "k1", &quota, 10, t1).unwrap();
        assert!(qs.admit("*", "k1", &quota, 10, t1).is_err());
        let u = qs.usage();
        assert_eq!((u["k1"].requests, u["k1"].refused), (61, 2));
    }

    #[test]
    fn output_tokens_are_taken_after_the_reply_and_read_in_headers() {
        let qs = Quotas::default();
        let t0 = Instant::now();
        let quota = Quota {
            otpm: Some(600.0),
            itpm: Some(6000.0),
            ..q(600.0, 1.0)
        };
        qs.admit("m", "k", &quota, 50, t0).unwrap();
        let r = qs.spend_output("m", "k", &quota, 15, t0);
        let get = |d: Dim| r.iter().find(|x| x.dim == d).copied().unwrap();
        // Buckets of one second: 10 requests, 100 input and 10 output tokens.
        assert_eq!(get(Dim::Requests).remaining, 9);
        assert_eq!(get(Dim::InputTokens).remaining, 50);
        assert_eq!(get(Dim::OutputTokens).remaining, 0);
        assert_eq!(get(Dim::OutputTokens).reset_ms, 1500);
        // The output bucket is below zero: the next request waits for it.
        let e = qs.admit("m", "k", &quota, 1, t0).unwrap_err();
        assert_eq!((e.dim, e.retry_after_ms), (Dim::OutputTokens, 600));
        let e = qs.admit("m", "k2", &quota, 500, t0).unwrap_err();
        assert!(e.too_large && e.dim == Dim::InputTokens, "{e:?}");
    }

    #[test]
    fn headers_in_each_apis_format() {
        let r = [Reading {
            dim: Dim::Requests,
            limit: 600.0,
            remaining: 7,
            reset_ms: 1500,
        }];
        let mut h = HeaderMap::new();
        put_headers(&mut h, Api::ChatCompletions, &r);
        assert_eq!(h["x-ratelimit-limit-requests"], "600");
        assert_eq!(h["x-ratelimit-remaining-requests"], "7");
        assert_eq!(h["x-ratelimit-reset-requests"], "1.5s");
        let mut h = HeaderMap::new();
        put_headers(&mut h, Api::Messages, &r);
        assert_eq!(h["anthropic-ratelimit-requests-remaining"], "7");
        assert!(h["anthropic-ratelimit-requests-reset"]
            .to_str()
            .unwrap()
            .ends_with('Z'));
        assert_eq!(go_duration(360_000), "6m0s");
        assert_eq!(go_duration(20), "20ms");
        assert_eq!(label("sk-proj-abcdefghijkl"), "sk-p…ijkl");
    }
}
