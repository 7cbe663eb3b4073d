//! One model's table of a scenario file (`[defaults]` or `[models."NAME"]`) as written,
//! and its check into a [`ModelSpec`]: each error carries the span of the field at fault.

use crate::failures::rates::Failures;
use crate::provider::model::{Jitter, ModelSpec, Reasoning, ReasoningMode};
use crate::provider::script::{self, Scope, Step};
use crate::pushback::limits::{Capacity, Quota};
use serde::Deserialize;
use std::sync::Arc;
use toml::Spanned;

/// A model's timing and behaviour: [defaults] for every model, [models.NAME] for one (unset
/// fields keep the defaults').
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawModel {
    /// Time to first token in ms, 0 to 3600000. Default 200.
    #[schemars(with = "Option<f64>")]
    ttft_ms: Option<Spanned<f64>>,
    /// Time per further output token in ms, 0 to 3600000. Default 5.
    #[schemars(with = "Option<f64>")]
    tok_ms: Option<Spanned<f64>>,
    /// Reply length in tokens: a count, or [min, max] drawn uniformly per request (1 ≤ min
    /// ≤ max ≤ 1000000). Default 50.
    #[schemars(with = "Option<RawRange>")]
    output_tokens: Option<Spanned<RawRange>>,
    /// Output tokens per streamed delta event, 1 to 10000. Default 1.
    #[schemars(with = "Option<i64>")]
    tokens_per_chunk: Option<Spanned<i64>>,
    /// How durations vary per chunk: "fixed" (default), { dist = "uniform", spread = S }
    /// with S in [0, 1), or { dist = "lognormal", sigma = S } with S in (0, 3].
    #[schemars(with = "Option<RawJitter>")]
    jitter: Option<Spanned<RawJitter>>,
    /// Seeded per-request failure rates (shares 0..1) and their parameters; none by
    /// default. PLIMSOLL_FAIL_* environment variables override them.
    #[schemars(with = "Option<Failures>")]
    failures: Option<Spanned<Failures>>,
    /// This model's own per-API-key quotas per minute (each key has its own buckets per
    /// model), on top of [provider]'s.
    #[schemars(with = "Option<Quota>")]
    quota: Option<Spanned<Quota>>,
    /// Failure rules, [[models.NAME.fail]]: requests that fail by rule, the same way every
    /// run. The first matching rule wins and replaces the seeded draw.
    #[schemars(with = "Option<Vec<crate::failures::script::RawRule>>")]
    fail: Option<Vec<Spanned<crate::failures::script::RawRule>>>,
    /// This model's own generation slots and queue, on top of [provider]'s.
    #[schemars(with = "Option<Capacity>")]
    capacity: Option<Spanned<Capacity>>,
    /// When the model reasons before answering, for how many tokens and how fast. Default:
    /// mode "auto", 200 tokens, at tok_ms.
    #[schemars(with = "Option<RawReasoning>")]
    reasoning: Option<Spanned<RawReasoning>>,
    /// Length of this model's vectors from POST /v1/embeddings, 1 to 16384; a request's
    /// `dimensions` may ask for fewer. Default 1536.
    #[schemars(with = "Option<i64>")]
    embedding_dim: Option<Spanned<i64>>,
    /// Time to read the prompt, in ms per 1,000 input tokens the prompt cache did not hold,
    /// added to the time to first token. Default 0.
    #[schemars(with = "Option<f64>")]
    prefill_ms_per_1k_tokens: Option<Spanned<f64>>,
    /// Shortest prompt prefix, in tokens (1 to 10000000), the prompt cache holds for this
    /// model. Default: the API's own minimum (OpenAI 1024).
    #[schemars(with = "Option<i64>")]
    cache_min_tokens: Option<Spanned<i64>>,
    /// Where the script counts tool results to pick its step: "turn" (since the last user
    /// message, the default) or "conversation" (the whole conversation).
    #[schemars(with = "Option<String>")]
    script_scope: Option<Spanned<String>>,
    /// Scripted steps, [[models.NAME.script]]: step N answers a request holding N tool
    /// results in scope; past the last step the model answers with drawn text.
    #[schemars(with = "Option<Vec<RawStep>>")]
    script: Option<Vec<Spanned<RawStep>>>,
}

