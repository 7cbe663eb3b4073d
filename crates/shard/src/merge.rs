//! The shards of one step put back together: histograms added (exactly: an HdrHistogram
//! sum is the histogram of every value recorded), counters summed, the outcome judged
//! once over the whole. Pure: the same shards give the same RESULT.

use crate::files::Shard;
use crate::{IDEAL, REQUEST, SESSION, TTFT, TURN};
use analysis::outcome::Evidence;
use hdrhistogram::Histogram;
use result::{round2, Harness, Outcome, RequestLatency, StepResult};
use std::collections::{BTreeMap, BTreeSet};

/// How late a shard may begin after the shared start, by default, before its sessions no
/// longer count as running with the others'.
pub const LATE_TOLERANCE_MS: f64 = 1000.0;

/// One RESULT from the shards, and what the terminal says besides it.
#[derive(Debug, Clone)]
pub struct Merged {
    pub result: StepResult,
    /// Why the outcome is not ok.
    pub cause: Option<result::cause::Cause>,
    pub first_errors: BTreeMap<String, String>,
    /// The merged step's list of checks: the config's p99 session threshold (what its
    /// exit code reads; the `[budget]` below is said, not an exit code, as for one step).
    pub checks: Vec<result::Check>,
    /// The shards' `[budget]`, and what the merged step breaks of it (judged once, here).
    pub budget: analysis::Budget,
    pub breaches: Vec<analysis::budget::Breach>,
}

fn name(s: &Shard) -> String {
    s.source.display().to_string()
}

/// Why these shards are not one whole run, if they are not.
pub fn not_one_run(shards: &[Shard], late_tolerance_ms: f64) -> Option<String> {
    let Some(first) = shards.first() else {
        return Some("no shards to merge".into());
    };
    let c0 = &first.counters;
    for s in shards {
        let c = &s.counters;
        if (c.run.as_str(), c.count, c.concurrency, c.seed)
            != (c0.run.as_str(), c0.count, c0.concurrency, c0.seed)
        {
            return Some(format!(
                "{} is shard {} of {} of run {:?} ({} sessions, seed {}) but {} is of run {:?} with {} shards ({} sessions, seed {}): merge one run's shards only",
                name(s), c.index, c.count, c.run, c.concurrency, c.seed,
                name(first), c0.run, c0.count, c0.concurrency, c0.seed
            ));
        }
        if c.index >= c.count {
            return Some(format!(
                "{}: shard index {} is out of range for {} shards",
                name(s),
                c.index,
                c.count
            ));
        }
    }
    let mut by_index: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for s in shards {
        by_index.entry(s.counters.index).or_default().push(name(s));
    }
    if let Some((i, files)) = by_index.iter().find(|(_, f)| f.len() > 1) {
        return Some(format!(
            "shard {i} of {} ran twice ({}): its sessions would count twice (a restarted pod? give the Job backoffLimit 0)",
            c0.count,
            files.join(", ")
        ));
    }
    let missing: Vec<String> = (0..c0.count)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Some(format!(
            "shard{} {} of {} missing: {} sessions were never counted",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            c0.count,
            if missing.len() > 1 { "their" } else { "its" }
        ));
    }
    if let Some(s) = shards
        .iter()
        .find(|s| s.counters.late_start_ms > late_tolerance_ms)
    {
        return Some(format!(
            "shard {} began {:.1} s after the shared start (tolerance {:.1} s): its sessions did not run beside the others' (start the shards earlier, or give a later --start-at)",
            s.counters.index,
            s.counters.late_start_ms / 1000.0,
            late_tolerance_ms / 1000.0
        ));
    }
    if let Some(s) = shards
        .iter()
        .find(|s| s.counters.bound == result::Bound::Harness)
    {
        let why = match s.counters.voice {
            Some(_) => "its calls' frames went out late".to_string(),
            None => format!(
                "its driver's lag p99 {:.1} ms",
                s.counters.driver_lag_p99_ms
            ),
        };
        return Some(format!(
            "shard {} was harness-bound ({why}): its latencies describe its own driver, not the SUT (give that shard more CPU, or run more shards)",
            s.counters.index
        ));
    }
    None
}

/// Every shard's histograms of each tag, added.
pub fn add_up(shards: &[Shard]) -> BTreeMap<String, Histogram<u64>> {
    let mut out: BTreeMap<String, Histogram<u64>> = BTreeMap::new();
    for s in shards {
        for (tag, h) in &s.hists {
            let sum = out.entry(tag.clone()).or_insert_with(crate::hist);
            // Every histogram has the driver's bounds; a value out of them was never recorded.
            let _ = sum.add(h);
        }
    }
    out
}

