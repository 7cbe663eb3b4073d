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
//! failures = { rate_limit = 0.05, retry_after_ms = 500 }   # see failures.rs
//! script_scope = "turn"      # or "conversation"; see script.rs
//! [[models."gpt-4o-mini".script]]
//! call = "store"             # a tool call with templated arguments …
//! args = { key = "k{{turn}}", value = "{{nonce}}" }
//! [[models."gpt-4o-mini".script]]
//! call = "fetch"
//! args = { key = "k{{turn}}" }
//! expect = "{{nonce}}"       # … whose result must echo this (integrity oracle)
//! [[models."gpt-4o-mini".script]]
//! say = "Done with turn {{turn}}."   # a text answer; past the last step: drawn text
//! [integrity]                # which checks the oracle runs (all on by default)
//! echo = true
//! isolation = true
//! history = true
//! ```
//!
//! A model named `NAME-stable` is NAME with every failure rate at zero: a fallback
//! target that never fails.

use crate::failures::Failures;
use crate::script::{self, Scope, Step};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
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
    /// Scripted steps; empty means the default policy (see reply.rs).
    pub script: Arc<Vec<Step>>,
    pub scope: Scope,
    pub failures: Failures,
}

impl Default for ModelSpec {
    fn default() -> Self {
        ModelSpec {
            ttft_ms: 200.0,
            tok_ms: 5.0,
            output_tokens: (50, 50),
            tokens_per_chunk: 1,
            jitter: Jitter::Fixed,
            script: Arc::new(Vec::new()),
            scope: Scope::Turn,
            failures: Failures::NONE,
        }
    }
}

/// Which integrity checks the oracle runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Integrity {
    pub echo: bool,
    pub isolation: bool,
    pub history: bool,
}

impl Default for Integrity {
    fn default() -> Self {
        Integrity {
            echo: true,
            isolation: true,
            history: true,
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
    pub integrity: Integrity,
    /// A fixed `created` timestamp for byte-identical replays.
    pub created: Option<u64>,
    pub defaults: ModelSpec,
    pub models: BTreeMap<String, ModelSpec>,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            seed: 0,
            unknown_model: UnknownModel::Default,
            integrity: Integrity::default(),
            created: None,
            defaults: ModelSpec::default(),
            models: BTreeMap::new(),
        }
    }
}

impl Scenario {
    /// The spec for `model`, or `None` when unknown models are errors. `NAME-stable`
    /// is NAME without failures.
    pub fn model(&self, model: &str) -> Option<std::borrow::Cow<'_, ModelSpec>> {
        use std::borrow::Cow;
        let lookup = |name: &str| match self.models.get(name) {
            Some(spec) => Some(spec),
            None if self.unknown_model == UnknownModel::Default => Some(&self.defaults),
            None => None,
        };
        if let Some(spec) = self.models.get(model) {
            return Some(Cow::Borrowed(spec));
        }
        if let Some(base) = model.strip_suffix("-stable") {
            return lookup(base).map(|spec| {
                let mut stable = spec.clone();
                stable.failures = Failures::NONE;
                Cow::Owned(stable)
            });
        }
        lookup(model).map(Cow::Borrowed)
    }

    /// Applies `PLIMSOLL_FAIL_*` environment variables to every model's failures.
    pub fn apply_failure_env(
        &mut self,
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<(), String> {
        self.defaults.failures = self.defaults.failures.with_env(&get)?;
        for spec in self.models.values_mut() {
            spec.failures = spec.failures.with_env(&get)?;
        }
        Ok(())
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
            integrity: raw.integrity.unwrap_or_default(),
            created: raw.created,
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
    integrity: Option<Integrity>,
    created: Option<u64>,
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
    failures: Option<Spanned<Failures>>,
    script_scope: Option<Spanned<String>>,
    script: Option<Vec<Spanned<RawStep>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    call: Option<String>,
    args: Option<toml::Value>,
    expect: Option<String>,
    say: Option<String>,
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
        if let Some(v) = &self.failures {
            v.get_ref()
                .validate()
                .map_err(|e| (v.span(), format!("{table}.failures: {e}")))?;
            m.failures = *v.get_ref();
        }
        if let Some(v) = &self.script_scope {
            m.scope = match v.get_ref().as_str() {
                "turn" => Scope::Turn,
                "conversation" => Scope::Conversation,
                other => {
                    return Err((
                        v.span(),
                        format!(
                        "{table}.script_scope must be \"turn\" or \"conversation\" (got {other:?})"
                    ),
                    ))
                }
            };
        }
        if let Some(steps) = &self.script {
            let mut out = Vec::with_capacity(steps.len());
            for (i, st) in steps.iter().enumerate() {
                out.push(step(st, &format!("{table}.script[{i}]"))?);
            }
            m.script = Arc::new(out);
        }
        Ok(m)
    }
}

