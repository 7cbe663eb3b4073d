//! The prompt cache and the provider's bill in words: a step's lines on the terminal,
//! `plimsoll check`'s plain-words account of a cache break and its fix, and a ladder's
//! section of report.md and the pieces of report.html's (cost per session and hit share
//! per level, the cache-break kinds with their excerpts). It reads RESULTs only.

use crate::grid::{Cell, Col, Grid};
use crate::svg::{Chart, Series};
use result::{CacheBreakKind, CacheReport, Cost, StepResult};

fn pct(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

/// Money with enough digits to tell a session's cost ($0.00768) from the next.
pub fn money(x: f64, currency: &str) -> String {
    let sign = if currency == "USD" { "$" } else { "" };
    let digits = if x == 0.0 || x.abs() >= 1.0 {
        2
    } else {
        // Three significant digits below one unit of the currency.
        (2 - x.abs().log10().floor() as i32).clamp(2, 9) as usize
    };
    let tail = if sign.is_empty() {
        format!(" {currency}")
    } else {
        String::new()
    };
    format!("{sign}{x:.digits$}{tail}")
}

/// The step's lines: the cache (when it had anything to say) and the cost.
pub fn step_lines(r: &StepResult) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(c) = r
        .cache
        .as_ref()
        .filter(|c| c.cached_tokens > 0 || c.breaks > 0 || c.could_hit_share >= 0.05)
    {
        out.extend(cache_lines(c));
    }
    if let Some(c) = &r.cost {
        out.push(format!("  {}", cost_line(c)));
    }
    out
}

fn cache_lines(c: &CacheReport) -> Vec<String> {
    let mut out = vec![format!(
        "  prompt cache: {} of {} input tokens read from the cache ({} written); a cache-friendly client: {}; {}",
        pct(c.hit_share),
        c.input_tokens,
        c.cache_write_tokens,
        pct(c.could_hit_share),
        crate::words::count(c.breaks, "cache break")
    )];
    if c.by_turn.len() > 1 {
        let hits: Vec<String> = c
            .by_turn
            .iter()
            .map(|t| format!("{:.0}", t.hit_share * 100.0))
            .collect();
        let ttft: Vec<String> = c
            .by_turn
            .iter()
            .map(|t| format!("{:.0}", t.ttft_ms))
            .collect();
        out.push(format!(
            "    by turn: hit % {}; the provider's time to first token {} ms",
            hits.join(" → "),
            ttft.join(" → ")
        ));
    }
    for k in &c.break_kinds {
        out.push(format!("    {}", break_line(k)));
    }
    if c.evicted > 0 {
        out.push(format!(
            "    the provider evicted {} cached prefixes to make room",
            c.evicted
        ));
    }
    out
}

/// "12 × system_changed — system message, char 55: `…07Z…` before, `…09Z…` now".
pub fn break_line(k: &CacheBreakKind) -> String {
    format!(
        "{} × {} — {}, char {}: `{}` before, `{}` now ({} cached tokens lost; first in session {}, turn {})",
        k.count, k.kind, k.part, k.char, k.before, k.after, k.lost_tokens, k.session, k.turn
    )
}

/// "cost: $0.0768 per session ($76.80 per 1,000 sessions, $0.00768 per turn) …".
pub fn cost_line(c: &Cost) -> String {
    let m = |x: f64| money(x, &c.currency);
    if c.by_model.is_empty() {
        return format!(
            "cost: unknown — no price for model {} (see `plimsoll prices`)",
            c.unpriced_models.join(", ")
        );
    }
    let k = &c.by_kind;
    let unpriced = if c.unpriced_models.is_empty() {
        String::new()
    } else {
        format!("; not counted (no price): {}", c.unpriced_models.join(", "))
    };
    format!(
        "cost: {} per session ({} per 1,000 sessions, {} per turn): uncached input {}, cached input {}, cache writes {}, output {}, reasoning {}; with perfect caching {} per session (prices of {}){unpriced}",
        m(c.per_session),
        m(c.per_1000_sessions),
        m(c.per_turn),
        m(k.uncached_input),
        m(k.cached_input),
        m(k.cache_write),
        m(k.output),
        m(k.reasoning),
        m(c.perfect_per_session),
        c.prices_date
    )
}

