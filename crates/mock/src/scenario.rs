//! The scenario file: which models the mock serves and how each one behaves in time.
//!
//! Parsed once into typed, validated structs; every later stage sees only
//! [`Scenario`] and [`ModelSpec`]. An error names the file, the line and the field,
//! and says what to write instead.
//!
//! ```toml
//! seed = 7                   # the RNG seed; --seed overrides it
//! unknown_model = "default"  # or "error": unknown model names get a 404
//! [defaults]                 # every model starts from these
//! ttft_ms = 200              # time to first token
//! tok_ms = 5                 # time per further output token
//! output_tokens = 50         # or [min, max]: drawn per request
//! tokens_per_chunk = 1       # output tokens per streamed delta event
//! jitter = { dist = "uniform", spread = 0.1 }   # or "fixed", or lognormal with sigma
//! [models."gpt-4o-mini"]     # a model overrides any of the defaults
//! ttft_ms = 350
//! ```

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// How a nominal duration is spread from one request to the next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Jitter {
    /// Exactly the nominal duration.
    Fixed,
    /// Nominal × U(1 − spread, 1 + spread).
    Uniform { spread: f64 },
    /// Nominal × exp(N(0, sigma)): the median is the nominal, the tail is long.
    LogNormal { sigma: f64 },
}

/// The behaviour of one model.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSpec {
    pub ttft_ms: f64,
    pub tok_ms: f64,
    /// Output length in tokens, drawn uniformly from `[min, max]` per request.
    pub output_tokens: (u32, u32),
    pub tokens_per_chunk: u32,
    pub jitter: Jitter,
}

impl Default for ModelSpec {
    fn default() -> Self {
        ModelSpec {
            ttft_ms: 200.0,
            tok_ms: 5.0,
            output_tokens: (50, 50),
            tokens_per_chunk: 1,
            jitter: Jitter::Fixed,
        }
    }
}

/// What to do with a model name the scenario does not define.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnknownModel {
    /// Serve it with the defaults.
    Default,
    /// Answer with the API's 404 `model_not_found` error.
    Error,
}

/// A whole scenario, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub seed: u64,
    pub unknown_model: UnknownModel,
    pub defaults: ModelSpec,
    pub models: BTreeMap<String, ModelSpec>,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            seed: 0,
            unknown_model: UnknownModel::Default,
            defaults: ModelSpec::default(),
            models: BTreeMap::new(),
        }
    }
}

impl Scenario {
    /// The spec for `model`, or `None` when unknown models are errors.
    pub fn model(&self, model: &str) -> Option<&ModelSpec> {
        match self.models.get(model) {
            Some(spec) => Some(spec),
            None if self.unknown_model == UnknownModel::Default => Some(&self.defaults),
            None => None,
        }
    }

    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: path.display().to_string(),
            line: None,
            message: format!("cannot read it: {e}"),
        })?;
        Scenario::parse(&text, &path.display().to_string())
    }

    /// Parses scenario text; `file` is only used in error messages.
    pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
        let err = |span: Option<std::ops::Range<usize>>, message: String| ScenarioError {
            file: file.to_string(),
            line: span.map(|s| line_of(text, s.start)),
            message,
        };
        let raw: RawScenario = toml::from_str(text).map_err(|e| {
            err(
                e.span(),
                format!("{} (see scenarios/ for examples)", e.message().trim()),
            )
        })?;
        let unknown_model = match raw
            .unknown_model
            .as_ref()
            .map(|s| (s.get_ref().as_str(), s.span()))
        {
            None | Some(("default", _)) => UnknownModel::Default,
            Some(("error", _)) => UnknownModel::Error,
            Some((other, span)) => {
                return Err(err(
                    Some(span),
                    format!("unknown_model must be \"default\" or \"error\" (got {other:?})"),
                ))
            }
        };
        let base = ModelSpec::default();
        let defaults = match &raw.defaults {
            Some(d) => d
                .apply(&base, "defaults")
                .map_err(|(s, m)| err(Some(s), m))?,
            None => base,
        };
        let mut models = BTreeMap::new();
        for (name, m) in &raw.models {
            let spec = m
                .apply(&defaults, &format!("models.{name:?}"))
                .map_err(|(s, m)| err(Some(s), m))?;
            models.insert(name.clone(), spec);
        }
        Ok(Scenario {
            seed: raw.seed.unwrap_or(0),
            unknown_model,
            defaults,
            models,
        })
    }
}

