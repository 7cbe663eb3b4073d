//! The seals on the model's reasoning: signatures the mock puts on what it thought, so
//! it can tell when the client sends the thoughts back altered.
//!
//! Anthropic `thinking` blocks carry a `signature` bound to the run's seed, the
//! session and the thinking text; `redacted_thinking` `data`, OpenAI reasoning items'
//! `encrypted_content` and Gemini thought signatures are bound to the session and a
//! nonce (the reply or item id). Checking what comes back is `integrity/reasoning.rs`'s.

use crate::hash::fnv1a;
use std::fmt::Write;

/// The run's sealing key: from the seed, so replies stay byte-identical per seed.
pub fn key(seed: u64) -> u64 {
    fnv1a(seed, b"plimsoll thoughts")
}

/// 256 bits of keyed hash over `parts`, as 64 hex digits.
fn tag(key: u64, parts: &[&str]) -> String {
    let mut h = key;
    for p in parts {
        h = fnv1a(h, p.as_bytes());
        h = fnv1a(h, &[0xff]);
    }
    let mut out = String::with_capacity(64);
    for round in 0..4u8 {
        let _ = write!(out, "{:016x}", fnv1a(h, &[round]));
    }
    out
}

/// The `signature` of a thinking block with `text`, said to `session`.
pub fn signature(key: u64, session: &str, text: &str) -> String {
    tag(key, &["thinking", session, text])
}

/// Opaque reasoning (`redacted_thinking` data, `encrypted_content`) bound to
/// `session` and `nonce`: the tag, then the nonce.
pub fn seal(key: u64, session: &str, nonce: &str) -> String {
    format!("{}{nonce}", tag(key, &["sealed", session, nonce]))
}

/// Whether `sealed` is a seal this run made for `session`, and for `nonce` when given.
pub fn unsealed(key: u64, session: &str, sealed: &str, nonce: Option<&str>) -> bool {
    let (Some(t), Some(n)) = (sealed.get(..64), sealed.get(64..)) else {
        return false;
    };
    nonce.is_none_or(|want| want == n) && t == tag(key, &["sealed", session, n])
}
