//! The price table a step's LLM calls are priced with: `[cost] prices = "prices.toml"` in
//! plimsoll.toml, else the table Plimsoll ships (`prices/default.toml`, dated, for the
//! common models). Read once into a [`PriceTable`]; a mistake is an error naming the
//! file, the line and the fix.

use result::{Price, PriceTable};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// The shipped table, as `plimsoll prices` prints it.
pub const DEFAULT: &str = include_str!("../../../prices/default.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    date: Spanned<String>,
    currency: Option<String>,
    source: Option<String>,
    #[serde(default)]
    models: BTreeMap<String, Spanned<RawPrice>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrice {
    input: f64,
    cached_input: f64,
    cache_write: Option<f64>,
    cache_write_1h: Option<f64>,
    output: f64,
    reasoning: Option<f64>,
}

/// The table Plimsoll ships.
pub fn shipped() -> PriceTable {
    parse(DEFAULT, "prices/default.toml").expect("the shipped price table reads")
}

/// A price table file.
pub fn load(path: &Path) -> Result<PriceTable, spans::FileError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        spans::unreadable(
            path,
            &e,
            " (write one with `plimsoll prices > prices.toml`)",
        )
    })?;
    parse(&text, &path.display().to_string())
}

/// Price table text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<PriceTable, spans::FileError> {
    let spans = spans::Spans::new(text, file);
    let raw: RawTable = toml::from_str(text)
        .map_err(|e| spans.toml(&e, "(see `plimsoll prices` for the format)"))?;
    if raw.date.get_ref().trim().is_empty() {
        return Err(spans.err(
            Some(raw.date.span()),
            "date must say when the prices were taken, e.g. date = \"2026-11-24\"",
        ));
    }
    let mut models = BTreeMap::new();
    for (name, p) in &raw.models {
        let r = p.get_ref();
        let all = [
            ("input", Some(r.input)),
            ("cached_input", Some(r.cached_input)),
            ("cache_write", r.cache_write),
            ("cache_write_1h", r.cache_write_1h),
            ("output", r.output.into()),
            ("reasoning", r.reasoning),
        ];
        for (field, v) in all {
            if let Some(x) = v.filter(|x| !(x.is_finite() && *x >= 0.0)) {
                return Err(spans.err(
                    Some(p.span()),
                    format!("models.{name:?}.{field} must be a price ≥ 0 per 1,000,000 tokens (got {x})"),
                ));
            }
        }
        let price = Price {
            input: r.input,
            cached_input: r.cached_input,
            cache_write: r.cache_write,
            cache_write_1h: r.cache_write_1h,
            output: r.output,
            reasoning: r.reasoning,
        };
        models.insert(name.clone(), price);
    }
    Ok(PriceTable {
        date: raw.date.get_ref().clone(),
        currency: raw.currency.unwrap_or_else(|| "USD".into()),
        source: raw.source.unwrap_or_default(),
        models,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_table_is_dated_and_prices_snapshots_by_their_model() {
        let t = shipped();
        assert_eq!(
            (t.date.as_str(), t.currency.as_str()),
            ("2026-11-24", "USD")
        );
        let s = t.price("claude-sonnet-4-5-20250929").unwrap();
        assert_eq!(
            (s.input, s.cached_input, s.write_5m(), s.write_1h()),
            (3.0, 0.3, 3.75, 6.0)
        );
        assert_eq!(t.price("gpt-4o-mini-2024-07-18").unwrap().input, 0.15);
        assert_eq!(
            t.price("gpt-4o-mini").unwrap().write_5m(),
            0.15,
            "OpenAI writes at the input price"
        );
        assert!(t.price("gpt-5.4-nano").is_none(), "not gpt-5.4's price");
        assert!(t.price("memory").is_none());
    }

    #[test]
    fn mistakes_name_the_line_and_the_fix() {
        let e = parse(
            "date = \"d\"\n[models.m]\ninput = 1\ncached_input = -1\noutput = 2\n",
            "p.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("p.toml:2: models.\"m\".cached_input must be a price ≥ 0"),
            "{e}"
        );
        let e = parse(
            "[models.m]\ninput = 1\ncached_input = 1\noutput = 1\n",
            "p.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("missing field `date`"), "{e}");
        let text =
            "date = \"d\"\n[models.m]\ninput = 1\ncached_input = 1\noutput = 1\ncached = 1\n";
        let e = parse(text, "p.toml").unwrap_err().to_string();
        assert!(e.starts_with("p.toml:6: unknown field `cached`"), "{e}");
    }
}
