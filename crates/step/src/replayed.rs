//! A recorded workload in a step: loaded from `[workload]` or `--workload` (exact or
//! sampled) and handed to the mock and the driver, and afterwards what RESULT says of it
//! — its fingerprint, how faithfully the system under test followed the recording
//! (each session's calls per turn and tools in order, output tokens, the pauses'
//! lateness), and the replayed shape tested against the recorded one.

use experiment::{Config, WorkloadSettings};
use hdrhistogram::Histogram;
use mock::provider::replay::SessionPlay;
use result::{round2, Fit, Replayed};
use std::collections::BTreeMap;
use std::sync::Arc;
use workload::{Mode, Prompts, Replay, Session};

/// The replay a step runs (none in harness mode) and the step's concurrency: an exact
/// replay drives every recorded session once, whatever the concurrency asked.
pub(crate) fn plan(
    cfg: &Config,
    opts: &crate::options::StepOptions,
) -> anyhow::Result<(Option<Arc<Replay>>, usize)> {
    let replay = match &opts.harness {
        None => load(cfg, opts.workload.as_ref())?,
        Some(_) => None,
    };
    let concurrency = match replay.as_ref().filter(|r| r.exact()) {
        Some(r) => r.recorded_sessions(),
        None => opts.concurrency.unwrap_or(cfg.concurrency),
    };
    Ok((replay, concurrency))
}

/// The replay a step runs, if any: `--workload` over `[workload]`.
pub(crate) fn load(
    cfg: &Config,
    over: Option<&WorkloadSettings>,
) -> anyhow::Result<Option<Arc<Replay>>> {
    let Some(s) = over.or(cfg.workload.as_ref()) else {
        return Ok(None);
    };
    let w = workload::Workload::load(&s.file)?;
    let mode = match s.exact {
        true => Mode::Exact { speed: s.speed },
        false => Mode::Sampled,
    };
    let prompts = match s.recorded_prompts {
        true => Prompts::Recorded,
        false => Prompts::Filler,
    };
    Ok(Some(Arc::new(Replay::new(w, mode, prompts, cfg.seed))))
}

/// The recorded pauses of the sessions `0..n` drive, on average per session: the think
/// time the ideal session time includes.
pub(crate) fn think_per_session(r: &Replay, n: usize) -> f64 {
    let total: f64 = (0..n)
        .map(|i| (1..=r.turns(i)).map(|t| r.think_ms(i, t)).sum::<f64>())
        .sum();
    total / n.max(1) as f64
}

/// The recorded pauses of the session of this name (as the replay scales them).
pub(crate) fn think_of(r: &Replay, name: &str) -> f64 {
    Replay::index_of(name).map_or(0.0, |i| (1..=r.turns(i)).map(|t| r.think_ms(i, t)).sum())
}

/// A replay's latency inflation: the median over its sessions of each one's time over its
/// own ideal. Replayed sessions differ (a 2-turn session beside a 40-turn one), so the
/// median session over the median ideal would compare two different sessions.
pub(crate) fn inflation(
    took: &BTreeMap<String, f64>,
    ideal: &BTreeMap<String, f64>,
) -> Option<f64> {
    let ratios = took
        .iter()
        .filter_map(|(name, ms)| Some(ms / ideal.get(name).filter(|i| **i > 0.0)?))
        .collect();
    crate::mock_side::upper_median(ratios)
}

/// Sessions whose first difference from the recording RESULT names, at most.
const DIFFERENCES: usize = 5;

/// What RESULT says of the replay.
pub(crate) fn figures(
    r: &Replay,
    played: &BTreeMap<String, SessionPlay>,
    think_late: &Histogram<u64>,
) -> Replayed {
    let w = &r.workload;
    let f = w.fingerprint();
    let mut out = Replayed {
        sha256: f.sha256,
        recorded_sessions: f.sessions as u64,
        recorded_turns: f.turns as u64,
        recorded_calls: f.calls as u64,
        shape: f.shape,
        mode: if r.exact() { "exact" } else { "sampled" }.into(),
        speed: match r.mode {
            Mode::Exact { speed } => speed,
            Mode::Sampled => 1.0,
        },
        sessions: played.len() as u64,
        think_late_p99_ms: round2(think_late.value_at_quantile(0.99) as f64 / 1000.0),
        ..Replayed::default()
    };
    for p in played.values() {
        let rec = &w.sessions[p.recorded];
        out.calls += p.calls.len() as u64;
        out.calls_recorded += rec.calls() as u64;
        out.output_tokens += p
            .calls
            .iter()
            .map(|c| u64::from(c.output_tokens))
            .sum::<u64>();
        out.output_tokens_recorded += rec.output_tokens();
        out.sessions_as_recorded += u64::from(as_recorded(p, rec));
    }
    out.fit = fit(w, played);
    out.differences = crate::replay_diff::first_differences(played, &w.sessions, DIFFERENCES);
    let ran: Vec<u32> = played
        .values()
        .map(|p| p.calls.iter().map(|c| c.turn).max().unwrap_or(0))
        .collect();
    out.turns_ran = ran.iter().min().copied().zip(ran.iter().max().copied());
    out
}

