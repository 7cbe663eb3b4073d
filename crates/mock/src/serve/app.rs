//! What every request handler may read: the scenario, the seed, the counters, the
//! ledger, the failure rates changed live and the prompt cache. Built once when the mock
//! starts.

use crate::failures::rates::Failures;
use crate::ledger::{Ledger, Summary};
use crate::provider::scenario::{ModelSpec, Scenario};
use crate::pushback::state::Pushback;
use crate::serve::rendezvous::Rendezvous;
use crate::serve::stats::Stats;
use axum::extract::FromRef;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, RwLock};

/// Everything a request handler may read. Built once at start.
pub struct App {
    pub scenario: Scenario,
    pub seed: u64,
    pub max_body_bytes: usize,
    /// A fixed `created` timestamp (for byte-identical replays), else the clock.
    pub fixed_created: Option<u64>,
    pub stats: Stats,
    /// The requests refused, by what was asked and the words of the answer.
    pub refusals: crate::serve::refusals::Refusals,
    pub ledger: Ledger,
    /// Failure rates changed live (`POST /plimsoll/admin/failures`): by model, or
    /// `*` for every model. They replace the scenario's rates.
    pub failure_overrides: RwLock<BTreeMap<String, Failures>>,
    /// Quotas and slots, and what they refused and queued.
    pub pushback: Pushback,
    /// Calls so far, by model: for `every = M` failure rules.
    pub calls_by_model: std::sync::Mutex<std::collections::HashMap<String, u64>>,
    /// Stored Responses, for `previous_response_id`.
    pub chains: crate::provider::chain::Chains,
    /// The barrier and file drop box of sharded runs.
    pub rendezvous: Rendezvous,
    /// A recorded workload being replayed: its sessions are answered as recorded.
    pub replay: Option<crate::provider::replay::Replaying>,
    /// The provider's prompt cache, and when the mock started (its clock's zero).
    pub prompt_cache: crate::cache::store::Store,
    pub epoch: tokio::time::Instant,
    /// The tools served over MCP (`/mcp`), and what they served.
    pub mcp: crate::mcp::server::McpServer,
    /// Where speech is spoken and heard, off the runtime's threads (`audio::off_clock`).
    pub voice_pool: voice::pool::Pool,
    /// Speech made lately, kept for the next request for the same.
    pub said: crate::serve::audio::said::Said,
}

/// The rendezvous endpoints take only the rendezvous from the router's state.
impl FromRef<Arc<App>> for Rendezvous {
    fn from_ref(app: &Arc<App>) -> Self {
        app.rendezvous.clone()
    }
}

impl App {
    /// The failure rates in force for `model` right now.
    pub fn failures_for(&self, model: &str, spec: &ModelSpec) -> Failures {
        if model.ends_with("-stable") {
            return Failures::NONE;
        }
        let o = self
            .failure_overrides
            .read()
            .unwrap_or_else(|p| p.into_inner());
        o.get(model)
            .or_else(|| o.get("*"))
            .copied()
            .unwrap_or(spec.failures)
    }

    /// The ledger as served on `GET /plimsoll/ledger`, typed: with `provider` (what the
    /// quotas and slots did, and the limits in force in words) when any limit was set.
    pub fn ledger_summary(&self) -> Summary {
        let mut l = self.ledger.summary();
        if !l.totals.cache.is_empty() {
            l.totals.cache.evicted = self.prompt_cache.evicted.load(Relaxed);
        }
        l.mcp = self.mcp.ledger.summary();
        l.provider = self.pushback.summary().map(|mut p| {
            p.limits = self.limits_words();
            p
        });
        l
    }

    /// The ledger as served on `GET /plimsoll/ledger`, as JSON.
    pub fn ledger_json(&self) -> serde_json::Value {
        serde_json::to_value(self.ledger_summary()).expect("a summary serializes")
    }

    /// The limits in force for a scope (`*`: the provider's): as changed live, else as
    /// the scenario sets them.
    pub fn limits_in_force(&self, scope: &str) -> crate::pushback::limits::Limits {
        self.pushback.in_force(scope, self.scenario.limits(scope))
    }

    /// Every scope's limits in force, in words: "600 requests/min per key; model gpt-4o:
    /// 8 slots, unbounded queue".
    fn limits_words(&self) -> String {
        use crate::pushback::limits::Limits;
        use crate::pushback::state::PROVIDER;
        let o = self.pushback.overrides();
        let defaults = self.scenario.defaults.limits;
        let mut scopes: Vec<(String, Limits)> = vec![
            ("provider".into(), self.limits_in_force(PROVIDER)),
            ("every model".into(), defaults),
        ];
        // The scenario's models and those only changed live, each once.
        let mut names: Vec<&String> = self.scenario.models.keys().collect();
        names.extend(
            o.keys().filter(|n| {
                n.as_str() != PROVIDER && !self.scenario.models.contains_key(n.as_str())
            }),
        );
        for name in names {
            let l = self.limits_in_force(name);
            if l != defaults {
                scopes.push((name.clone(), l));
            }
        }
        scopes
            .iter()
            .filter(|(_, l)| !l.is_none())
            .map(|(s, l)| match s.as_str() {
                "provider" => l.describe(),
                "every model" => format!("each model: {}", l.describe()),
                m => format!("model {m}: {}", l.describe()),
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Counts a call to `model` and answers its number (1 for the first).
    pub fn nth_call(&self, model: &str) -> u64 {
        let mut m = self
            .calls_by_model
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let n = crate::pushback::quota::entry(&mut m, model, || 0);
        *n += 1;
        *n
    }

    pub fn created_unix(&self) -> u64 {
        self.fixed_created
            .or(self.scenario.created)
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0)
            })
    }

    /// The API's 404 for a model the scenario does not serve.
    pub fn unknown_model(&self, model: &str) -> wire::WireError {
        wire::WireError::new(
            wire::ErrorKind::NotFound,
            format!(
                "model: {model:?} does not exist in this scenario (known: {})",
                self.known_models()
            ),
        )
    }

    pub fn known_models(&self) -> String {
        if self.scenario.models.is_empty() {
            "none defined; any name is served with the defaults unless unknown_model = \"error\""
                .into()
        } else {
            self.scenario
                .models
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}
