//! Per-key token buckets: whether a request may pass its quota, and what it leaves (the
//! readings the rate-limit headers report, on refusals and on every successful reply;
//! the headers themselves are written by `serve/headers.rs` in each API's names).
//!
//! A bucket holds `burst_s` seconds of its quota, refills continuously at the quota's
//! rate and starts full. A request needs one request and its input tokens; output tokens
//! are known only once the reply is decided, so a request needs the output bucket not to
//! be empty, and its reply's tokens are taken afterwards (the bucket may go below zero,
//! and the next requests wait until it refills).

use crate::pushback::limits::{Dim, Limits, Quota};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Instant;

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

/// What one key has used (once per request, whatever the number of scopes); fields in
/// the order JSON writes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub refused: u64,
    pub requests: u64,
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
        KeyState { quota: *q, buckets }
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
#[derive(Clone, Debug, PartialEq)]
pub struct Refused {
    /// Which of the scopes given refused (its index).
    pub scope: usize,
    pub dim: Dim,
    pub limit: f64,
    pub requested: u64,
    /// Until the bucket holds what the request needs.
    pub retry_after_ms: u64,
    /// The request can never pass: it needs more than the whole minute's quota.
    pub too_large: bool,
    /// The refusing scope's buckets for this key, for the 429's headers.
    pub readings: Vec<Reading>,
}

/// One shard of the keys: their buckets by scope, and what each key used (once per
/// request, whatever the number of scopes).
#[derive(Default)]
struct Shard {
    scopes: HashMap<String, HashMap<String, KeyState>>,
    usage: HashMap<String, Usage>,
}

/// Every key's buckets, by scope and key: a scope is `*` for the provider's quota or a
/// model's name for its own. Sharded by key, so keys rarely share a lock, and one
/// request's scopes are all in its key's shard: checked and taken under one lock.
pub struct Quotas {
    shards: Vec<Mutex<Shard>>,
}

impl Default for Quotas {
    fn default() -> Self {
        Quotas {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
        }
    }
}

/// The key's state under a scope's quota: made on first use (buckets full), made anew
/// when the quota was changed live. Looked up by `&str`: no allocation once seen.
fn state<'s>(
    scopes: &'s mut HashMap<String, HashMap<String, KeyState>>,
    scope: &str,
    key: &str,
    q: &Quota,
    now: Instant,
) -> &'s mut KeyState {
    let keys = entry(scopes, scope, HashMap::new);
    let st = entry(keys, key, || KeyState::new(q, now));
    if st.quota != *q {
        *st = KeyState::new(q, now);
    }
    st
}

/// The scopes that set a quota, with their index among all.
fn with_quota<'a>(
    scopes: &'a [(&'a str, Limits)],
) -> impl Iterator<Item = (usize, (&'a str, &'a Quota))> {
    scopes
        .iter()
        .enumerate()
        .filter_map(|(i, (s, l))| Some((i, (*s, l.quota.as_ref()?))))
}

/// The value under `key`, made by `make` when there is none: looked up by `&str`, so a
/// key already there costs no allocation (`HashMap::entry` wants an owned key).
pub(crate) fn entry<'m, V>(
    map: &'m mut HashMap<String, V>,
    key: &str,
    make: impl FnOnce() -> V,
) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.to_string(), make());
    }
    map.get_mut(key).expect("inserted above")
}

/// A key's use.
fn usage<'u>(all: &'u mut HashMap<String, Usage>, key: &str) -> &'u mut Usage {
    entry(all, key, Usage::default)
}

/// What a request needs from a bucket before its reply: one request, its input tokens,
/// and the output bucket not empty (output is taken once the reply is decided).
fn need(d: Dim, input: f64) -> f64 {
    match d {
        Dim::Requests | Dim::OutputTokens => 1.0,
        Dim::Tokens | Dim::InputTokens => input,
    }
}

