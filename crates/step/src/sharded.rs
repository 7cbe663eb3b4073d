//! One shard of a step driven from several processes (`plimsoll run --shard I/N`): no SUT
//! or mock of its own — it drives its slice of the sessions (`i % N == I`, each at the
//! time the whole schedule gives it) against a SUT already running (`--target`), reads
//! what the one shared mock's ledger says of those sessions (`--mock`), and writes its
//! interval log and counters (`shard` crate) for `plimsoll merge`.

use crate::options::StepOptions;
use anyhow::{bail, Context};
use drive::{drive, DriveOptions, Progress};
use experiment::Config;
use hdrhistogram::Histogram;
use result::round2;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::shard_mock::{barrier, get_json, mock_counts, upload, wait_for_mock};
pub use crate::shard_mock::{check_run_id, collect, BARRIER_TIMEOUT, MOCK_WAIT};

/// Where a shard sits in its run and where it sends load.
#[derive(Clone, Debug)]
pub struct ShardPlan {
    pub index: usize,
    pub count: usize,
    /// Where the shard's two files go.
    pub dir: PathBuf,
    /// The SUT's base URL (`http://host:port`): it is running already.
    pub target: String,
    /// The shared mock's base URL, whose ledger says what the sessions asked of it.
    pub mock: Option<String>,
    /// The shared start every shard waits for.
    pub start_at: Option<SystemTime>,
    /// A name every shard of the run shares (default: from the start time).
    pub run: Option<String>,
    /// Wait at the shared mock until every shard is up, and start together then.
    pub barrier: bool,
    /// Send the shard's files to the shared mock too (`plimsoll merge --from`).
    pub upload: bool,
}

/// What a shard did and where it wrote it.
pub struct ShardDone {
    pub counters: shard::Counters,
    pub file: PathBuf,
}

