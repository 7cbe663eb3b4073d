//! What the in-process mock's ledger says of the provider's prompt cache, as the RESULT's
//! `cache` (hit shares in all and per turn, the provider's time to first token per turn,
//! the cache breaks by kind), and the tokens each model used, priced as its `cost`.

use mock::ledger::{CacheTotals, Summary};
use result::{round2, CacheBreakKind, CacheReport, CacheTurn, Cost, ModelTokens, PriceTable};
use std::collections::BTreeMap;

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 / whole as f64 * 1000.0).round() / 1000.0
    }
}

/// The cache's figures, when the mock served any call.
pub(crate) fn cache_report(ledger: &Summary) -> Option<CacheReport> {
    let t = &ledger.totals.cache;
    (t.calls > 0).then(|| CacheReport {
        break_kinds: ledger
            .cache_breaks
            .iter()
            .map(|b| CacheBreakKind {
                after: b.after.clone(),
                before: b.before.clone(),
                char: b.char,
                count: t.breaks_by_kind.get(&b.kind).copied().unwrap_or(1),
                kind: b.kind.clone(),
                lost_tokens: b.lost_tokens,
                part: b.part.clone(),
                session: b.session.clone(),
                turn: b.turn,
            })
            .collect(),
        breaks: t.breaks,
        by_turn: t
            .by_turn
            .iter()
            .map(|x| CacheTurn {
                calls: x.calls,
                could_hit_share: share(x.could_tokens, x.input_tokens),
                hit_share: share(x.read_tokens, x.input_tokens),
                input_tokens: x.input_tokens,
                ttft_ms: round2(x.first_token_ms_sum / x.calls.max(1) as f64),
                turn: x.turn,
            })
            .collect(),
        cache_write_tokens: t.write_tokens,
        cached_tokens: t.read_tokens,
        calls: t.calls,
        could_hit_share: share(t.could_tokens.max(t.read_tokens), t.input_tokens),
        evicted: t.evicted,
        hit_share: share(t.read_tokens, t.input_tokens),
        input_tokens: t.input_tokens,
    })
}

/// Each model's tokens, as a price table prices them (the ledger counts them in RESULT's
/// own type).
pub(crate) fn tokens(t: &CacheTotals) -> BTreeMap<String, ModelTokens> {
    t.by_model.clone()
}

/// What the step's calls cost, over its sessions and turns (none without a call).
pub(crate) fn cost(
    tokens: &BTreeMap<String, ModelTokens>,
    prices: &PriceTable,
    sessions: u64,
    turns: u64,
) -> Option<Cost> {
    (!tokens.is_empty()).then(|| analysis::cost::cost(tokens, prices, sessions, turns))
}