fn ms_q(h: Option<&Histogram<u64>>, q: f64) -> Option<f64> {
    h.filter(|h| !h.is_empty())
        .map(|h| round2(h.value_at_quantile(q) as f64 / 1000.0))
}

/// The outcome over the whole run, judged by the rules a single step is judged by.
fn outcome(
    shards: &[Shard],
    sum: &Sums,
    unknown: &Option<String>,
) -> (Outcome, Option<result::cause::Cause>) {
    let late = shards.iter().find(|s| s.counters.timed_out);
    let evidence = Evidence {
        unknown: unknown.clone(),
        timed_out: late.is_some(),
        timeout_where: late.map(|s| format!("shard {}", s.counters.index)),
        violations: sum.mock.integrity_violations,
        violations_by_kind: sum
            .mock
            .violations_by_kind
            .iter()
            .map(|(k, n)| (k.clone(), *n))
            .collect(),
        sessions_ok: sum.ok,
        sessions_failed: sum.failed,
        error_rate: shards
            .first()
            .map_or(0.0, |s| s.counters.error_rate_threshold),
        ..Evidence::default()
    };
    match analysis::outcome::outcome(&evidence) {
        Some((o, why)) => (o, Some(why)),
        None => (Outcome::Ok, None),
    }
}

/// The counters of every shard, added.
#[derive(Default)]
struct Sums {
    ok: u64,
    failed: u64,
    turns: u64,
    planned: u64,
    peak_in_flight: u64,
    turns_per_s: f64,
    errors: BTreeMap<String, u64>,
    request_errors: BTreeMap<String, u64>,
    first_errors: BTreeMap<String, String>,
    /// The shared mock's ledger over every shard's sessions.
    mock: mock::ledger::Totals,
    mock_late_p99_ms: f64,
    lag_p99_ms: f64,
    late_max_ms: f64,
    wall_ms: f64,
    cpu_share: f64,
}

fn sums(shards: &[Shard]) -> Sums {
    let mut s = Sums::default();
    for c in shards.iter().map(|x| &x.counters) {
        s.ok += c.sessions_ok;
        s.failed += c.sessions_failed;
        s.turns += c.turns;
        s.planned += c.sessions_planned;
        s.peak_in_flight += c.peak_in_flight;
        s.turns_per_s += c.turns_per_s;
        for (k, v) in &c.errors_by_kind {
            *s.errors.entry(k.clone()).or_insert(0) += v;
        }
        for (k, v) in &c.request_errors {
            *s.request_errors.entry(k.clone()).or_insert(0) += v;
        }
        for (k, v) in &c.first_errors {
            s.first_errors.entry(k.clone()).or_insert_with(|| v.clone());
        }
        if let Some(m) = &c.mock {
            s.mock.add(&m.totals);
            s.mock_late_p99_ms = s.mock_late_p99_ms.max(m.late_p99_ms);
        }
        s.lag_p99_ms = s.lag_p99_ms.max(c.driver_lag_p99_ms);
        s.late_max_ms = s.late_max_ms.max(c.late_start_ms);
        s.wall_ms = s.wall_ms.max(c.late_start_ms + c.wall_ms);
        let share = c.harness_cpu_sec / (c.wall_ms / 1000.0).max(1e-3) / c.cores.max(1) as f64;
        s.cpu_share = s.cpu_share.max(share);
    }
    s
}

/// Per named request: its merged latency and summed failures.
fn requests(
    hists: &BTreeMap<String, Histogram<u64>>,
    errors: &BTreeMap<String, u64>,
    known: bool,
) -> BTreeMap<String, RequestLatency> {
    let names: BTreeSet<&str> = hists
        .keys()
        .filter_map(|k| k.strip_prefix(REQUEST))
        .chain(errors.keys().map(String::as_str))
        .collect();
    names
        .into_iter()
        .map(|n| {
            let h = hists.get(&format!("{REQUEST}{n}")).filter(|_| known);
            let r = RequestLatency {
                count: h.map_or(0, |h| h.len()),
                p50_ms: ms_q(h, 0.5),
                p99_ms: ms_q(h, 0.99),
                errors: errors.get(n).copied().unwrap_or(0),
            };
            (n.to_string(), r)
        })
        .collect()
}

