//! Shards written to files, read back and merged: the sum is the whole, exactly, and a
//! set of shards that is not one run gives "unknown", not a number.

use shard::{hist, merge, read_dirs, write, Counters, MockCounts, SESSION, TURN};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("plimsoll-shard-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn counters(index: usize, count: usize) -> Counters {
    Counters {
        format: shard::counters::FORMAT,
        run: "at-1700000000000".into(),
        index,
        count,
        concurrency: 400,
        sessions_planned: 100,
        sessions_ok: 100,
        sessions_failed: 0,
        turns: 300,
        errors_by_kind: BTreeMap::new(),
        first_errors: BTreeMap::new(),
        timed_out: false,
        wall_ms: 2000.0,
        start_at_unix_ms: Some(1_700_000_000_000.0),
        late_start_ms: 3.0,
        arrival_rate_per_s: None,
        peak_in_flight: 100,
        turns_per_s: 150.0,
        think_ms_per_session: 0.0,
        driver_lag_p99_ms: 1.0,
        harness_cpu_sec: 0.2,
        cores: 2,
        bound: result::Bound::Sut,
        request_errors: BTreeMap::new(),
        mock: Some(MockCounts {
            totals: mock::ledger::Totals {
                llm_calls: 600,
                output_tokens: 6000,
                ..Default::default()
            },
            late_p99_ms: 0.5,
            ..Default::default()
        }),
        error_rate_threshold: 0.0,
        p99_session_ms_threshold: 0.0,
        harness_lag_ms_threshold: 10.0,
        voice: None,
        budget: analysis::Budget::default(),
        seed: 1,
    }
}

/// A skewed spread of latencies in µs (a seeded LCG: the same every run).
fn values(n: usize) -> Vec<u64> {
    let mut x: u64 = 12345;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            (200_000.0 + 50_000.0 / (1.0 - u).max(1e-4)) as u64
        })
        .collect()
}

/// Four shards of one run into `dir`, session i's values in shard i % 4; returns the
/// histogram one process would have recorded.
fn four_shards(dir: &std::path::Path) -> hdrhistogram::Histogram<u64> {
    let v = values(4000);
    let mut whole = hist();
    let mut parts = vec![hist(), hist(), hist(), hist()];
    for (i, x) in v.iter().enumerate() {
        whole.record(*x).unwrap();
        parts[i % 4].record(*x).unwrap();
    }
    for (i, h) in parts.into_iter().enumerate() {
        let mut hists = BTreeMap::new();
        hists.insert(SESSION.to_string(), h.clone());
        hists.insert(TURN.to_string(), h);
        write(dir, &counters(i, 4), &hists).unwrap();
    }
    whole
}