impl Quotas {
    fn shard(&self, key: &str) -> std::sync::MutexGuard<'_, Shard> {
        let i = (crate::hash::fnv1a(0, key.as_bytes()) as usize) % SHARDS;
        self.shards[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes one request and its input tokens from every scope's quota, or from none:
    /// refuses with the first bucket short. A request larger than a bucket (`burst_s`
    /// under a minute) passes when the bucket is full and leaves it in debt; only one
    /// larger than the whole minute's quota can never pass.
    pub fn admit(
        &self,
        scopes: &[(&str, Limits)],
        key: &str,
        input_tokens: u32,
        now: Instant,
    ) -> Result<(), Refused> {
        let mut guard = self.shard(key);
        let shard = &mut *guard;
        let input = input_tokens as f64;
        for (i, (scope, q)) in with_quota(scopes) {
            let st = state(&mut shard.scopes, scope, key, q, now);
            let short = st.refilled(now).find_map(|(d, s, b)| {
                let want = need(d, input);
                let too_large = want > s.per_min;
                let now_need = want.min(s.cap);
                (too_large || b.level < now_need - 1e-9).then(|| Refused {
                    scope: i,
                    dim: d,
                    limit: s.per_min,
                    requested: want as u64,
                    retry_after_ms: b.wait_ms(s, now_need).max(1),
                    too_large,
                    readings: Vec::new(),
                })
            });
            if let Some(mut r) = short {
                r.readings = st.readings(now);
                usage(&mut shard.usage, key).refused += 1;
                return Err(r);
            }
        }
        for (_, (scope, q)) in with_quota(scopes) {
            let st = state(&mut shard.scopes, scope, key, q, now);
            for (d, _, b) in st.refilled(now) {
                if d != Dim::OutputTokens {
                    b.level -= need(d, input);
                }
            }
        }
        let u = usage(&mut shard.usage, key);
        u.requests += 1;
        u.input_tokens += input_tokens as u64;
        Ok(())
    }

    /// Takes a decided reply's output tokens in every scope, and reads the buckets for the
    /// headers (a later scope's reading of a kind wins: the model's own over the
    /// provider's).
    pub fn spend_output(
        &self,
        scopes: &[(&str, Limits)],
        key: &str,
        output_tokens: u32,
        now: Instant,
    ) -> Vec<Reading> {
        let mut guard = self.shard(key);
        let shard = &mut *guard;
        let mut readings: Vec<Reading> = Vec::new();
        for (_, (scope, q)) in with_quota(scopes) {
            let st = state(&mut shard.scopes, scope, key, q, now);
            for (d, _, b) in st.refilled(now) {
                if matches!(d, Dim::Tokens | Dim::OutputTokens) {
                    b.level -= output_tokens as f64;
                }
            }
            for r in st.readings(now) {
                readings.retain(|x| x.dim != r.dim);
                readings.push(r);
            }
        }
        if let Some(u) = shard.usage.get_mut(key) {
            u.output_tokens += output_tokens as u64;
        }
        readings
    }

    /// What each key used, by the key's label.
    pub fn usage(&self) -> BTreeMap<String, Usage> {
        let mut out: BTreeMap<String, Usage> = BTreeMap::new();
        for shard in &self.shards {
            let shard = shard.lock().unwrap_or_else(|p| p.into_inner());
            for (key, u) in &shard.usage {
                out.entry(label(key)).or_default().add(u);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn lim(q: Quota) -> Limits {
        Limits {
            quota: Some(q),
            capacity: None,
        }
    }

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
        let one = [("*", lim(quota))];
        for _ in 0..60 {
            qs.admit(&one, "k1", 10, t0).unwrap();
        }
        let r = qs.admit(&one, "k1", 10, t0).unwrap_err();
        assert_eq!(
            (r.dim, r.retry_after_ms, r.too_large),
            (Dim::Requests, 1000, false)
        );
        // The 429 reads the bucket: nothing left, full again in a minute.
        assert_eq!(
            (r.readings[0].remaining, r.readings[0].reset_ms),
            (0, 60_000)
        );
        // Another key has its own bucket.
        qs.admit(&one, "k2", 10, t0).unwrap();
        // One second later one request has come back.
        let t1 = t0 + Duration::from_millis(1000);
        qs.admit(&one, "k1", 10, t1).unwrap();
        assert!(qs.admit(&one, "k1", 10, t1).is_err());
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
        let m = [("m", lim(quota))];
        qs.admit(&m, "k", 50, t0).unwrap();
        let r = qs.spend_output(&m, "k", 15, t0);
        let get = |d: Dim| r.iter().find(|x| x.dim == d).copied().unwrap();
        // Buckets of one second: 10 requests, 100 input and 10 output tokens.
        assert_eq!(get(Dim::Requests).remaining, 9);
        assert_eq!(get(Dim::InputTokens).remaining, 50);
        assert_eq!(get(Dim::OutputTokens).remaining, 0);
        assert_eq!(get(Dim::OutputTokens).reset_ms, 1500);
        // The output bucket is below zero: the next request waits for it.
        let e = qs.admit(&m, "k", 1, t0).unwrap_err();
        assert_eq!((e.dim, e.retry_after_ms), (Dim::OutputTokens, 600));
        // Larger than the one-second bucket (100) but within the minute's 6,000: it passes
        // on a full bucket and leaves it in debt for 4 s.
        qs.admit(&m, "k2", 500, t0).unwrap();
        let e = qs.admit(&m, "k2", 50, t0).unwrap_err();
        assert_eq!((e.dim, e.retry_after_ms), (Dim::InputTokens, 4500));
        let e = qs.admit(&m, "k3", 7000, t0).unwrap_err();
        assert!(e.too_large && e.dim == Dim::InputTokens, "{e:?}");
    }

    #[test]
    fn a_request_refused_by_one_scope_takes_nothing_from_another() {
        let qs = Quotas::default();
        let t0 = Instant::now();
        let (provider, model) = (q(600.0, 60.0), q(1.0, 60.0));
        let both = [("*", lim(provider)), ("m", lim(model))];
        qs.admit(&both, "k", 1, t0).unwrap();
        for _ in 0..5 {
            let e = qs.admit(&both, "k", 1, t0).unwrap_err();
            assert_eq!(e.scope, 1);
        }
        // The provider's bucket lost one request, not six; the key used one, once.
        let r = qs.spend_output(&[("*", lim(provider))], "k", 0, t0);
        assert_eq!(r[0].remaining, 599);
        let u = qs.usage();
        assert_eq!((u["k"].requests, u["k"].refused), (1, 5));
    }
}