/// A scenario file that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ScenarioError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    seed: Option<u64>,
    unknown_model: Option<Spanned<String>>,
    defaults: Option<RawModel>,
    #[serde(default)]
    models: BTreeMap<String, RawModel>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    ttft_ms: Option<Spanned<f64>>,
    tok_ms: Option<Spanned<f64>>,
    output_tokens: Option<Spanned<RawRange>>,
    tokens_per_chunk: Option<Spanned<i64>>,
    jitter: Option<Spanned<RawJitter>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawRange {
    One(i64),
    Range(Vec<i64>),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawJitter {
    Name(String),
    Table {
        dist: String,
        spread: Option<f64>,
        sigma: Option<f64>,
    },
}

type Span = std::ops::Range<usize>;

impl RawModel {
    fn apply(&self, base: &ModelSpec, table: &str) -> Result<ModelSpec, (Span, String)> {
        let mut m = base.clone();
        if let Some(v) = &self.ttft_ms {
            m.ttft_ms = non_negative(v, table, "ttft_ms")?;
        }
        if let Some(v) = &self.tok_ms {
            m.tok_ms = non_negative(v, table, "tok_ms")?;
        }
        if let Some(v) = &self.tokens_per_chunk {
            let n = *v.get_ref();
            if !(1..=10_000).contains(&n) {
                return Err((
                    v.span(),
                    format!("{table}.tokens_per_chunk must be between 1 and 10000 (got {n})"),
                ));
            }
            m.tokens_per_chunk = n as u32;
        }
        if let Some(v) = &self.output_tokens {
            let bad = |got: String| {
                (v.span(), format!("{table}.output_tokens must be a count ≥ 1 or [min, max] with 1 ≤ min ≤ max ≤ 1000000 (got {got})"))
            };
            let (lo, hi) = match v.get_ref() {
                RawRange::One(n) => (*n, *n),
                RawRange::Range(r) if r.len() == 2 => (r[0], r[1]),
                RawRange::Range(r) => return Err(bad(format!("{r:?}"))),
            };
            if lo < 1 || hi < lo || hi > 1_000_000 {
                return Err(bad(format!("[{lo}, {hi}]")));
            }
            m.output_tokens = (lo as u32, hi as u32);
        }
        if let Some(v) = &self.jitter {
            m.jitter = jitter(v, table)?;
        }
        Ok(m)
    }
}

fn non_negative(v: &Spanned<f64>, table: &str, field: &str) -> Result<f64, (Span, String)> {
    let x = *v.get_ref();
    if !x.is_finite() || !(0.0..=3_600_000.0).contains(&x) {
        return Err((
            v.span(),
            format!("{table}.{field} must be between 0 and 3600000 ms (got {x})"),
        ));
    }
    Ok(x)
}

fn jitter(v: &Spanned<RawJitter>, table: &str) -> Result<Jitter, (Span, String)> {
    let hint = "write jitter = \"fixed\", { dist = \"uniform\", spread = 0.2 } or { dist = \"lognormal\", sigma = 0.3 }";
    let bad = |m: String| (v.span(), format!("{table}.jitter: {m}; {hint}"));
    let (dist, spread, sigma) = match v.get_ref() {
        RawJitter::Name(n) => (n.as_str(), None, None),
        RawJitter::Table {
            dist,
            spread,
            sigma,
        } => (dist.as_str(), *spread, *sigma),
    };
    match (dist, spread, sigma) {
        ("fixed", None, None) => Ok(Jitter::Fixed),
        ("uniform", Some(s), None) if (0.0..1.0).contains(&s) => Ok(Jitter::Uniform { spread: s }),
        ("uniform", s, None) => Err(bad(format!("uniform needs spread in [0, 1) (got {s:?})"))),
        ("lognormal", None, Some(s)) if s > 0.0 && s <= 3.0 => Ok(Jitter::LogNormal { sigma: s }),
        ("lognormal", None, s) => Err(bad(format!("lognormal needs sigma in (0, 3] (got {s:?})"))),
        (d, _, _) if !["fixed", "uniform", "lognormal"].contains(&d) => {
            Err(bad(format!("unknown dist {d:?}")))
        }
        (d, _, _) => Err(bad(format!(
            "{d} takes {}",
            match d {
                "fixed" => "no parameter",
                "uniform" => "only spread",
                _ => "only sigma",
            }
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Scenario::parse(text, "s.toml").unwrap_err().to_string()
    }

    #[test]
    fn models_inherit_the_defaults() {
        let s = Scenario::parse(
            "seed = 3\n[defaults]\ntok_ms = 7\noutput_tokens = [10, 20]\n[models.a]\nttft_ms = 50\njitter = { dist = \"uniform\", spread = 0.1 }\n",
            "s.toml",
        )
        .unwrap();
        let a = s.model("a").unwrap();
        assert_eq!(
            (a.ttft_ms, a.tok_ms, a.output_tokens),
            (50.0, 7.0, (10, 20))
        );
        assert_eq!(a.jitter, Jitter::Uniform { spread: 0.1 });
        assert_eq!(s.model("other").unwrap().tok_ms, 7.0);
        assert_eq!(s.seed, 3);
    }

    #[test]
    fn errors_name_file_line_field_and_fix() {
        assert_eq!(
            err("[defaults]\nttft_ms = 1\ntok_ms = -5\n"),
            "s.toml:3: defaults.tok_ms must be between 0 and 3600000 ms (got -5)"
        );
        let e = err("[models.x]\n\njitter = { dist = \"gauss\" }\n");
        assert!(
            e.starts_with("s.toml:3: models.\"x\".jitter: unknown dist \"gauss\"; write jitter ="),
            "{e}"
        );
        let e = err("[defaults]\nttft = 3\n");
        assert!(e.starts_with("s.toml:2: unknown field `ttft`"), "{e}");
        let e = err("[models.y]\noutput_tokens = [5, 2]\n");
        assert!(
            e.contains("s.toml:2: models.\"y\".output_tokens must be"),
            "{e}"
        );
        let e = err("unknown_model = \"maybe\"\n");
        assert!(e.starts_with("s.toml:1: unknown_model must be"), "{e}");
    }

    #[test]
    fn unknown_models_can_be_errors() {
        let s = Scenario::parse("unknown_model = \"error\"\n[models.a]\n", "s.toml").unwrap();
        assert!(s.model("a").is_some());
        assert!(s.model("b").is_none());
    }
}