/// A step of calls: what every shard's calls counted, added, and their histograms, made
/// into RESULT's `voice` by the function one process makes it with (no latency when the
/// shards are not one run), with what the shared mock's audio APIs did for them.
fn voice(
    shards: &[Shard],
    hists: &BTreeMap<String, Histogram<u64>>,
    mock: &mock::ledger::Totals,
    known: bool,
) -> Option<result::VoiceCalls> {
    let mut counts: Option<drive::run::VoiceCounts> = None;
    for c in shards.iter().filter_map(|s| s.counters.voice.as_ref()) {
        counts.get_or_insert_with(Default::default).add(c);
    }
    let voice_hists: BTreeMap<String, Histogram<u64>> = hists
        .iter()
        .filter(|(tag, _)| known && tag.starts_with("voice."))
        .map(|(tag, h)| (tag.clone(), h.clone()))
        .collect();
    let mut v = drive::run::sums::figures(&counts?, &voice_hists);
    v.stages = mock.voice_stages();
    Some(v)
}

/// The one RESULT of these shards. With `unknown` reasons, no latency or rate: a
/// figure from part of a run would read as the whole run's.
pub fn merge(shards: &[Shard], late_tolerance_ms: f64) -> Merged {
    let unknown = not_one_run(shards, late_tolerance_ms);
    let known = unknown.is_none();
    let hists = add_up(shards);
    let sum = sums(shards);
    let (outcome, cause) = outcome(shards, &sum, &unknown);
    let c0 = shards.first().map(|s| s.counters.clone());
    let open = c0.as_ref().and_then(|c| c.arrival_rate_per_s);
    let q = |tag: &str, p: f64| ms_q(hists.get(tag).filter(|_| known), p);
    let (p50_session, ideal) = (q(SESSION, 0.5), q(IDEAL, 0.5));
    let voice = voice(shards, &hists, &sum.mock, known);
    let calls = voice.is_some();
    let result = StepResult {
        schema_version: result::SCHEMA_VERSION,
        concurrency: match open {
            Some(_) => sum.peak_in_flight.max(1) as usize,
            None => c0.as_ref().map_or(0, |c| c.concurrency),
        },
        sessions_ok: sum.ok,
        sessions_failed: sum.failed,
        turns: sum.turns,
        wall_ms: round2(sum.wall_ms),
        p50_session_ms: p50_session,
        p99_session_ms: q(SESSION, 0.99),
        p50_turn_ms: q(TURN, 0.5),
        p99_turn_ms: q(TURN, 0.99),
        p50_ttft_ms: q(TTFT, 0.5),
        p99_ttft_ms: q(TTFT, 0.99),
        ideal_session_ms: ideal,
        latency_inflation: match (p50_session, ideal) {
            // A call's time is its speech, not the SUT's work: voice is judged by its
            // replies, as one process judges it.
            _ if calls => None,
            (Some(s), Some(i)) if i > 0.0 => Some(round2(s / i)),
            _ => None,
        },
        llm_calls: sum.mock.llm_calls,
        llm_tokens_out: sum.mock.output_tokens,
        injected_failures: sum.mock.injected_failures.total(),
        integrity_violations: sum.mock.integrity_violations,
        errors_by_kind: sum.errors.clone(),
        harness: Harness {
            mock_timing_error_p99_ms: round2(sum.mock_late_p99_ms),
            // The worst shard's: each driver's lag is its own machine's.
            driver_lag_p99_ms: round2(sum.lag_p99_ms),
            cpu_share: round2(sum.cpu_share),
            bound: result::Bound::Sut,
            // Each shard's driver is its own process; the parts are not sent back.
            parts: None,
        },
        outcome,
        arrival_rate_per_s: open,
        sessions: open.map(|_| sum.planned),
        turns_per_s: known.then(|| round2(sum.turns_per_s)),
        requests: requests(&hists, &sum.request_errors, known),
        voice,
        // The SUT ran elsewhere: its process figures were not sampled (they read 0).
        shards: Some(result::Shards {
            count: c0.as_ref().map_or(0, |c| c.count),
            merged: shards.len(),
            late_start_ms_max: round2(sum.late_max_ms),
            unknown,
            sut_sampled: false,
        }),
        ..StepResult::default()
    };
    let thresholds = result::Thresholds {
        p99_session_ms: c0.as_ref().map_or(0.0, |c| c.p99_session_ms_threshold),
        peak_rss_mb: 0.0,
    };
    let budget = c0.as_ref().map(|c| c.budget.clone()).unwrap_or_default();
    Merged {
        checks: analysis::standing::step_checks(&result, &thresholds, None),
        breaches: analysis::verdict::step_breaches(&result, &budget),
        budget,
        result,
        cause,
        first_errors: sum.first_errors,
    }
}
