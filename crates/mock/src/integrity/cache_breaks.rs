//! Cache breaks: a prompt that throws away what the provider had cached for its
//! conversation. Each prompt is compared with the last prompt of the thread it goes on
//! from (the session's earlier prompt that shares a user message with it): the longest
//! common prefix, part by part and then byte by byte within the first part that differs.
//! A **break** is a divergence before the point the earlier prompt had cached (its last
//! breakpoint, for Anthropic), or a change of model or cache key once something was
//! cached. Its kind names the part — `system_changed`, `tools_changed`, `tools_reordered`,
//! `messages_changed` (history rewritten), `model_changed`, `cache_key_changed`, the
//! words of Anthropic's own cache diagnostics — with the first differing position and a
//! short excerpt of both sides.
//!
//! Beside breaks it says what the prompt *could* have read with a cache-friendly client:
//! the cacheable part of the earlier prompt it goes on from.

use crate::cache::prefix::{Label, Prefix};
use crate::cache::threads::{user_hashes, Thread, Threads};
use crate::cache::Served;
use crate::ledger::CacheBreak;
use wire::CacheRules;

/// Characters of excerpt on each side of the first difference.
const AROUND: usize = 24;

/// What the oracle makes of one prompt.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Seen {
    /// Tokens the prompt could have read from the cache (at least what it read).
    pub could: u32,
    pub broke: Option<CacheBreak>,
}

/// Who sent the prompt and what the cache did with it.
pub struct Asked<'a> {
    pub rules: &'a CacheRules,
    pub model: &'a str,
    pub key: Option<&'a str>,
    pub served: Served,
    pub session: &'a str,
    pub turn: u32,
}

/// Where two prompts part: tokens in common, the part where they differ (`None`: the
/// earlier one is a prefix of this one), the bytes in common within it.
struct Common {
    tokens: u32,
    at: Option<usize>,
    byte: usize,
}

fn common(t: &Thread, p: &Prefix) -> Common {
    let mut tokens = 0;
    for (i, (a, b)) in t.parts.iter().zip(&p.parts).enumerate() {
        let same_slot = a.label.same_slot(&b.label);
        if same_slot && a.own == b.own {
            tokens += a.tokens;
            continue;
        }
        let byte = match (&a.text, same_slot) {
            (Some(old), true) => common_bytes(old, &b.text),
            _ => 0,
        };
        if byte > 0 {
            let framing = if matches!(b.label, Label::Message { .. }) {
                4
            } else {
                0
            };
            tokens += (framing + wire::count_tokens(&b.text[..byte])).min(b.tokens);
        }
        return Common {
            tokens,
            at: Some(i),
            byte,
        };
    }
    let at = (p.parts.len() < t.parts.len()).then_some(p.parts.len());
    Common {
        tokens,
        at,
        byte: 0,
    }
}

/// Bytes two texts have in common at their start, ending on a character boundary.
fn common_bytes(a: &str, b: &str) -> usize {
    let n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    (0..=n).rev().find(|&i| b.is_char_boundary(i)).unwrap_or(0)
}

/// `…text around byte…`, on one line.
fn excerpt(text: &str, byte: usize) -> String {
    let byte = byte.min(text.len());
    let mut lo = byte.saturating_sub(AROUND);
    while !text.is_char_boundary(lo) {
        lo -= 1;
    }
    let mut hi = (byte + AROUND).min(text.len());
    while !text.is_char_boundary(hi) {
        hi += 1;
    }
    format!(
        "{}{}{}",
        if lo > 0 { "…" } else { "" },
        text[lo..hi].replace(['\n', '\r'], " "),
        if hi < text.len() { "…" } else { "" }
    )
}

