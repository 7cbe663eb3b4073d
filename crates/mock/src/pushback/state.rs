//! A provider that pushes back: the quotas and slots in force for a request (the
//! provider's and its model's, as the scenario set them or as changed live through
//! `POST /plimsoll/admin/limits`), and what they did: requests refused by reason, time
//! waited for a slot, slots and queue at their fullest, replies answered.

use crate::pushback::capacity::{Full, Gate, Slot};
use crate::pushback::limits::{thousands, Dim, Limits};
use crate::pushback::quota::{Quotas, Reading, Refused, Usage};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// The scope of the provider's own limits (a model's scope is its name).
pub const PROVIDER: &str = "*";

/// The index of a full queue among `REASONS` (the others are the quota's `Dim`s).
const OVERLOADED: usize = 4;

/// Why a request was refused: one per quota bucket, and a full queue.
pub const REASONS: [&str; 5] = [
    "quota_requests",
    "quota_tokens",
    "quota_input_tokens",
    "quota_output_tokens",
    "overloaded",
];

/// The limits that apply to one request, by scope: the provider's, then its model's.
pub type Scopes<'a> = Vec<(&'a str, Limits)>;

pub struct Pushback {
    pub quotas: Quotas,
    gates: Mutex<HashMap<String, Arc<Gate>>>,
    /// Limits changed live, by scope; they replace the scenario's.
    overrides: RwLock<BTreeMap<String, Limits>>,
    refused: [AtomicU64; 5],
    /// Refusals by the limit that refused, in words.
    refused_by: Mutex<BTreeMap<String, u64>>,
    answered: AtomicU64,
    queue_wait_us: Mutex<Histogram<u64>>,
    /// Replies being generated now, and at most (with any limit set, slots or not).
    in_flight: Arc<AtomicU64>,
    peak_in_flight: AtomicU64,
    /// Whether any limit was ever in force (the ledger then reports the provider).
    configured: std::sync::atomic::AtomicBool,
}

impl Pushback {
    /// `configured`: the scenario sets some limit (the ledger then reports the provider
    /// from the start).
    pub fn new(configured: bool) -> Pushback {
        Pushback {
            quotas: Quotas::default(),
            gates: Mutex::new(HashMap::new()),
            overrides: RwLock::new(BTreeMap::new()),
            refused: Default::default(),
            refused_by: Mutex::new(BTreeMap::new()),
            answered: AtomicU64::new(0),
            queue_wait_us: Mutex::new(
                Histogram::new_with_bounds(1, 3_600_000_000, 2).expect("static bounds are valid"),
            ),
            configured: configured.into(),
            in_flight: Arc::new(AtomicU64::new(0)),
            peak_in_flight: AtomicU64::new(0),
        }
    }

    /// The limits in force for one scope now (`*`: the provider's): as changed live, else
    /// `set`, as the scenario sets them.
    pub fn in_force(&self, scope: &str, set: Limits) -> Limits {
        let o = self.overrides.read().unwrap_or_else(|p| p.into_inner());
        o.get(scope).copied().unwrap_or(set)
    }