/// What to do about a kind of break.
fn fix(kind: &str) -> &'static str {
    match kind {
        "system_changed" => "keep the system message byte for byte the same on every call: move what changes (a date or time, a request id, a counter, a user's name) out of it, into the last user message",
        "tools_reordered" => "send the tools in one fixed order on every call (sort them by name, or build the list once)",
        "tools_changed" => "keep the tool list and each tool's schema fixed for the whole conversation; add or remove tools at its start only",
        "messages_changed" => "only append to the history: rewriting, trimming or summarising earlier messages in place makes the provider read everything after them again (compact rarely, and only all at once)",
        "model_changed" => "each model has a cache of its own: switching models within a conversation starts it cold",
        "cache_key_changed" => "keep one prompt_cache_key for a conversation (and for conversations that share a prefix)",
        _ => "keep the start of the prompt the same from one call to the next",
    }
}

/// `plimsoll check`'s account of each kind of cache break: what changed, where, what it
/// cost, and the fix.
pub fn explain(r: &StepResult) -> Vec<String> {
    let Some(c) = &r.cache else {
        return Vec::new();
    };
    c.break_kinds
        .iter()
        .map(|k| {
            format!(
                "cache break ({}, {}): the {} changed from one call to the next at character {} — `{}` on the earlier call, `{}` on the next. The provider had {} tokens cached past that point; everything after it was paid for again as new input (or as a cache write). Fix: {}.",
                k.kind, crate::words::count(k.count, "call"), k.part, k.char, k.before, k.after, k.lost_tokens, fix(&k.kind)
            )
        })
        .collect()
}

/// The ladder's cost and cache per level as a Markdown table; None when no step has
/// either.
pub fn table(steps: &[StepResult]) -> Option<Grid> {
    if !steps.iter().any(|s| s.cost.is_some() || s.cache.is_some()) {
        return None;
    }
    let names = [
        "sessions",
        "cost/session",
        "per 1,000 sessions",
        "perfect caching",
        "hit share",
        "could hit",
        "cache breaks",
    ];
    let cols: Vec<Col> = names.iter().map(|&n| Col::right(n).rule(4)).collect();
    let mut g = Grid::new(&cols);
    for s in steps {
        let cost = s.cost.as_ref().filter(|c| !c.by_model.is_empty());
        let m = |f: fn(&Cost) -> f64| -> Cell {
            cost.map_or("—".into(), |c| money(f(c), &c.currency).into())
        };
        let c = s.cache.as_ref();
        g.row(vec![
            s.concurrency.to_string().into(),
            m(|c| c.per_session),
            m(|c| c.per_1000_sessions),
            m(|c| c.perfect_per_session),
            c.map_or("—".into(), |c| pct(c.hit_share).into()),
            c.map_or("—".into(), |c| pct(c.could_hit_share).into()),
            c.map_or(0, |c| c.breaks).to_string().into(),
        ]);
    }
    Some(g)
}

/// The first break of each kind across the ladder, the steps' counts added up.
pub fn break_kinds(steps: &[StepResult]) -> Vec<CacheBreakKind> {
    let mut out: Vec<CacheBreakKind> = Vec::new();
    for k in steps
        .iter()
        .filter_map(|s| s.cache.as_ref())
        .flat_map(|c| &c.break_kinds)
    {
        match out.iter_mut().find(|o| o.kind == k.kind) {
            Some(o) => o.count += k.count,
            None => out.push(k.clone()),
        }
    }
    out
}

/// The report's section: how to read the table, the table, the break kinds.
pub fn markdown(steps: &[StepResult]) -> Option<String> {
    let t = table(steps)?.markdown();
    let mut s = format!("\n## LLM cost and prompt cache\n\nWhat the step's LLM calls cost at the price table's prices, per session, and with every call reading all it could from the cache; the hit share is input tokens read from the cache, *could hit* what a cache-friendly client would have read; a cache break is a prompt that threw away what the provider had cached for its conversation.\n\n{t}");
    let kinds = break_kinds(steps);
    if !kinds.is_empty() {
        s.push_str("\nCache breaks by kind (the first of each):\n\n");
        for k in &kinds {
            s.push_str(&format!("- {} Fix: {}.\n", break_line(k), fix(&k.kind)));
        }
    }
    Some(s)
}

