//! What a session's earlier prompts were, kept so the oracle can compare the next one:
//! per conversation thread (a session may run several — an agent and its sub-agents),
//! the last prompt's parts (their slot, tokens, hash and, within a budget, their text for
//! the excerpt), how much of it the cache held, and its user messages (by which a later
//! prompt is known to go on from it).
//!
//! Only data and its upkeep: the comparison is `integrity/cache_breaks.rs`'s.

use crate::cache::prefix::{Label, Prefix};
use wire::Role;

/// Text kept per thread for excerpts; parts past it keep only their hash.
const TEXT_BUDGET: usize = 64 * 1024;

/// One part of a kept prompt.
#[derive(Clone, Debug)]
pub struct Kept {
    pub label: Label,
    pub tokens: u32,
    pub own: u64,
    pub text: Option<Box<str>>,
}

/// The last prompt of one conversation thread.
#[derive(Clone, Debug)]
pub struct Thread {
    pub parts: Vec<Kept>,
    pub total: u32,
    /// The longest prefix of it the cache held after it was served.
    pub held: u32,
    /// Hashes of its user messages.
    pub users: Vec<u64>,
    pub model: String,
    pub key: Option<String>,
    used: u64,
}

impl Thread {
    /// `p` as the thread's latest prompt, of `model` under cache key `key`.
    pub fn of(p: &Prefix, held: u32, model: &str, key: Option<&str>) -> Thread {
        let mut budget = TEXT_BUDGET;
        let parts = p
            .parts
            .iter()
            .map(|x| {
                let keep = x.text.len() <= budget;
                budget = budget.saturating_sub(x.text.len());
                Kept {
                    label: x.label.clone(),
                    tokens: x.tokens,
                    own: x.own,
                    text: keep.then(|| x.text.clone().into_boxed_str()),
                }
            })
            .collect();
        Thread {
            parts,
            total: p.total,
            held,
            users: user_hashes(p),
            model: model.to_string(),
            key: key.map(str::to_string),
            used: 0,
        }
    }
}

/// The hashes of a prompt's user messages.
pub fn user_hashes(p: &Prefix) -> Vec<u64> {
    p.parts
        .iter()
        .filter(|x| {
            matches!(
                x.label,
                Label::Message {
                    role: Role::User,
                    ..
                }
            )
        })
        .map(|x| x.own)
        .collect()
}

/// A session's threads, the least recently used dropped beyond a bound.
#[derive(Clone, Debug, Default)]
pub struct Threads {
    list: Vec<Thread>,
    uses: u64,
}

impl Threads {
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Thread)> {
        self.list.iter().enumerate()
    }

    /// Puts `t` in place of thread `at` (the one it goes on from), or as a new thread,
    /// keeping at most `max` threads.
    pub fn put(&mut self, at: Option<usize>, mut t: Thread, max: usize) {
        self.uses += 1;
        t.used = self.uses;
        match at.filter(|&i| i < self.list.len()) {
            Some(i) => self.list[i] = t,
            None => {
                if self.list.len() >= max.max(1) {
                    let oldest = (0..self.list.len())
                        .min_by_key(|&i| self.list[i].used)
                        .unwrap_or(0);
                    self.list.swap_remove(oldest);
                }
                self.list.push(t);
            }
        }
    }
}