/// Calls per turn and the tools asked for, in order, both the recording's.
fn as_recorded(p: &SessionPlay, rec: &Session) -> bool {
    let per_turn = |n: usize| p.calls.iter().filter(|c| c.turn as usize == n + 1).count();
    let calls_match = rec
        .turns
        .iter()
        .enumerate()
        .all(|(k, t)| per_turn(k) == t.calls.len())
        && p.calls.iter().all(|c| (c.turn as usize) <= rec.turns.len());
    let tools: Vec<&str> = p
        .calls
        .iter()
        .flat_map(|c| &c.tools)
        .map(String::as_str)
        .collect();
    calls_match && tools == rec.tool_order()
}

/// The replayed turns per session, calls per turn and output tokens per call against
/// the recording's (the KS test).
fn fit(w: &workload::Workload, played: &BTreeMap<String, SessionPlay>) -> BTreeMap<String, Fit> {
    let turns_of = |p: &SessionPlay| p.calls.iter().map(|c| c.turn).max().unwrap_or(0);
    let replayed_turns: Vec<f64> = played.values().map(|p| f64::from(turns_of(p))).collect();
    let replayed_calls: Vec<f64> = played
        .values()
        .flat_map(|p| {
            (1..=turns_of(p)).map(move |t| p.calls.iter().filter(|c| c.turn == t).count() as f64)
        })
        .collect();
    let replayed_tokens: Vec<f64> = played
        .values()
        .flat_map(|p| {
            p.calls
                .iter()
                .filter(|c| c.recorded)
                .map(|c| f64::from(c.output_tokens))
        })
        .collect();
    let recorded_turns: Vec<f64> = w.sessions.iter().map(|s| s.turns.len() as f64).collect();
    let recorded_calls: Vec<f64> = w
        .sessions
        .iter()
        .flat_map(|s| &s.turns)
        .map(|t| t.calls.len() as f64)
        .collect();
    let recorded_tokens: Vec<f64> = w
        .sessions
        .iter()
        .flat_map(|s| &s.turns)
        .flat_map(|t| &t.calls)
        .filter_map(|c| c.output_tokens.map(f64::from))
        .collect();
    let test = |a: &[f64], b: &[f64]| {
        let k = workload::fit::ks(a, b);
        Fit {
            d: k.d,
            p: k.p,
            n: k.n_replayed as u64,
            same: k.same,
        }
    };
    BTreeMap::from([
        (
            "turns_per_session".to_string(),
            test(&recorded_turns, &replayed_turns),
        ),
        (
            "calls_per_turn".to_string(),
            test(&recorded_calls, &replayed_calls),
        ),
        (
            "output_tokens".to_string(),
            test(&recorded_tokens, &replayed_tokens),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replays_inflation_is_each_sessions_time_over_its_own_ideal() {
        // A 2-turn session (ideal 1 s) and a 40-turn one (ideal 20 s), each taking 1.5×
        // its ideal, and one of 1.2×: the median ratio is 1.5. The median session over the
        // median ideal would read 3 s / 10.5 s = 0.29, below 1 — impossible.
        let took: BTreeMap<String, f64> = [
            ("s0", 1500.0),
            ("s1", 30000.0),
            ("s2", 3000.0),
            ("s3", 999.0),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let ideal: BTreeMap<String, f64> = [("s0", 1000.0), ("s1", 20000.0), ("s2", 2500.0)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        assert_eq!(inflation(&took, &ideal), Some(1.5));
        assert_eq!(
            inflation(&took, &BTreeMap::new()),
            None,
            "no ideal, no figure"
        );
    }
}
