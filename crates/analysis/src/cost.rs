//! What a step's LLM calls cost in money, from the tokens of each model and a price
//! table: uncached input, cached input (reads), cache writes (5-minute and 1-hour),
//! output and reasoning, each at its price per 1,000,000 tokens; per turn, per session
//! and per 1,000 sessions; and what the same calls would have cost had each read from
//! the cache all it could. Pure: the tokens come from the mock's ledger, the table from
//! the experiment.

use result::{Cost, CostSplit, ModelTokens, Price, PriceTable};
use std::collections::BTreeMap;

const MILLION: f64 = 1_000_000.0;

/// Money to 1e-9 of the currency: sums of small prices stay exact to the cent.
fn money(x: f64) -> f64 {
    (x * 1e9).round() / 1e9
}

/// One model's tokens at one price.
fn split(t: &ModelTokens, p: &Price) -> CostSplit {
    let written = t.write_5m_tokens + t.write_1h_tokens;
    let uncached = t.input_tokens.saturating_sub(t.read_tokens + written);
    let answer = t.output_tokens.saturating_sub(t.reasoning_tokens);
    CostSplit {
        cache_write: (t.write_5m_tokens as f64 * p.write_5m()
            + t.write_1h_tokens as f64 * p.write_1h())
            / MILLION,
        cached_input: t.read_tokens as f64 * p.cached_input / MILLION,
        output: answer as f64 * p.output / MILLION,
        reasoning: t.reasoning_tokens as f64 * p.reasoning() / MILLION,
        uncached_input: uncached as f64 * p.input / MILLION,
    }
}

/// The same calls had each read all it could: the tokens it could have read at the cached
/// price, the rest at what the input it did not read cost on average (writes included,
/// as a cache-friendly client pays them too).
fn perfect(t: &ModelTokens, p: &Price, actual: &CostSplit) -> f64 {
    let could = t.could_tokens.max(t.read_tokens).min(t.input_tokens);
    let not_read = t.input_tokens.saturating_sub(t.read_tokens);
    let per_token = if not_read > 0 {
        (actual.uncached_input + actual.cache_write) / not_read as f64
    } else {
        p.input / MILLION
    };
    could as f64 * p.cached_input / MILLION
        + (t.input_tokens - could) as f64 * per_token
        + actual.output
        + actual.reasoning
}

/// What the tokens of each model cost at `table`'s prices, over `sessions` sessions and
/// `turns` turns.
pub fn cost(
    by_model: &BTreeMap<String, ModelTokens>,
    table: &PriceTable,
    sessions: u64,
    turns: u64,
) -> Cost {
    let mut sum = CostSplit::default();
    let mut ideal = 0.0;
    let mut priced = BTreeMap::new();
    let mut unpriced = Vec::new();
    for (model, t) in by_model {
        let Some(p) = table.price(model) else {
            unpriced.push(model.clone());
            continue;
        };
        let s = split(t, p);
        ideal += perfect(t, p, &s);
        sum.cache_write += s.cache_write;
        sum.cached_input += s.cached_input;
        sum.output += s.output;
        sum.reasoning += s.reasoning;
        sum.uncached_input += s.uncached_input;
        priced.insert(model.clone(), *t);
    }
    let total = sum.total();
    let per = |x: f64, n: u64| if n == 0 { 0.0 } else { money(x / n as f64) };
    Cost {
        by_kind: CostSplit {
            cache_write: per(sum.cache_write, sessions),
            cached_input: per(sum.cached_input, sessions),
            output: per(sum.output, sessions),
            reasoning: per(sum.reasoning, sessions),
            uncached_input: per(sum.uncached_input, sessions),
        },
        by_model: priced,
        currency: table.currency.clone(),
        per_1000_sessions: per(total * 1000.0, sessions),
        per_session: per(total, sessions),
        per_turn: per(total, turns),
        perfect_per_session: per(ideal, sessions),
        prices_date: table.date.clone(),
        total: money(total),
        unpriced_models: unpriced,
    }
}