fn step(raw: &Spanned<RawStep>, at: &str) -> Result<Step, (Span, String)> {
    let bad = |m: String| (raw.span(), format!("{at}: {m}"));
    let r = raw.get_ref();
    let check = |t: &str| {
        match script::unknown_placeholder(t) {
        Some(name) => Err(bad(format!(
            "unknown placeholder {{{{{name}}}}}; use session, nonce, turn, step, result.N or result.last"
        ))),
        None => Ok(()),
    }
    };
    match (&r.call, &r.say) {
        (Some(tool), None) => {
            if tool.is_empty() {
                return Err(bad("call must name a tool".into()));
            }
            let args = match &r.args {
                Some(v) => serde_json::to_value(v).map_err(|e| bad(format!("args: {e}")))?,
                None => serde_json::json!({}),
            };
            if !args.is_object() {
                return Err(bad(
                    "args must be a table, e.g. args = { key = \"k{{turn}}\" }".into(),
                ));
            }
            if let Some(name) = script::unknown_in_value(&args) {
                return Err(bad(format!(
                    "unknown placeholder {{{{{name}}}}} in args; use session, nonce, turn, step, result.N or result.last"
                )));
            }
            if let Some(e) = &r.expect {
                check(e)?;
            }
            Ok(Step::Call {
                tool: tool.clone(),
                args,
                expect: r.expect.clone(),
            })
        }
        (None, Some(text)) => {
            if r.args.is_some() || r.expect.is_some() {
                return Err(bad(
                    "args and expect belong to call steps, not say steps".into()
                ));
            }
            check(text)?;
            Ok(Step::Say { text: text.clone() })
        }
        _ => Err(bad(
            "each step needs exactly one of call = \"tool\" or say = \"text\"".into(),
        )),
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
    fn scripts_failures_and_stable_variants() {
        let s = Scenario::parse(
            "[models.a]\nfailures = { rate_limit = 0.5 }\n[[models.a.script]]\ncall = \"put\"\nargs = { v = \"{{nonce}}\" }\n[[models.a.script]]\nsay = \"ok {{turn}}\"\n",
            "s.toml",
        )
        .unwrap();
        let a = s.model("a").unwrap();
        assert_eq!(a.failures.rate_limit, 0.5);
        assert_eq!(a.script.len(), 2);
        assert_eq!(s.model("a-stable").unwrap().failures, Failures::NONE);
        assert_eq!(s.model("a-stable").unwrap().script.len(), 2);
        let e = err("[models.a]\n[[models.a.script]]\ncall = \"x\"\nsay = \"y\"\n");
        assert!(
            e.starts_with("s.toml:2: models.\"a\".script[0]: each step needs exactly one of"),
            "{e}"
        );
        let e = err("[models.a]\n[[models.a.script]]\nsay = \"{{sesion}}\"\n");
        assert!(e.contains("unknown placeholder {{sesion}}"), "{e}");
        let e = err("[models.a]\nfailures = { rate_limit = 1.5 }\n");
        assert!(
            e.starts_with("s.toml:2: models.\"a\".failures: rate_limit must be a rate"),
            "{e}"
        );
        let e = err("[models.a]\nfailures = { ratelimit = 0.1 }\n");
        assert!(e.contains("unknown field `ratelimit`"), "{e}");
    }

    #[test]
    fn unknown_models_can_be_errors() {
        let s = Scenario::parse("unknown_model = \"error\"\n[models.a]\n", "s.toml").unwrap();
        assert!(s.model("a").is_some());
        assert!(s.model("b").is_none());
    }
}
