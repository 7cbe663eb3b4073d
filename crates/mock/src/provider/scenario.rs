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
//! failures = { rate_limit = 0.05, retry_after_ms = 500 }   # see failures/rates.rs
//! script_scope = "turn"      # or "conversation"; see script.rs
//! embedding_dim = 1536       # POST /v1/embeddings: vector length (the request's `dimensions` wins)
//! prefill_ms_per_1k_tokens = 40   # reading the prompt: per 1,000 input tokens the cache did
//!                            # not hold, added to the time to first token (default 0)
//! cache_min_tokens = 1024    # the shortest prefix the prompt cache holds (default: the API's)
//! reasoning = { mode = "auto", tokens = [200, 400], redacted_share = 0.1, tok_ms = 2 }
//!                            # see model.rs: when it reasons, how long, how fast
//! [[models."gpt-4o-mini".fail]]   # failures by rule, not by draw: see failures/script.rs
//! attempts = 2               # the first 2 attempts of each call fail …
//! with = "overloaded"        # … with 529 / 503
//! [[models."gpt-4o-mini".script]]
//! call = "store"             # a tool call with templated arguments …
//! args = { key = "k{{turn}}", value = "{{nonce}}" }
//! [[models."gpt-4o-mini".script]]
//! call = "fetch"
//! args = { key = "k{{turn}}" }
//! expect = "{{nonce}}"       # … whose result must echo this (integrity oracle)
//! [[models."gpt-4o-mini".script]]
//! say = "Done with turn {{turn}}."   # a text answer; past the last step: drawn text
//! [provider]                 # pushback shared by every model (see pushback/limits.rs)
//! quota = { rpm = 600, itpm = 100000 }              # per API key, per minute
//! capacity = { max_in_flight = 8, max_queue = 32 }  # generation slots and their queue
//! [cache]                    # the provider's prompt cache (see cache/mod.rs)
//! enabled = true             # false: nothing is ever cached (every usage reports 0)
//! capacity = 100000          # prefixes held at most; the least recently used goes first
//! implicit_ttl_s = 300       # OpenAI's and Gemini's automatic cache: life of an unused prefix
//! [integrity]                # which checks the oracle runs (all on by default)
//! echo = true
//! isolation = true
//! history = true
//! reasoning = true           # thinking blocks / reasoning items come back intact
//! [audio]                    # how speech, transcriptions and the Realtime API keep time
//! chars_per_s = 15           # (see spec/audio.rs)
//! [[mcp.tools]]              # tools served over MCP (/mcp, plimsoll mcp --stdio): see spec/mcp.rs
//! name = "kv_get"
//! result = "kv_get"
//! ```
//!
//! A model named `NAME-stable` is NAME with every failure rate at zero: a fallback
//! target that never fails.

use crate::cache::CacheSettings;
use crate::failures::rates::Failures;
use crate::pushback::limits::Limits;
use crate::pushback::state::PROVIDER;
use serde::Deserialize;
use std::collections::BTreeMap;

pub use crate::provider::model::{Jitter, ModelSpec};

/// Which integrity checks the oracle runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Integrity {
    /// Check that a scripted call's `expect` value comes back intact in the matching tool
    /// result (what was stored is read back unchanged). Default true.
    pub echo: bool,
    /// Check that nothing of another session appears: no other session's marker or psn
    /// nonce, no tool call or answer the mock gave another session. Default true.
    pub isolation: bool,
    /// Check history is complete, in order and unaltered: user turns without gaps or
    /// repeats, every tool call answered once, arguments and answers as the mock sent them.
    /// Default true.
    pub history: bool,
    /// Check that thinking blocks and reasoning items come back as the model gave them
    /// (default true; false stops recording the violation, the API's 400 stays).
    pub reasoning: bool,
}