    /// The limits in force for `model` now, provider first: as changed live, else as the
    /// scenario sets the provider's and the model's (`own`, already looked up, so the hot
    /// path does not look it up again).
    pub fn scopes<'a>(&self, provider: Limits, model: &'a str, own: Limits) -> Scopes<'a> {
        let o = self.overrides.read().unwrap_or_else(|p| p.into_inner());
        let provider = o.get(PROVIDER).copied().unwrap_or(provider);
        let own = o.get(model).copied().unwrap_or(own);
        let mut out = Vec::new();
        if !provider.is_none() {
            out.push((PROVIDER, provider));
        }
        if !own.is_none() {
            out.push((model, own));
        }
        out
    }

    /// Replaces the limits of a scope (`*`: the provider's), or with `None` drops the
    /// change; answers every change in force.
    pub fn set(&self, scope: &str, limits: Option<Limits>) -> BTreeMap<String, Limits> {
        let mut o = self.overrides.write().unwrap_or_else(|p| p.into_inner());
        match limits {
            Some(l) => {
                o.insert(scope.to_string(), l);
                self.configured.store(true, Relaxed);
            }
            None => {
                o.remove(scope);
            }
        }
        o.clone()
    }

    pub fn overrides(&self) -> BTreeMap<String, Limits> {
        self.overrides
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Takes the request's quota in every scope, or in none and names the one short.
    pub fn admit(
        &self,
        scopes: &Scopes<'_>,
        key: &str,
        input_tokens: u32,
        now: Instant,
    ) -> Result<(), Refused> {
        if scopes.iter().all(|(_, l)| l.quota.is_none()) {
            return Ok(());
        }
        self.quotas
            .admit(scopes, key, input_tokens, now)
            .inspect_err(|r| {
                self.refusal(
                    r.dim as usize,
                    quota_words(scopes[r.scope].0, r.dim, r.limit),
                )
            })
    }

    /// Takes the reply's output tokens; the readings of the model's own quota win over
    /// the provider's for the headers (a model's quota is what its clients see).
    pub fn spend_output(
        &self,
        scopes: &Scopes<'_>,
        key: &str,
        output_tokens: u32,
        now: Instant,
    ) -> Vec<Reading> {
        if scopes.iter().all(|(_, l)| l.quota.is_none()) {
            return Vec::new();
        }
        self.quotas.spend_output(scopes, key, output_tokens, now)
    }

    fn gate(&self, scope: &str, l: &Limits) -> Option<Arc<Gate>> {
        let cap = l.capacity?;
        let mut gates = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(g) = gates.get(scope) {
            // Changed live: the same slots and queue, resized (waiters keep their place).
            g.resize(cap);
            return Some(g.clone());
        }
        let g = Arc::new(Gate::new(cap, scope.to_string()));
        gates.insert(scope.to_string(), g.clone());
        Some(g)
    }

    /// Waits for a slot in every scope with capacity, the model's own first (so a
    /// request waiting for its model holds none of the provider's shared slots). Answers
    /// the slots (held until the reply is sent), the slowdown of the time per token, and
    /// the time waited.
    pub async fn enter(&self, scopes: &Scopes<'_>) -> Result<(Held, f64, Duration), Full> {
        let gates: Vec<Arc<Gate>> = scopes
            .iter()
            .rev()
            .filter_map(|(s, l)| self.gate(s, l))
            .collect();
        // In flight once every slot is taken (not while waiting for one).
        let flight = || {
            (!scopes.is_empty()).then(|| {
                let n = self.in_flight.fetch_add(1, Relaxed) + 1;
                self.peak_in_flight.fetch_max(n, Relaxed);
                Flight(self.in_flight.clone())
            })
        };
        if gates.is_empty() {
            return Ok((
                Held {
                    slots: Vec::new(),
                    _flight: flight(),
                },
                1.0,
                Duration::ZERO,
            ));
        }
        let t0 = Instant::now();
        let mut slots = Vec::with_capacity(gates.len());
        let mut slowdown: f64 = 1.0;
        for g in &gates {
            match g.enter().await {
                Ok(s) => {
                    slowdown = slowdown.max(g.cap().slowdown(s.occupied));
                    slots.push(s);
                }
                Err(full) => {
                    let words = format!("{} and queue of {}", slots_words(g), full.max_queue);
                    self.refusal(OVERLOADED, words);
                    return Err(full);
                }
            }
        }
        let waited = t0.elapsed();
        if let Ok(mut h) = self.queue_wait_us.lock() {
            let _ = h.record((waited.as_micros() as u64).clamp(1, 3_600_000_000));
        }
        let held = Held {
            slots,
            _flight: flight(),
        };
        Ok((held, slowdown, waited))
    }

    /// Counts a refusal by its reason (an index of `REASONS`) and its limit in words.
    fn refusal(&self, reason: usize, words: String) {
        self.refused[reason].fetch_add(1, Relaxed);
        *self
            .refused_by
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(words)
            .or_insert(0) += 1;
    }

    /// Counts a request answered with a reply (not refused, not failed).
    pub fn answered(&self) {
        self.answered.fetch_add(1, Relaxed);
    }

    /// What the provider did, for the ledger; `None` when no limit was ever set. Its
    /// `limits` are left for the caller to put in words (it knows the scenario).
    pub fn summary(&self) -> Option<ProviderSummary> {
        if !self.configured.load(Relaxed) {
            return None;
        }
        let refused = self
            .refused_counts()
            .iter()
            .map(|(r, n)| ((*r).to_string(), *n))
            .collect();
        let gates = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        let gate = |f: &dyn Fn(&Gate) -> u64| gates.values().map(|g| f(g)).max().unwrap_or(0);
        // The slots that kept calls waiting most, in words.
        let slots = gates
            .values()
            .max_by_key(|g| g.peak_queued.load(Relaxed))
            .map(|g| slots_words(g));
        Some(ProviderSummary {
            answered: self.answered.load(Relaxed),
            refused,
            queue_wait_ms: self.queue_wait(),
            in_flight: self.in_flight.load(Relaxed),
            queued: gate(&|g| g.queued() as u64),
            peak_in_flight: self.peak_in_flight.load(Relaxed),
            peak_queued: gate(&|g| g.peak_queued.load(Relaxed) as u64),
            keys: self.quotas.usage(),
            refused_by: self
                .refused_by
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            slots,
            limits: String::new(),
        })
    }

    /// The waits for a slot so far.
    fn queue_wait(&self) -> QueueWait {
        let (p50, p99, max, n) = match self.queue_wait_us.lock() {
            Ok(h) => (
                h.value_at_quantile(0.5),
                h.value_at_quantile(0.99),
                h.max(),
                h.len(),
            ),
            Err(_) => (0, 0, 0, 0),
        };
        let ms = |us: u64| if n == 0 { 0.0 } else { us as f64 / 1000.0 };
        QueueWait {
            count: n,
            max: ms(max),
            p50: ms(p50),
            p99: ms(p99),
        }
    }

    /// Refusals by reason, for `/metrics`.
    pub fn refused_counts(&self) -> [(&'static str, u64); 5] {
        let mut out = [("", 0); 5];
        for (i, r) in REASONS.iter().enumerate() {
            out[i] = (r, self.refused[i].load(Relaxed));
        }
        out
    }
}

/// What the provider's quotas and slots did, as the ledger reports it (fields in the
/// order JSON writes them, see `ledger/summary.rs`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderSummary {
    /// Requests answered with a reply (not refused, not failed).
    pub answered: u64,
    /// Replies being generated now.
    pub in_flight: u64,
    /// What each API key used, by the key's label.
    pub keys: BTreeMap<String, Usage>,
    /// Every scope's limits in force, in words.
    #[serde(default)]
    pub limits: String,
    pub peak_in_flight: u64,
    pub peak_queued: u64,
    pub queue_wait_ms: QueueWait,
    /// Requests waiting for a slot now (the longest queue).
    pub queued: u64,
    /// Refusals by reason (`quota_requests` … `overloaded`).
    pub refused: BTreeMap<String, u64>,
    /// Refusals by the limit that refused, in words.
    pub refused_by: BTreeMap<String, u64>,
    /// The slots that kept calls waiting most, in words.
    pub slots: Option<String>,
}