fn unix_ms(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// A number of the run's name (FNV-1a): its sessions' names and nonces are its own.
fn run_tag(run: &str) -> u64 {
    run.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What a plan and its config allow, checked before anything runs.
fn check(cfg: &Config, opts: &StepOptions, plan: &ShardPlan) -> anyhow::Result<()> {
    if plan.count == 0 || plan.index >= plan.count {
        bail!(
            "--shard {}/{}: the index counts from 0 and is below the count (e.g. 0/4 … 3/4)",
            plan.index,
            plan.count
        );
    }
    if opts.harness.is_some() || cfg.harness.is_some() {
        bail!("a shard drives its sessions itself; a [harness] cannot be sharded");
    }
    if opts.resident.or(cfg.resident).is_some() || opts.soak.is_some() {
        bail!("resident sessions and soaks are not sharded: a shard drives one step's sessions");
    }
    Ok(())
}

/// The run's name: --run-id, else one made from the shared start (every shard makes the
/// same), else from now.
pub fn run_name(plan: &ShardPlan) -> String {
    plan.run.clone().unwrap_or_else(|| {
        format!(
            "at-{:.0}",
            unix_ms(plan.start_at.unwrap_or_else(SystemTime::now))
        )
    })
}

/// The run's name (from --run-id, else from the shared start) and when every shard
/// begins (the shared start, or once all met at the mock's barrier).
async fn run_and_start(
    plan: &ShardPlan,
    allow_remote: bool,
) -> anyhow::Result<(String, Option<SystemTime>)> {
    let run = run_name(plan);
    check_run_id(&run)?;
    let start_at = match (plan.barrier, &plan.mock) {
        (false, _) => plan.start_at,
        (true, None) => bail!("--barrier waits at the shared mock: give it with --mock URL"),
        (true, Some(m)) => Some(barrier(m, &run, (plan.index, plan.count), allow_remote).await?),
    };
    Ok((run, start_at))
}

fn drive_options(
    cfg: &Config,
    opts: &StepOptions,
    plan: &ShardPlan,
    (run, start_at): (&str, Option<SystemTime>),
) -> DriveOptions {
    let tag = run_tag(run);
    DriveOptions {
        concurrency: opts.concurrency.unwrap_or(cfg.concurrency),
        base: plan.target.trim_end_matches('/').to_string(),
        replicas: Vec::new(),
        // Nonces and ids of their own each run, for a SUT that outlives runs.
        seed: cfg.seed ^ tag,
        step_timeout: Duration::from_secs_f64(cfg.timeout_s),
        allow_remote: opts.allow_remote,
        arrival_rate: opts.rate.or(cfg.arrival_rate),
        resident: None,
        on_resident: None,
        slow: opts.slow.or(cfg.slow).filter(|(share, _)| *share > 0.0),
        churn: None,
        shard: Some((plan.index, plan.count)),
        start_at,
        name_prefix: format!("r{:08x}-", tag as u32),
        replay: None,
        voice_owner: plan.mock.as_deref().and_then(crate::owner::of_mock),
        keep_audio: None,
        services: Vec::new(),
    }
}

/// Runs one shard; writes `shard-I-of-N.hlog` and `.json` into the plan's directory.
pub async fn run_shard(
    cfg: &Config,
    opts: &StepOptions,
    plan: &ShardPlan,
) -> anyhow::Result<ShardDone> {
    check(cfg, opts, plan)?;
    // The session file with --turns and --set applied, as a step Plimsoll runs itself reads it.
    let session = crate::prepare::session(cfg, opts)?;
    drive::address::target(&plan.target, opts.allow_remote).context("--target")?;
    if let Some(m) = &plan.mock {
        wait_for_mock(m, opts.allow_remote).await?;
    }
    let (run, start_at) = run_and_start(plan, opts.allow_remote).await?;
    let cpu0 = probe::own::process_cpu_ns() as f64 / 1e9;
    let d = drive_options(cfg, opts, plan, (&run, start_at));
    let progress = Arc::new(Progress::default());
    // A live view of the shard: the driver's figures alone (the SUT is not ours to sample).
    let feed = opts.on_tick.clone().map(|on_tick| {
        crate::feed::start(crate::feed::Sources {
            on_tick,
            progress: progress.clone(),
            sampler: None,
            probe: None,
        })
    });
    let r = drive(&session, &d, progress).await;
    if let Some(f) = feed {
        f.stop().await;
    }
    let r = r?;
    let think_per_session = session.think_ms * session.turns.saturating_sub(1) as f64;
    let mine: HashSet<String> = (0..d.concurrency)
        .filter(|i| drive::address::in_shard(*i, d.shard))
        .map(|i| format!("{}s{i}", d.name_prefix))
        .collect();
    let mut ideal = shard::hist();
    let mock = match &plan.mock {
        None => None,
        Some(base) => {
            let ledger: mock::ledger::Summary = serde_json::from_value(
                get_json(base, "/plimsoll/ledger", opts.allow_remote).await?,
            )
            .context("reading the shared mock's ledger (a `plimsoll mock` of this version?)")?;
            let timing = get_json(base, "/plimsoll/timing", opts.allow_remote).await?;
            Some(mock_counts(
                &ledger,
                timing["late_p99_ms"].as_f64().unwrap_or(0.0),
                &mine,
                &r.failed_sessions,
                think_per_session,
                &mut ideal,
            ))
        }
    };
    let seen = Seen {
        think_per_turn: think_per_session / session.turns.max(1) as f64,
        think_per_session,
        harness_cpu_sec: round2((probe::own::process_cpu_ns() as f64 / 1e9) - cpu0),
    };
    let counters = counters(cfg, plan, (run, start_at), &d, &r, mock, seen);
    let file = shard::write(&plan.dir, &counters, &histograms(&r, ideal))?;
    if let (true, Some(m)) = (plan.upload, &plan.mock) {
        upload(m, &file, &counters.run, opts.allow_remote).await?;
    }
    Ok(ShardDone { counters, file })
}

/// What the shard saw besides the driver's report.
struct Seen {
    think_per_turn: f64,
    think_per_session: f64,
    harness_cpu_sec: f64,
}

/// The shard's counters, as `plimsoll merge` reads them.
fn counters(
    cfg: &Config,
    plan: &ShardPlan,
    (run, start_at): (String, Option<SystemTime>),
    d: &DriveOptions,
    r: &drive::DriveReport,
    mock: Option<shard::MockCounts>,
    seen: Seen,
) -> shard::Counters {
    let turns_per_s = match (&r.full_load, d.arrival_rate) {
        (Some(f), None) => {
            r.sessions_planned as f64 / ((f.mean_turn_ms + seen.think_per_turn) / 1000.0)
        }
        _ => r.turns as f64 / (r.wall_ms / 1000.0).max(1e-3),
    };
    let lag_p99 = round2(r.lag_us.value_at_quantile(0.99) as f64 / 1000.0);
    let p50_turn =
        (!r.turn_us.is_empty()).then(|| r.turn_us.value_at_quantile(0.5) as f64 / 1000.0);
    let late_mock = mock.as_ref().map_or(0.0, |m| m.late_p99_ms);
    shard::Counters {
        format: shard::counters::FORMAT,
        run,
        index: plan.index,
        count: plan.count,
        concurrency: d.concurrency,
        sessions_planned: r.sessions_planned,
        sessions_ok: r.sessions_ok,
        sessions_failed: r.sessions_failed,
        turns: r.turns,
        errors_by_kind: r.errors_by_kind.clone(),
        first_errors: r.first_errors.clone(),
        timed_out: r.timed_out,
        wall_ms: round2(r.wall_ms),
        start_at_unix_ms: start_at.map(unix_ms),
        late_start_ms: round2(r.late_start_ms),
        arrival_rate_per_s: d.arrival_rate,
        peak_in_flight: r.peak_in_flight,
        turns_per_s: round2(turns_per_s),
        think_ms_per_session: seen.think_per_session,
        driver_lag_p99_ms: lag_p99,
        harness_cpu_sec: seen.harness_cpu_sec,
        cores: drive::cores(),
        // Calls are the harness's when their frames went out late, as one process judges.
        bound: match &r.voice {
            Some(v) => analysis::outcome::calls_harness_bound(
                late_mock,
                v.frame_jitter_p99_ms,
                cfg.harness_lag_ms,
                v.frame_ms as f64,
            ),
            None => {
                analysis::outcome::harness_bound(late_mock, lag_p99, cfg.harness_lag_ms, p50_turn)
            }
        },
        request_errors: r
            .requests
            .iter()
            .map(|(k, v)| (k.clone(), v.errors))
            .collect(),
        mock,
        error_rate_threshold: cfg.error_rate,
        p99_session_ms_threshold: cfg.p99_session_ms,
        harness_lag_ms_threshold: cfg.harness_lag_ms,
        voice: r.voice_parts.as_ref().map(|p| p.counts.clone()),
        budget: cfg.budget.clone(),
        seed: cfg.seed,
    }
}

/// The shard's latencies by tag, as its interval log holds them.
fn histograms(r: &drive::DriveReport, ideal: Histogram<u64>) -> BTreeMap<String, Histogram<u64>> {
    let mut hists = BTreeMap::new();
    hists.insert(shard::TURN.to_string(), r.turn_us.clone());
    hists.insert(shard::SESSION.to_string(), r.session_us.clone());
    hists.insert(shard::TTFT.to_string(), r.ttft_us.clone());
    hists.insert(shard::LAG.to_string(), r.lag_us.clone());
    if !ideal.is_empty() {
        hists.insert(shard::IDEAL.to_string(), ideal);
    }
    for (name, q) in &r.requests {
        hists.insert(format!("{}{name}", shard::REQUEST), q.us.clone());
    }
    // A shard of calls: its calls' histograms, tagged `voice.*`.
    for (name, h) in r.voice_parts.iter().flat_map(|p| &p.hists) {
        hists.insert(name.clone(), h.clone());
    }
    hists
}