/// The charts of cost per session and hit share per level (none without a cost or cache).
pub fn charts(steps: &[StepResult]) -> Vec<Chart<'static>> {
    let mut out = Vec::new();
    let priced = |s: &StepResult| s.cost.as_ref().filter(|c| !c.by_model.is_empty()).cloned();
    if steps.iter().any(|s| priced(s).is_some()) {
        out.push(Chart { title: "LLM cost per session", unit: "per session", how: "What one session's LLM calls cost at the price table's prices, as measured and had every call read all it could from the cache; the gap is what cache breaks and a cold cache cost.", series: vec![
            Series { name: "measured", color: "#36c", values: steps.iter().map(|s| priced(s).map(|c| c.per_session)).collect() },
            Series { name: "perfect caching", color: "#393", values: steps.iter().map(|s| priced(s).map(|c| c.perfect_per_session)).collect() },
        ], curve: None, limit: None });
    }
    // A cache with nothing it could hold (prompts under every minimum) charts nothing.
    let cacheable = |c: &CacheReport| c.could_hit_share > 0.0 || c.hit_share > 0.0 || c.breaks > 0;
    if steps
        .iter()
        .any(|s| s.cache.as_ref().is_some_and(cacheable))
    {
        let share = |f: fn(&CacheReport) -> f64| -> Vec<Option<f64>> {
            steps
                .iter()
                .map(|s| s.cache.as_ref().map(|c| f(c) * 100.0))
                .collect()
        };
        out.push(Chart { title: "Prompt cache hit share", unit: "% of input", how: "Input tokens read from the provider's cache, and what a cache-friendly client would have read; a gap means cache breaks (see the kinds below) or a cache evicted under load.", series: vec![
            Series { name: "hit", color: "#36c", values: share(|c| c.hit_share) },
            Series { name: "could hit", color: "#393", values: share(|c| c.could_hit_share) },
        ], curve: None, limit: None });
    }
    out
}

/// The words above the section's table, in HTML.
pub const HOW_HTML: &str = "What one session's LLM calls cost at the price table's prices; hit share is input tokens read from the provider's cache, could hit what a cache-friendly client would have read; a cache break is a prompt that threw away what the provider had cached.";

/// The cache-break kinds as an HTML list, each with its fix ("" when there are none).
pub fn break_kinds_html(steps: &[StepResult]) -> String {
    let kinds = break_kinds(steps);
    if kinds.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h3>Cache breaks by kind</h3><ul>");
    for k in &kinds {
        out.push_str(&format!(
            "<li>{} <i>Fix: {}.</i></li>",
            crate::svg::esc(&break_line(k)),
            crate::svg::esc(fix(&k.kind))
        ));
    }
    out.push_str("</ul>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(n: usize, per_session: f64, hit: f64) -> StepResult {
        StepResult {
            concurrency: n,
            cache: Some(CacheReport {
                breaks: 3,
                break_kinds: vec![CacheBreakKind {
                    kind: "system_changed".into(),
                    count: 3,
                    part: "system message".into(),
                    char: 55,
                    before: "…at 18:41:07Z…".into(),
                    after: "…at 18:41:09Z…".into(),
                    lost_tokens: 2048,
                    session: "s1".into(),
                    turn: 2,
                }],
                hit_share: hit,
                could_hit_share: 0.9,
                ..Default::default()
            }),
            cost: Some(Cost {
                per_session,
                per_1000_sessions: per_session * 1000.0,
                perfect_per_session: 0.05,
                currency: "USD".into(),
                by_model: [("m".to_string(), Default::default())].into(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_ladder_shows_cost_and_hit_share_per_level_and_the_break_kinds() {
        let steps = [step(2, 0.4, 0.01), step(4, 0.41, 0.012)];
        let md = markdown(&steps).unwrap();
        assert!(
            md.contains("| sessions | cost/session | per 1,000 sessions | perfect caching | hit share | could hit | cache breaks |\n|---:|---:|---:|---:|---:|---:|---:|\n")
                && md.contains("| 2 | $0.400 | $400.00 | $0.0500 | 1.0 % | 90.0 % | 3 |"),
            "{md}"
        );
        assert!(md.contains("- 6 × system_changed — system message, char 55: `…at 18:41:07Z…` before, `…at 18:41:09Z…` now"), "{md}");
        assert!(
            md.contains("Fix: keep the system message byte for byte the same"),
            "{md}"
        );
        let titles: Vec<&str> = charts(&steps).iter().map(|c| c.title).collect();
        assert_eq!(titles, ["LLM cost per session", "Prompt cache hit share"]);
        assert!(
            markdown(&[StepResult::default()]).is_none(),
            "nothing without cost or cache"
        );
        let says = explain(&steps[0]);
        assert!(says[0].starts_with("cache break (system_changed, 3 calls): the system message changed from one call to the next at character 55"), "{says:?}");
    }

    #[test]
    fn money_keeps_three_significant_digits_below_one() {
        assert_eq!(money(0.0768, "USD"), "$0.0768");
        assert_eq!(money(0.00768, "USD"), "$0.00768");
        assert_eq!(money(76.8, "USD"), "$76.80");
        assert_eq!(money(0.5, "EUR"), "0.500 EUR");
        assert_eq!(money(0.0, "USD"), "$0.00");
    }
}