/// The provider's bill per hour for `sessions` sessions running at once, each doing
/// `turns_per_session_per_s` turns a second at `cost_per_turn`.
pub fn bill_per_hour(cost_per_turn: f64, turns_per_session_per_s: f64, sessions: f64) -> f64 {
    money(cost_per_turn * turns_per_session_per_s * 3600.0 * sessions)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> PriceTable {
        let price = |input, cached, write: Option<f64>, output| Price {
            input,
            cached_input: cached,
            cache_write: write,
            cache_write_1h: write.map(|w| w / 1.25 * 2.0),
            output,
            reasoning: None,
        };
        PriceTable {
            date: "2026-11-24".into(),
            currency: "USD".into(),
            source: String::new(),
            models: BTreeMap::from([
                (
                    "claude-sonnet-4-6".into(),
                    price(3.0, 0.3, Some(3.75), 15.0),
                ),
                ("gpt-4o-mini".into(), price(0.15, 0.075, None, 0.6)),
            ]),
        }
    }

    /// 1,000 sessions of 10 turns; per session 30 Sonnet calls over 60,000 input tokens
    /// (50,000 read, 8,000 written for 5 minutes, 2,000 uncached) and 1,500 output tokens
    /// (300 of them reasoning), 20,000 gpt-4o-mini input tokens all uncached and 500 out.
    fn usage(sessions: u64) -> BTreeMap<String, ModelTokens> {
        let n = sessions;
        BTreeMap::from([
            (
                "claude-sonnet-4-6-20260101".into(),
                ModelTokens {
                    calls: 30 * n,
                    could_tokens: 58_000 * n,
                    input_tokens: 60_000 * n,
                    output_tokens: 1_500 * n,
                    read_tokens: 50_000 * n,
                    reasoning_tokens: 300 * n,
                    write_5m_tokens: 8_000 * n,
                    write_1h_tokens: 0,
                },
            ),
            (
                "gpt-4o-mini".into(),
                ModelTokens {
                    calls: 10 * n,
                    could_tokens: 0,
                    input_tokens: 20_000 * n,
                    output_tokens: 500 * n,
                    ..Default::default()
                },
            ),
            (
                "memory".into(),
                ModelTokens {
                    calls: n,
                    input_tokens: 99,
                    ..Default::default()
                },
            ),
        ])
    }

    #[test]
    fn cost_to_the_cent_on_fixed_usage() {
        let c = cost(&usage(1000), &table(), 1000, 10_000);
        // Sonnet per session: 2,000 × $3 + 50,000 × $0.30 + 8,000 × $3.75 + 1,200 × $15
        // + 300 × $15 per million = $0.006 + $0.015 + $0.030 + $0.018 + $0.0045 = $0.0735;
        // gpt-4o-mini: 20,000 × $0.15 + 500 × $0.60 = $0.003 + $0.0003 = $0.0033.
        assert_eq!(c.per_session, 0.0768);
        assert_eq!(c.per_1000_sessions, 76.8);
        assert_eq!(c.total, 76.8);
        assert_eq!(c.per_turn, 0.00768);
        assert_eq!(c.by_kind.uncached_input, 0.009);
        assert_eq!(c.by_kind.cached_input, 0.015);
        assert_eq!(c.by_kind.cache_write, 0.03);
        assert_eq!(c.by_kind.output, 0.0183);
        assert_eq!(c.by_kind.reasoning, 0.0045);
        assert_eq!(c.unpriced_models, ["memory"]);
        assert_eq!(
            (c.prices_date.as_str(), c.currency.as_str()),
            ("2026-11-24", "USD")
        );
        // Perfect: Sonnet reads 58,000 (8,000 more) at $0.30; its other 2,000 at the
        // $0.036 / 10,000 the unread input cost: $0.0174 + $0.0072 + output $0.0225; plus
        // gpt-4o-mini's $0.0033 (it could read nothing) = $0.0504.
        assert_eq!(c.perfect_per_session, 0.0504);
        // The capacity line: 100 sessions at once, a turn every 10 s each, $0.00768 a turn.
        assert_eq!(bill_per_hour(c.per_turn, 0.1, 100.0), 276.48);
    }
}
