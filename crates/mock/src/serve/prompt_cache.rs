//! One call's use of the provider's prompt cache, for `call.rs`: the API's rules for the
//! model (the scenario may raise its minimum), the prompt as the cache sees it, what the
//! cache read and wrote under the caller's scope (API key, model, `prompt_cache_key`),
//! what the oracle makes of the prompt against the session's earlier ones, and — once
//! the reply and its timing are known — the call counted in the ledger.

use crate::cache::{self, prefix};
use crate::hash::fnv1a;
use crate::integrity::cache_breaks::{observe, Asked};
use crate::ledger::CallCache;
use crate::provider::model::ModelSpec;
use crate::serve::app::App;
use crate::serve::headers::key_of;
use crate::session::{markers, Session};
use axum::http::HeaderMap;
use wire::{Api, CacheUsage, Reply, Request, Role, Spot};

/// Threads of conversation kept per session, and for requests without one.
const THREADS: usize = 4;
const ANONYMOUS_THREADS: usize = 16;

/// What the cache did for a call, before its reply is rendered.
pub(crate) struct Cached {
    pub usage: CacheUsage,
    pub could: u32,
    pub turn: u32,
}

impl Cached {
    /// Prompt tokens the model must read (what the cache did not hold).
    pub fn uncached(&self, prompt_tokens: u32) -> u32 {
        prompt_tokens.saturating_sub(self.usage.read)
    }
}

/// The session's turn, as the last marked user message says (0 when none does).
fn turn_of(req: &Request) -> u32 {
    req.messages
        .iter()
        .rev()
        .filter(|m| m.role == Role::User)
        .find_map(|m| markers(&m.text).into_iter().rev().find_map(|k| k.turn))
        .unwrap_or(0)
}

/// Serves `req`'s prompt from the cache and lets the oracle compare it.
pub(crate) fn account(
    app: &App,
    api: Api,
    req: &Request,
    spec: &ModelSpec,
    session: &Session,
    headers: &HeaderMap,
) -> Cached {
    let turn = turn_of(req);
    let settings = app.scenario.cache;
    if !settings.enabled {
        return Cached {
            usage: CacheUsage::default(),
            could: 0,
            turn,
        };
    }
    let mut rules = api.dialect().cache_rules(&req.model);
    if let Some(n) = spec.cache_min_tokens {
        rules.min_tokens = n;
    }
    let spots: Vec<Spot> = req.cache.all_breakpoints().iter().map(|b| b.at).collect();
    let p = prefix::build(req, rules.steps, &spots);
    let key = req.cache.key.as_deref();
    let scope = fnv1a(
        fnv1a(fnv1a(1, key_of(headers).as_bytes()), req.model.as_bytes()),
        key.unwrap_or("").as_bytes(),
    );
    let ttl_ms = if req.cache.extended {
        86_400_000
    } else {
        settings
            .implicit_ttl_s
            .map_or(rules.ttl_ms, |s| (s * 1000.0) as u64)
    };
    let now_ms = app.epoch.elapsed().as_millis() as u64;
    let served = cache::serve(
        &app.prompt_cache,
        &rules,
        &p,
        &req.cache,
        (scope, ttl_ms, now_ms),
    );
    let asked = Asked {
        rules: &rules,
        model: &req.model,
        key,
        served,
        session: session.key(),
        turn,
    };
    let max = if session.id.is_some() {
        THREADS
    } else {
        ANONYMOUS_THREADS
    };
    let seen = app
        .ledger
        .cache_threads(session.key(), |t| observe(t, &p, &asked, max));
    if let Some(b) = seen.broke {
        app.ledger.cache_break(b);
    }
    Cached {
        usage: served.usage,
        could: seen.could,
        turn,
    }
}

/// Counts the call in the ledger, with its reply and when its first token was due.
pub(crate) fn record(app: &App, session: &str, c: &Cached, reply: &Reply, first_token_ms: f64) {
    app.ledger.cache_call(
        session,
        &CallCache {
            model: reply.model.clone(),
            turn: c.turn,
            input: reply.prompt_tokens,
            usage: c.usage,
            could: c.could,
            output: reply.output_tokens,
            reasoning: reply.reasoning_tokens,
            first_token_ms,
        },
    );
}