/// The waits for a generation slot: how many, and their median, 99th percentile and
/// maximum in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueWait {
    pub count: u64,
    pub max: f64,
    pub p50: f64,
    pub p99: f64,
}

/// A reply being generated: counted in flight until dropped.
pub struct Flight(Arc<AtomicU64>);

impl Drop for Flight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Relaxed);
    }
}

/// What a reply holds while it is generated and sent: its slots, and its place in the
/// count of replies in flight.
pub struct Held {
    pub slots: Vec<Slot>,
    _flight: Option<Flight>,
}

impl Held {
    /// Whether the reply waited in a queue (it had slots to take).
    pub fn gated(&self) -> bool {
        !self.slots.is_empty()
    }
}

/// "the WHAT" for the provider's own limit, "model m's WHAT" for a model's.
fn owned(scope: &str, what: String) -> String {
    if scope == PROVIDER {
        format!("the {what}")
    } else {
        format!("model {scope}'s {what}")
    }
}

/// "the 600 requests/min quota per key", or "model m's …" for a model's own.
fn quota_words(scope: &str, d: Dim, per_min: f64) -> String {
    owned(
        scope,
        format!("{} {}/min quota per key", thousands(per_min), d.words()),
    )
}

/// "the 6 generation slots", or "model m's 6 generation slots": as many as the gate has
/// now (a live change may have resized it).
fn slots_words(g: &Gate) -> String {
    owned(
        &g.scope,
        format!("{} generation slots", g.cap().max_in_flight),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pushback::limits::Capacity;

    fn slots(n: u32) -> Limits {
        Limits {
            quota: None,
            capacity: Some(Capacity {
                max_in_flight: n,
                max_queue: None,
                slowdown_at_full: 1.0,
                retry_after_ms: 1000,
            }),
        }
    }

    #[test]
    fn the_slots_are_named_as_many_as_they_are_now() {
        let p = Pushback::new(false);
        p.set(PROVIDER, Some(slots(6)));
        p.gate(PROVIDER, &slots(6));
        assert_eq!(
            p.summary().unwrap().slots.as_deref(),
            Some("the 6 generation slots")
        );
        // Resized live: the same gate, named by its new size.
        p.gate(PROVIDER, &slots(9));
        assert_eq!(
            p.summary().unwrap().slots.as_deref(),
            Some("the 9 generation slots")
        );
        p.gate("m", &slots(2));
        assert_eq!(
            slots_words(&p.gates.lock().unwrap()["m"]),
            "model m's 2 generation slots"
        );
    }
}