/// The kind of a divergence at part `at` (both prompts' parts there, if any).
fn kind(t: &Thread, p: &Prefix, at: usize) -> &'static str {
    let old = t.parts.get(at).map(|x| &x.label);
    let new = p.parts.get(at).map(|x| &x.label);
    let is = |f: fn(&Label) -> bool| old.is_some_and(f) || new.is_some_and(f);
    if is(|l| matches!(l, Label::Tool { .. })) {
        let tools = |owns: Vec<u64>| {
            let mut v = owns;
            v.sort_unstable();
            v
        };
        let a = tools(
            t.parts
                .iter()
                .filter(|x| matches!(x.label, Label::Tool { .. }))
                .map(|x| x.own)
                .collect(),
        );
        let b = tools(
            p.parts
                .iter()
                .filter(|x| matches!(x.label, Label::Tool { .. }))
                .map(|x| x.own)
                .collect(),
        );
        if a == b {
            "tools_reordered"
        } else {
            "tools_changed"
        }
    } else if is(|l| matches!(l, Label::System)) {
        "system_changed"
    } else {
        "messages_changed"
    }
}

/// The break of prompt `p` against thread `t`, with `c` what they have in common.
fn broke(t: &Thread, p: &Prefix, c: &Common, a: &Asked, why: Option<&'static str>) -> CacheBreak {
    let at = c.at.unwrap_or(p.parts.len().min(t.parts.len()));
    let old = t.parts.get(at);
    let new = p.parts.get(at);
    let (before, after) = match why {
        Some("model_changed") => (t.model.clone(), a.model.to_string()),
        Some(_) => (
            t.key.clone().unwrap_or_else(|| "(none)".into()),
            a.key.unwrap_or("(none)").to_string(),
        ),
        None => (
            match old {
                Some(k) => k
                    .text
                    .as_deref()
                    .map_or("(text not kept)".into(), |x| excerpt(x, c.byte)),
                None => "(nothing: the earlier prompt ended here)".into(),
            },
            new.map_or("(nothing: this prompt ends here)".into(), |x| {
                excerpt(&x.text, c.byte)
            }),
        ),
    };
    let label = new.map(|x| &x.label).or(old.map(|x| &x.label));
    CacheBreak {
        after,
        before,
        char: new.map_or(0, |x| {
            x.text[..c.byte.min(x.text.len())].chars().count() as u64
        }),
        kind: why.unwrap_or_else(|| kind(t, p, at)).into(),
        lost_tokens: t.held.saturating_sub(c.tokens) as u64,
        part: label.map_or("the prompt".into(), Label::describe),
        session: a.session.to_string(),
        token: c.tokens as u64,
        turn: a.turn,
    }
}

/// Compares prompt `p` with the thread it goes on from, says what it could have read and
/// whether it broke the cache, and keeps it as that thread's latest prompt (at most
/// `max` threads a session).
pub fn observe(threads: &mut Threads, p: &Prefix, a: &Asked, max: usize) -> Seen {
    let users = user_hashes(p);
    let best = threads
        .iter()
        .filter(|(_, t)| t.users.iter().any(|u| users.contains(u)))
        .map(|(i, t)| (i, common(t, p)))
        .max_by_key(|(_, c)| c.tokens);
    let read = a.served.usage.read;
    let mut seen = Seen {
        could: read,
        broke: None,
    };
    let at = best.map(|(i, c)| {
        let (_, t) = threads.iter().nth(i).expect("a thread just found");
        let why = if t.model != a.model {
            Some("model_changed")
        } else if t.key.as_deref() != a.key {
            Some("cache_key_changed")
        } else {
            None
        };
        if why.is_none() {
            seen.could = read.max(a.rules.cacheable(t.total.min(p.total)));
        }
        if t.held > 0 && (why.is_some() || c.tokens < t.held) {
            seen.broke = Some(broke(t, p, &c, a, why));
        }
        i
    });
    threads.put(at, Thread::of(p, a.served.held, a.model, a.key), max);
    seen
}

#[cfg(test)]
#[path = "cache_breaks_tests.rs"]
mod tests;