impl Default for Integrity {
    fn default() -> Self {
        Integrity {
            echo: true,
            isolation: true,
            history: true,
            reasoning: true,
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
    /// Quotas and slots shared by every model.
    pub provider: Limits,
    /// The provider's prompt cache.
    pub cache: CacheSettings,
    pub defaults: ModelSpec,
    pub models: BTreeMap<String, ModelSpec>,
    /// The tools served over MCP (none without an `[mcp]` section).
    pub mcp: crate::spec::mcp::McpSpec,
    /// How the audio APIs speak and hear in time.
    pub audio: crate::spec::audio::AudioSettings,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            seed: 0,
            unknown_model: UnknownModel::Default,
            integrity: Integrity::default(),
            created: None,
            provider: Limits::default(),
            cache: CacheSettings::default(),
            defaults: ModelSpec::default(),
            models: BTreeMap::new(),
            mcp: Default::default(),
            audio: Default::default(),
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
                stable.fail = std::sync::Arc::new(Vec::new());
                Cow::Owned(stable)
            });
        }
        lookup(model).map(Cow::Borrowed)
    }

    /// The limits the scenario sets for a scope of the pushback: the provider's (`*`) or
    /// a model's (the defaults' for a model it does not name).
    pub fn limits(&self, scope: &str) -> Limits {
        if scope == PROVIDER {
            self.provider
        } else {
            self.model(scope).map_or(self.defaults.limits, |s| s.limits)
        }
    }

    /// Whether the scenario sets any limit, for the provider or a model.
    pub fn sets_limits(&self) -> bool {
        !self.provider.is_none()
            || !self.defaults.limits.is_none()
            || self.models.values().any(|m| !m.limits.is_none())
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
}

/// A scenario file that cannot be used, with where and why.
pub type ScenarioError = spans::FileError;

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
    fn provider_and_model_limits_are_read_and_checked() {
        let s = Scenario::parse(
            "[provider]\nquota = { rpm = 600, burst_s = 1 }\n[models.a]\ncapacity = { max_in_flight = 4, max_queue = 8 }\n",
            "s.toml",
        )
        .unwrap();
        assert_eq!(s.provider.quota.unwrap().rpm, Some(600.0));
        assert_eq!(s.provider.quota.unwrap().burst_s, 1.0);
        let a = s.model("a").unwrap();
        assert_eq!(a.limits.capacity.unwrap().max_queue, Some(8));
        assert_eq!(a.limits.capacity.unwrap().slowdown_at_full, 1.0);
        let e = err("[models.a]\n\ncapacity = { max_in_flight = 0 }\n");
        assert!(
            e.starts_with("s.toml:3: models.\"a\".capacity: max_in_flight must be between 1"),
            "{e}"
        );
        let e = err("seed = 1\n[provider]\nquota = { rpm = -5 }\n");
        assert!(
            e.starts_with("s.toml:2: provider.quota: rpm must be a positive number"),
            "{e}"
        );
        let e = err("[provider]\nquota = { rpn = 5 }\n");
        assert!(e.starts_with("s.toml:2: unknown field `rpn`"), "{e}");
        let e = err("[models.a]\n[[models.a.fail]]\nattempts = 2\nwith = \"boom\"\n");
        assert!(
            e.starts_with("s.toml:2: models.\"a\".fail[0]: with = \"boom\": use rate_limit"),
            "{e}"
        );
        let s = Scenario::parse(
            "[models.a]\n[[models.a.fail]]\nattempts = 2\nwith = \"overloaded\"\n",
            "s.toml",
        )
        .unwrap();
        assert_eq!(s.model("a").unwrap().fail.len(), 1);
        assert!(s.model("a-stable").unwrap().fail.is_empty());
        let e = err("[defaults]\nquota = { burst_s = 2 }\n");
        assert!(e.contains("a quota needs at least one of rpm"), "{e}");
    }

    #[test]
    fn the_cache_and_prefill_are_read_and_checked() {
        let s = Scenario::parse(
            "[cache]\ncapacity = 10\n[defaults]\nprefill_ms_per_1k_tokens = 40\n[models.a]\ncache_min_tokens = 2048\n",
            "s.toml",
        )
        .unwrap();
        assert_eq!((s.cache.enabled, s.cache.capacity), (true, 10));
        let a = s.model("a").unwrap();
        assert_eq!(
            (a.prefill_ms_per_1k, a.cache_min_tokens),
            (40.0, Some(2048))
        );
        assert_eq!(
            Scenario::default().defaults.prefill_ms_per_1k,
            0.0,
            "timing unchanged"
        );
        let e = err("[cache]\ncapacity = 0\n");
        assert!(
            e.starts_with("s.toml:1: cache.capacity must be between 1"),
            "{e}"
        );
        let e = err("[cache]\nenable = false\n");
        assert!(e.contains("unknown field `enable`"), "{e}");
        let e = err("[defaults]\nprefill_ms_per_1k_tokens = -1\n");
        assert!(
            e.contains("defaults.prefill_ms_per_1k_tokens must be between 0"),
            "{e}"
        );
    }

    #[test]
    fn unknown_models_can_be_errors() {
        let s = Scenario::parse("unknown_model = \"error\"\n[models.a]\n", "s.toml").unwrap();
        assert!(s.model("a").is_some());
        assert!(s.model("b").is_none());
    }
}