/// One script step: exactly one of `call` (ask for a tool) or `say` (answer in text).
/// Templates: {{session}}, {{nonce}}, {{turn}}, {{step}}, {{result.N}}, {{result.last}}.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawStep {
    /// Name of the tool this step asks the agent to call. Excludes `say`.
    call: Option<String>,
    /// The tool call's arguments as a table; strings in it are templates, e.g. { key =
    /// "k{{turn}}" }. Call steps only; default {}.
    #[schemars(with = "Option<serde_json::Value>")]
    args: Option<toml::Value>,
    /// Text the matching tool result must contain (templated), checked by the integrity
    /// oracle's echo check. Call steps only.
    expect: Option<String>,
    /// The text answer of this step (templated). Excludes `call`, `args` and `expect`.
    say: Option<String>,
}

/// `reasoning = { mode = "auto", tokens = [200, 400], redacted_share = 0.1, tok_ms = 2 }`
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawReasoning {
    /// When the model reasons: "auto" (when the request asks, the default), "always" (every
    /// OpenAI request too) or "off" (never; nothing is checked).
    mode: Option<String>,
    /// Reasoning length in tokens, a count or [min, max] drawn per reply (1 to 60000);
    /// scaled by OpenAI's effort, capped by Anthropic's budget. Default 200.
    tokens: Option<RawRange>,
    /// Share (0..1) of Anthropic replies whose thinking comes as a `redacted_thinking`
    /// block. Default 0.
    redacted_share: Option<f64>,
    /// Time per reasoning token in ms, 0 to 60000. Default: the model's tok_ms.
    tok_ms: Option<f64>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
enum RawRange {
    One(i64),
    Range(Vec<i64>),
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
enum RawJitter {
    Name(String),
    Table {
        /// "uniform" (with spread) or "lognormal" (with sigma).
        dist: String,
        /// With dist = "uniform": each duration varies by up to this share either way, in
        /// [0, 1).
        spread: Option<f64>,
        /// With dist = "lognormal": the spread of the log-normal, in (0, 3].
        sigma: Option<f64>,
    },
}

type Span = std::ops::Range<usize>;

impl RawModel {
    /// `base` with this table's fields applied, each checked in the order they are
    /// listed here (the first wrong one is the error).
    pub(crate) fn apply(&self, base: &ModelSpec, table: &str) -> Result<ModelSpec, (Span, String)> {
        let mut m = base.clone();
        self.apply_sizes(&mut m, table)?;
        if let Some(v) = &self.reasoning {
            m.reasoning = reasoning(v.get_ref(), m.reasoning)
                .map_err(|e| (v.span(), format!("{table}.reasoning: {e}")))?;
        }
        if let Some(v) = &self.jitter {
            m.jitter = jitter(v, table)?;
        }
        self.apply_failures(&mut m, table)?;
        self.apply_limits(&mut m, table)?;
        self.apply_script(&mut m, table)?;
        Ok(m)
    }

    /// Times and sizes: `ttft_ms`, `tok_ms`, `prefill_ms_per_1k_tokens`,
    /// `tokens_per_chunk`, `output_tokens`, `embedding_dim`, `cache_min_tokens`.
    fn apply_sizes(&self, m: &mut ModelSpec, table: &str) -> Result<(), (Span, String)> {
        if let Some(v) = &self.ttft_ms {
            m.ttft_ms = non_negative(v, table, "ttft_ms")?;
        }
        if let Some(v) = &self.prefill_ms_per_1k_tokens {
            m.prefill_ms_per_1k = non_negative(v, table, "prefill_ms_per_1k_tokens")?;
        }
        if let Some(v) = &self.cache_min_tokens {
            let n = *v.get_ref();
            if !(1..=10_000_000).contains(&n) {
                return Err((
                    v.span(),
                    format!("{table}.cache_min_tokens must be between 1 and 10000000 (got {n})"),
                ));
            }
            m.cache_min_tokens = Some(n as u32);
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
            m.output_tokens = range(v.get_ref(), 1_000_000)
                .map_err(|got| (v.span(), format!("{table}.output_tokens must be a count ≥ 1 or [min, max] with 1 ≤ min ≤ max ≤ 1000000 (got {got})")))?;
        }
        if let Some(v) = &self.embedding_dim {
            let n = *v.get_ref();
            if !(1..=16_384).contains(&n) {
                return Err((
                    v.span(),
                    format!("{table}.embedding_dim must be between 1 and 16384 (got {n})"),
                ));
            }
            m.embedding_dim = n as u32;
        }
        Ok(())
    }

    /// `failures` (rates) and `fail` (rules).
    fn apply_failures(&self, m: &mut ModelSpec, table: &str) -> Result<(), (Span, String)> {
        if let Some(v) = &self.failures {
            v.get_ref()
                .validate()
                .map_err(|e| (v.span(), format!("{table}.failures: {e}")))?;
            m.failures = *v.get_ref();
        }
        if let Some(rules) = &self.fail {
            let mut out = Vec::with_capacity(rules.len());
            for (i, r) in rules.iter().enumerate() {
                let rule = r
                    .get_ref()
                    .check()
                    .map_err(|e| (r.span(), format!("{table}.fail[{i}]: {e}")))?;
                out.push(rule);
            }
            m.fail = Arc::new(out);
        }
        Ok(())
    }

    /// The model's own `quota` and `capacity`.
    fn apply_limits(&self, m: &mut ModelSpec, table: &str) -> Result<(), (Span, String)> {
        if let Some(v) = &self.quota {
            v.get_ref()
                .validate()
                .map_err(|e| (v.span(), format!("{table}.quota: {e}")))?;
            m.limits.quota = Some(*v.get_ref());
        }
        if let Some(v) = &self.capacity {
            v.get_ref()
                .validate()
                .map_err(|e| (v.span(), format!("{table}.capacity: {e}")))?;
            m.limits.capacity = Some(*v.get_ref());
        }
        Ok(())
    }

    /// `script_scope` and the `script` steps.
    fn apply_script(&self, m: &mut ModelSpec, table: &str) -> Result<(), (Span, String)> {
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
        Ok(())
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

/// A count or `[min, max]` within 1..=`max`; the error shows what was written.
fn range(r: &RawRange, max: i64) -> Result<(u32, u32), String> {
    let (lo, hi) = match r {
        RawRange::One(n) => (*n, *n),
        RawRange::Range(r) if r.len() == 2 => (r[0], r[1]),
        RawRange::Range(r) => return Err(format!("{r:?}")),
    };
    if lo < 1 || hi < lo || hi > max {
        return Err(format!("[{lo}, {hi}]"));
    }
    Ok((lo as u32, hi as u32))
}

fn reasoning(r: &RawReasoning, base: Reasoning) -> Result<Reasoning, String> {
    let mut out = base;
    if let Some(m) = &r.mode {
        out.mode = match m.as_str() {
            "auto" => ReasoningMode::Auto,
            "always" => ReasoningMode::Always,
            "off" => ReasoningMode::Off,
            other => {
                return Err(format!(
                    "mode must be \"auto\" (reason when the request asks), \"always\" or \"off\" (got {other:?})"
                ))
            }
        };
    }
    if let Some(t) = &r.tokens {
        out.tokens = range(t, 60_000).map_err(|got| {
            format!(
                "tokens must be a count ≥ 1 or [min, max] with 1 ≤ min ≤ max ≤ 60000 (got {got})"
            )
        })?;
    }
    if let Some(s) = r.redacted_share {
        if !(0.0..=1.0).contains(&s) {
            return Err(format!(
                "redacted_share must be a share between 0 and 1 (got {s})"
            ));
        }
        out.redacted_share = s;
    }
    if let Some(ms) = r.tok_ms {
        if !ms.is_finite() || !(0.0..=60_000.0).contains(&ms) {
            return Err(format!("tok_ms must be between 0 and 60000 ms (got {ms})"));
        }
        out.tok_ms = Some(ms);
    }
    Ok(out)
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
