//! The scenario file as TOML gives it (`RawScenario`, whose types make its JSON Schema)
//! and read into a [`Scenario`]: each table checked once, an error naming the file, the
//! line and the field and what to write instead. What a scenario holds is `scenario`'s.

use super::scenario::{Integrity, Scenario, ScenarioError, UnknownModel};
use crate::cache::CacheSettings;
use crate::provider::model::ModelSpec;
use crate::provider::model_file::RawModel;
use crate::pushback::limits::Limits;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

impl Scenario {
    /// Reads the scenario file at `path`.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            let hint = "; name one that exists ([mock] scenario in plimsoll.toml counts from its directory; --scenario from here; the shipped ones are in scenarios/), or leave it out for the built-in defaults";
            spans::unreadable(path, &e, hint)
        })?;
        Scenario::parse(&text, &path.display().to_string())
    }

    /// Parses scenario text; `file` is only used in error messages.
    pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
        let spans = spans::Spans::new(text, file);
        let err = |span, message: String| spans.err(span, message);
        let raw: RawScenario =
            toml::from_str(text).map_err(|e| spans.toml(&e, "(see scenarios/ for examples)"))?;
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
        let provider = match &raw.provider {
            Some(p) => {
                p.get_ref()
                    .validate()
                    .map_err(|e| err(Some(p.span()), format!("provider.{e}")))?;
                *p.get_ref()
            }
            None => Limits::default(),
        };
        let cache = match &raw.cache {
            Some(c) => {
                c.get_ref()
                    .validate()
                    .map_err(|e| err(Some(c.span()), format!("cache.{e}")))?;
                *c.get_ref()
            }
            None => CacheSettings::default(),
        };
        let mcp = match &raw.mcp {
            Some(m) => m
                .get_ref()
                .check()
                .map_err(|(span, msg)| err(Some(span.unwrap_or(m.span())), msg))?,
            None => Default::default(),
        };
        let audio = match &raw.audio {
            Some(a) => {
                a.get_ref()
                    .validate()
                    .map_err(|e| err(Some(a.span()), format!("audio.{e}")))?;
                *a.get_ref()
            }
            None => Default::default(),
        };
        Ok(Scenario {
            mcp,
            audio,
            seed: raw.seed.unwrap_or(0),
            provider,
            cache,
            unknown_model,
            integrity: raw.integrity.unwrap_or_default(),
            created: raw.created,
            defaults,
            models,
        })
    }
}

/// A mock provider scenario: which models the mock serves, how each behaves in time and
/// fails, and the provider's pushback, prompt cache, integrity checks, MCP tools and audio
/// timing.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    /// The RNG's seed (replies, jitter, failure draws; same seed, same reply). Default 0;
    /// `plimsoll mock --seed` and, in every step, plimsoll.toml's [mock] seed replace it.
    seed: Option<u64>,
    /// What a model name the scenario does not define gets: "default" serves it with
    /// [defaults] (the default), "error" answers the API's 404 model_not_found.
    #[schemars(with = "Option<String>")]
    unknown_model: Option<Spanned<String>>,
    /// Which checks the integrity oracle runs on every conversation sent back to the mock;
    /// all are on by default.
    integrity: Option<Integrity>,
    /// A fixed `created` timestamp (Unix seconds) put in replies so replays are
    /// byte-identical; unset: the current time. `--fixed-created` overrides it.
    created: Option<u64>,
    /// Pushback shared by every model: per-API-key quotas and generation slots with their
    /// queue. Unset: no limits.
    #[schemars(with = "Option<Limits>")]
    provider: Option<Spanned<Limits>>,
    /// The provider's prompt cache, shared across sessions within one API key and model; on
    /// by default.
    #[schemars(with = "Option<CacheSettings>")]
    cache: Option<Spanned<CacheSettings>>,
    /// Timing and behaviour every model starts from (200 ms to first token, 5 ms per token,
    /// 50 output tokens unless set); each [models.NAME] overrides fields of it.
    defaults: Option<RawModel>,
    /// One table per model name, [models."NAME"], overriding [defaults] for that model.
    /// NAME-stable is served as NAME with every failure removed.
    #[serde(default)]
    models: BTreeMap<String, RawModel>,
    /// Tools the mock serves over the Model Context Protocol (/mcp, or `plimsoll mcp
    /// --stdio`); none without this table.
    #[schemars(with = "Option<crate::spec::mcp::RawMcp>")]
    mcp: Option<Spanned<crate::spec::mcp::RawMcp>>,
    /// How speech, transcriptions and the Realtime API keep time: speaking rate, latencies
    /// and chunk size.
    #[schemars(with = "Option<crate::spec::audio::AudioSettings>")]
    audio: Option<Spanned<crate::spec::audio::AudioSettings>>,
}

/// The JSON Schema of a scenario file, made by `g` from the types that read it.
pub fn schema(g: schemars::SchemaGenerator) -> schemars::Schema {
    g.into_root_schema_for::<RawScenario>()
}