#[test]
fn four_shards_add_up_to_one_process_exactly() {
    let dir = scratch("exact");
    let whole = four_shards(&dir);
    let shards = read_dirs(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(shards.len(), 4);
    let merged = shard::merge::add_up(&shards);
    let m = &merged[SESSION];
    assert_eq!(m.len(), whole.len());
    for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
        assert_eq!(m.value_at_quantile(q), whole.value_at_quantile(q), "q {q}");
    }
    assert_eq!(m, &whole, "every bucket the same");
    let r = merge(&shards, 1000.0).result;
    assert_eq!(r.outcome, result::Outcome::Ok);
    assert_eq!(
        (r.sessions_ok, r.turns, r.llm_calls, r.concurrency),
        (400, 1200, 2400, 400)
    );
    assert_eq!(
        r.p99_session_ms,
        Some(result::round2(
            whole.value_at_quantile(0.99) as f64 / 1000.0
        ))
    );
    assert_eq!(r.turns_per_s, Some(600.0));
    let s = r.shards.as_ref().unwrap();
    assert_eq!((s.count, s.merged, s.sut_sampled), (4, 4, false));
    assert_eq!(r.exit_code(&[]), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_budget_is_judged_once_over_the_merged_step() {
    let dir = scratch("budget");
    let whole = four_shards(&dir);
    let mut shards = read_dirs(std::slice::from_ref(&dir)).unwrap();
    let p99 = result::round2(whole.value_at_quantile(0.99) as f64 / 1000.0);
    let mut set = |limit: f64| {
        for s in &mut shards {
            s.counters.budget.p99_turn_ms = Some(limit);
            s.counters.budget.latency_inflation = None;
        }
        merge(&shards, 1000.0)
    };
    let over = set(p99 - 1.0);
    assert_eq!(over.breaches.len(), 1, "{:?}", over.breaches);
    assert_eq!(over.breaches[0].budget, "p99_turn_ms");
    assert_eq!(over.breaches[0].value, p99);
    let holds = set(p99 + 1.0);
    assert!(holds.breaches.is_empty(), "{:?}", holds.breaches);
    assert_eq!(holds.budget.p99_turn_ms, Some(p99 + 1.0));
    std::fs::remove_file(dir.join("shard-1-of-4.json")).unwrap();
    let part = merge(&read_dirs(std::slice::from_ref(&dir)).unwrap(), 1000.0);
    assert!(part.breaches.is_empty(), "an unknown step is not judged");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_shard_is_unknown_not_a_number() {
    let dir = scratch("missing");
    four_shards(&dir);
    std::fs::remove_file(dir.join("shard-2-of-4.json")).unwrap();
    let m = merge(&read_dirs(std::slice::from_ref(&dir)).unwrap(), 1000.0);
    assert_eq!(m.result.outcome, result::Outcome::Unknown);
    assert_eq!(m.result.p50_session_ms, None);
    assert_eq!(m.result.p99_session_ms, None);
    assert_eq!(m.result.turns_per_s, None);
    let why = m.result.shards.as_ref().unwrap().unknown.clone().unwrap();
    assert!(why.contains("shard 2 of 4 missing"), "{why}");
    assert_eq!(m.result.exit_code(&[]), result::exit::UNKNOWN);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_shard_twice_is_unknown() {
    let (a, b) = (scratch("twice-a"), scratch("twice-b"));
    four_shards(&a);
    std::fs::create_dir_all(&b).unwrap();
    for ext in ["json", "hlog"] {
        let f = format!("shard-1-of-4.{ext}");
        std::fs::copy(a.join(&f), b.join(&f)).unwrap();
    }
    let m = merge(&read_dirs(&[a.clone(), b.clone()]).unwrap(), 1000.0);
    assert_eq!(m.result.outcome, result::Outcome::Unknown);
    let why = words::cause::said(&m.cause.unwrap());
    assert!(why.contains("shard 1 of 4 ran twice"), "{why}");
    let _ = (std::fs::remove_dir_all(&a), std::fs::remove_dir_all(&b));
}

fn shards_with(change: impl Fn(&mut Counters)) -> Vec<shard::Shard> {
    (0..2)
        .map(|i| {
            let mut c = counters(i, 2);
            if i == 1 {
                change(&mut c);
            }
            let mut hists = BTreeMap::new();
            let mut h = hist();
            h.record(1000).unwrap();
            hists.insert(SESSION.to_string(), h);
            shard::Shard {
                source: format!("shard-{i}-of-2.json").into(),
                counters: c,
                hists,
            }
        })
        .collect()
}

#[test]
fn a_late_shard_a_harness_bound_one_and_another_run_are_unknown() {
    let late = merge(&shards_with(|c| c.late_start_ms = 4200.0), 1000.0);
    assert!(words::cause::said(&late.cause.unwrap()).contains("began 4.2 s after the shared start"));
    let held = merge(&shards_with(|c| c.late_start_ms = 900.0), 1000.0);
    assert_eq!(held.result.outcome, result::Outcome::Ok);
    let bound = merge(
        &shards_with(|c| {
            c.bound = result::Bound::Harness;
            c.driver_lag_p99_ms = 80.0
        }),
        1000.0,
    );
    assert!(words::cause::said(&bound.cause.unwrap()).contains("shard 1 was harness-bound"));
    let other = merge(&shards_with(|c| c.run = "at-1".into()), 1000.0);
    assert_eq!(other.result.outcome, result::Outcome::Unknown);
    assert!(words::cause::said(&other.cause.unwrap()).contains("merge one run's shards only"));
}

#[test]
fn failures_and_violations_are_judged_over_the_whole_run() {
    let failed = merge(
        &shards_with(|c| {
            c.sessions_ok = 90;
            c.sessions_failed = 10;
            c.errors_by_kind.insert("status".into(), 10);
        }),
        1000.0,
    );
    assert_eq!(failed.result.outcome, result::Outcome::ErrorRate);
    assert_eq!(failed.result.errors_by_kind["status"], 10);
    assert!(words::cause::said(&failed.cause.unwrap()).contains("10 of 200 sessions failed"));
    let corrupt = merge(
        &shards_with(|c| c.mock.as_mut().unwrap().totals.integrity_violations = 3),
        1000.0,
    );
    assert_eq!(corrupt.result.outcome, result::Outcome::Integrity);
    assert_eq!(corrupt.result.integrity_violations, 3);
}

#[test]
fn a_torn_interval_log_is_an_error_naming_the_file() {
    let dir = scratch("torn");
    four_shards(&dir);
    let log = dir.join("shard-0-of-4.hlog");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, &text[..text.len() / 2]).unwrap();
    let e = read_dirs(std::slice::from_ref(&dir))
        .unwrap_err()
        .to_string();
    assert!(e.contains("shard-0-of-4.hlog"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 64: two shards of a step of calls, written and read back, merge into the voice
/// figures one process that placed every call makes (drive's own function), with the
/// shared mock's audio stages.
#[test]
fn shards_of_calls_merge_into_one_steps_voice() {
    use drive::run::{sums, VoiceCounts};
    let dir = scratch("calls");
    let v = values(400);
    let (mut whole, mut parts) = (hist(), [hist(), hist()]);
    for (i, x) in v.iter().enumerate() {
        whole.record(*x).unwrap();
        parts[i % 2].record(*x).unwrap();
    }
    for (i, h) in parts.into_iter().enumerate() {
        let mut c = counters(i, 2);
        c.concurrency = 4;
        c.voice = Some(VoiceCounts {
            protocol: "twilio".into(),
            frame_ms: 20,
            calls: 2,
            turns: 200,
            words_checked: 4,
            words_wrong: i as u64,
            crosstalk: vec![result::Crosstalk {
                heard_on: format!("s{i}"),
                owner: format!("s{}", 1 - i),
                ..Default::default()
            }],
            heard_own: [format!("s{i}")].into(),
            ..Default::default()
        });
        if let Some(m) = c.mock.as_mut() {
            m.totals.voice.stt_calls = 200;
            m.totals.voice.stt_ms = 200.0 * 60.0;
        }
        // A call lasts as long as its speech: 30 s against an "ideal" of 1 s.
        let (mut call, mut ideal) = (hist(), hist());
        call.record(30_000_000).unwrap();
        ideal.record(1_000_000).unwrap();
        let hists = BTreeMap::from([
            (sums::RESPONSE.to_string(), h),
            (SESSION.to_string(), call),
            (shard::IDEAL.to_string(), ideal),
        ]);
        write(&dir, &c, &hists).unwrap();
    }
    let shards = read_dirs(std::slice::from_ref(&dir)).unwrap();
    let m = merge(&shards, 1000.0);
    let voice = m
        .result
        .voice
        .as_ref()
        .expect("a step of calls merged has its voice");
    assert_eq!((voice.calls, voice.turns), (4, 400));
    assert_eq!((voice.words_checked, voice.words_wrong), (8, 1));
    // In ms to two places, as a call's figures are.
    let q = |p: f64| Some((whole.value_at_quantile(p) as f64 / 10.0).round() / 100.0);
    assert_eq!(
        (voice.response_p50_ms, voice.response_p99_ms),
        (q(0.5), q(0.99))
    );
    // A reply heard on the other shard's call, its owner's own heard there.
    assert_eq!(voice.crosstalk.len(), 2);
    assert!(voice.crosstalk.iter().all(|c| c.owner_heard_own));
    // Judged by its replies, as one process judges calls: no inflation over an ideal, so
    // the default budget's `latency_inflation ≤ 2` has nothing to break.
    assert_eq!(m.result.latency_inflation, None);
    assert!(m.breaches.is_empty(), "{:?}", m.breaches);
    let stages = voice.stages.as_ref().unwrap();
    assert_eq!((stages.stt_calls, stages.stt_ms_mean), (400, Some(60.0)));
    let _ = std::fs::remove_dir_all(&dir);
}
