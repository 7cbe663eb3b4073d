//! `plimsoll run`: one step.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct RunArgs {
    /// The experiment file.
    #[arg(long, default_value = "plimsoll.toml")]
    pub config: PathBuf,
    /// Resident sessions: open this many first (their [[setup]] run, their state held in the SUT), then keep --concurrency of them active at a time; memory is reported per resident and per active session (overrides [step] resident).
    #[arg(long, value_name = "N")]
    pub resident: Option<usize>,
    /// Concurrent sessions (overrides [step] concurrency).
    #[arg(long, short = 'c')]
    pub concurrency: Option<usize>,
    /// Print only the RESULT line (no verdict, no progress).
    #[arg(long)]
    pub json: bool,
    /// Allow session URLs that are not loopback.
    #[arg(long)]
    pub allow_remote: bool,
    /// Open model: sessions arrive at this rate per second (the --concurrency count of them), latency counted from each intended start.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Cap the SUT's CPU (cores) in a cgroup made for the step.
    #[arg(long)]
    pub cpus: Option<f64>,
    /// Cap the SUT's memory (e.g. 2G, 512M) in a cgroup made for the step.
    #[arg(long)]
    pub mem: Option<String>,
    /// How a CPU cap is held where the SUT could run on more cores than --cpus: cpuset (the default: ceil(--cpus) cores of its own, under a quota that binds only for a fraction of a core) or quota (a quota over every core it may use, as docker run --cpus and Kubernetes limits).
    #[arg(long, value_name = "HOW", default_value = "cpuset", value_parser = cap::CpuBy::parse)]
    pub cpu_by: cap::CpuBy,
    /// Harness mode: this command (run with sh -c) drives its own sessions against the mock and prints `RESULT {json}`; Plimsoll probes it and merges its figures in.
    #[arg(long)]
    pub harness: Option<String>,
    /// Let Plimsoll and the SUT share every core (by default Plimsoll takes one core, the SUT the rest).
    #[arg(long)]
    pub no_partition: bool,
    /// Run this [[arm]] of the config: its command and env over [sut]'s.
    #[arg(long, value_name = "NAME")]
    pub arm: Option<String>,
    /// Judge the step against these budgets (NAME=VALUE,…, the names `ramp --budget` takes: rss_mb=4096 for a worker's sessions within 4 GB, response_p95_ms=1500): a line saying so comes first, and a budget broken exits 2, as a threshold does.
    #[arg(long, value_name = "NAME=VALUE,…")]
    pub budget: Option<String>,
    /// Write a JUnit XML report here: a test case for each check the exit code is made of
    /// (the outcome, every session completing, integrity, [thresholds], the harness keeping
    /// up), failed with its figures exactly when `run` exits non-zero for it.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary sized for a pull request's comment here: pass or fail and
    /// why, then the step's lines. Under GitHub Actions it is also appended to
    /// $GITHUB_STEP_SUMMARY.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    #[command(flatten)]
    pub load: super::LoadArgs,
    #[command(flatten)]
    pub live: super::live::LiveArgs,
    /// Drive a SUT that is already running at this base URL (http://host:port): no SUT and no mock are started; the shards' files are merged into the RESULT (its process figures are not sampled).
    #[arg(
        long,
        value_name = "URL",
        env = "PLIMSOLL_TARGET",
        help_heading = "Shards"
    )]
    pub target: Option<String>,
    /// One shard of a step driven from several processes: sessions i with i % N == I (0/4 … 3/4), each at the time the whole schedule gives it; writes its files for `plimsoll merge`. Default from JOB_COMPLETION_INDEX and PLIMSOLL_SHARDS (a Kubernetes Indexed Job). Needs --target.
    #[arg(long, value_name = "I/N", help_heading = "Shards")]
    pub shard: Option<String>,
    /// The shared `plimsoll mock` the SUT talks to: its ledger gives this shard's sessions' LLM calls, integrity check and ideal time.
    #[arg(
        long,
        value_name = "URL",
        env = "PLIMSOLL_MOCK",
        help_heading = "Shards"
    )]
    pub mock: Option<String>,
    /// When every shard begins driving, in Unix seconds (e.g. $(( $(date +%s) + 10 ))); a shard that begins more than a second late makes the merge "unknown".
    #[arg(
        long,
        value_name = "UNIX_S",
        env = "PLIMSOLL_START_AT",
        help_heading = "Shards"
    )]
    pub start_at: Option<f64>,
    /// Where a shard writes shard-I-of-N.hlog (its latencies, an HdrHistogram interval log) and shard-I-of-N.json (its counters).
    #[arg(
        long,
        value_name = "DIR",
        default_value = "plimsoll-shards",
        env = "PLIMSOLL_SHARD_DIR",
        help_heading = "Shards"
    )]
    pub shard_dir: PathBuf,
    /// A name every shard of one run shares (default: from --start-at).
    #[arg(
        long,
        value_name = "NAME",
        env = "PLIMSOLL_RUN_ID",
        help_heading = "Shards"
    )]
    pub run_id: Option<String>,
    /// Instead of --start-at: wait at the shared mock (--mock) until every shard of the run (--run-id) is up, then all start 3 s later, together.
    #[arg(long, env = "PLIMSOLL_BARRIER", help_heading = "Shards")]
    pub barrier: bool,
    /// Also send the shard's files to the shared mock, for `plimsoll merge --from MOCK --run-id NAME` (where the shards' disks are not at hand, as in a cluster).
    #[arg(long, env = "PLIMSOLL_UPLOAD", help_heading = "Shards")]
    pub upload: bool,
}

/// The budgets `--budget` names, alone: the step is judged by these and nothing else.
fn judge(flag: Option<&str>) -> anyhow::Result<Option<result::Budget>> {
    let Some(flag) = flag else {
        return Ok(None);
    };
    let mut b = result::Budget::none();
    b.apply_flag(flag)
        .map_err(|e| anyhow::anyhow!("--budget: {e}"))?;
    Ok(Some(b))
}

/// `I/N`, or from a Kubernetes Indexed Job's JOB_COMPLETION_INDEX and PLIMSOLL_SHARDS.
fn shard_of(
    flag: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<Option<(usize, usize)>> {
    let (text, whence) = match (flag, env("PLIMSOLL_SHARDS")) {
        (Some(f), _) => (f.to_string(), "--shard"),
        (None, Some(n)) => {
            let i = env("JOB_COMPLETION_INDEX").ok_or_else(|| {
                anyhow::anyhow!("PLIMSOLL_SHARDS={n} is set but JOB_COMPLETION_INDEX is not (a Kubernetes Indexed Job sets it; elsewhere pass --shard I/N)")
            })?;
            (format!("{i}/{n}"), "JOB_COMPLETION_INDEX/PLIMSOLL_SHARDS")
        }
        (None, None) => return Ok(None),
    };
    let parsed = text
        .split_once('/')
        .and_then(|(i, n)| {
            Some((
                i.trim().parse::<usize>().ok()?,
                n.trim().parse::<usize>().ok()?,
            ))
        })
        .filter(|(i, n)| i < n);
    match parsed {
        Some(p) => Ok(Some(p)),
        None => anyhow::bail!(
            "{whence} {text:?}: write I/N with 0 <= I < N, e.g. 0/4 for the first of four shards"
        ),
    }
}

pub fn run(a: RunArgs) -> anyhow::Result<u8> {
    super::guard_up();
    let cap = match (a.cpus, &a.mem) {
        (None, None) => None,
        (cpus, mem) => {
            Some(super::cap_spec(cpus, mem.as_deref(), a.cpu_by).map_err(anyhow::Error::msg)?)
        }
    };
    let opts = step::StepOptions {
        concurrency: a.concurrency,
        allow_remote: a.allow_remote,
        progress: !a.json,
        harness: a.harness.clone(),
        rate: a.rate,
        cap,
        partition: super::partition(!a.no_partition),
        session: a.load.session.clone(),
        keep_audio_dir: a.load.keep_audio.clone(),
        resident: a.resident,
        probe_path: a.load.probe.clone(),
        slow: a.load.slow(),
        arm: a.arm.clone(),
        set: a.load.sets()?,
        workload: a.load.replay.settings(&a.config)?,
        ..Default::default()
    };
    let shard = shard_of(a.shard.as_deref(), &|k| std::env::var(k).ok())?;
    match (shard, &a.target) {
        (None, None) => one_step(&a, opts),
        _ if a.junit.is_some() || a.summary.is_some() => anyhow::bail!(
            "--junit and --summary judge a step Plimsoll runs itself; with --target or --shard, write them from `plimsoll merge`'s RESULT or run the step without --target"
        ),
        (Some(_), None) => anyhow::bail!("--shard drives a SUT that is already running: give its base URL with --target http://HOST:PORT (and the mock it talks to with --mock)"),
        (Some((i, n)), Some(t)) if n > 1 && a.start_at.is_none() && !a.barrier => anyhow::bail!(
            "--shard {i}/{n} needs --start-at, the start every shard shares, in Unix seconds (e.g. --start-at $(( $(date +%s) + 10 ))), or --barrier with --mock: without one the shards' schedules would not line up against {t}"
        ),
        (Some(_), Some(_)) if a.barrier && a.run_id.is_none() => anyhow::bail!(
            "--barrier needs --run-id NAME, the same for every shard of the run (the shards meet under it at the mock)"
        ),
        (shard, Some(t)) => sharded(&a, opts, shard.unwrap_or((0, 1)), t),
    }
}

/// One step: the SUT and a mock started for it; the step's lines and its RESULT printed,
/// the exit code chosen. Ctrl-C stops the SUT before exiting.
fn one_step(a: &RunArgs, mut opts: step::StepOptions) -> anyhow::Result<u8> {
    let (config, json) = (&a.config, a.json);
    let cfg = experiment::Config::load(config)?;
    let what = step::preflight(&cfg, &opts)?;
    let judge = judge(a.budget.as_deref())?;
    if opts.arm.is_none() && !cfg.arms.is_empty() {
        eprintln!(
            "note: {}; this step runs [sut] as written (pick one with --arm NAME; `plimsoll ramp` runs them all)",
            cfg.arm_names()
        );
    }
    let rt = super::runtime()?;
    let name = config.display().to_string();
    let live = a.live.start(
        &rt,
        super::live::Named {
            run: &name,
            config: &name,
            unit: what.unit,
            budget: &what.budget(cfg.budget.clone()),
            cap: opts.cap.as_ref().map(|c| c.cpus),
        },
    )?;
    if let Some(l) = &live {
        opts.on_tick = Some(l.begin(opts.concurrency.unwrap_or(cfg.concurrency)));
    }
    // Ctrl-C drops the step's futures; the SUT's Drop kills its process group.
    let step = rt.block_on(step::start(&cfg, &opts, step::Start::default()))?;
    let Some(step) = step else {
        eprintln!("plimsoll run: interrupted; the SUT was stopped");
        return Ok(130);
    };
    if let Some(l) = &live {
        l.board.step(&step.result, step.result.outcome.as_str());
    }
    // The step's one list of checks: what its exit code, its lines and its CI files read.
    let thresholds = result::Thresholds {
        p99_session_ms: cfg.p99_session_ms,
        peak_rss_mb: cfg.peak_rss_mb,
    };
    let checks = analysis::standing::step_checks(&step.result, &thresholds, judge.as_ref());
    if !json {
        if judge.is_some() {
            eprintln!("{}", words::budget::alone(&step.result, &checks));
        }
        for line in report::step::lines(&step, &checks) {
            eprintln!("{line}");
        }
    }
    println!("{}", step.result.line());
    let ci = super::ForCi {
        junit: a.junit.as_deref(),
        summary: a.summary.as_deref(),
        job_summary_always: false,
    };
    ci.write(
        || report::junit::steps::run(&step, &checks),
        report::junit::steps::run_summary(&step, &checks),
    )?;
    if let Some(l) = live {
        // Said first, then served a while longer: the final figures, as the page shows them.
        let docs = l.board.state().so_far();
        l.finish(&rt, &docs);
    }
    Ok(step.result.exit_code(&checks))
}

/// A shard (or, without --shard, the whole step as one driver) against a running SUT.
fn sharded(
    a: &RunArgs,
    opts: step::StepOptions,
    (index, count): (usize, usize),
    target: &str,
) -> anyhow::Result<u8> {
    let cfg = experiment::Config::load(&a.config)?;
    let alone = a.shard.is_none() && std::env::var("PLIMSOLL_SHARDS").is_err();
    // One driver alone merges its own files at once, from a directory of its own.
    let dir = match alone {
        true => guard::scratch_dir("target"),
        false => a.shard_dir.clone(),
    };
    let mut plan = step::sharded::ShardPlan {
        index,
        count,
        dir: dir.clone(),
        target: target.to_string(),
        mock: a.mock.clone(),
        start_at: a
            .start_at
            .map(|s| std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(s.max(0.0))),
        run: a.run_id.clone(),
        barrier: a.barrier,
        upload: a.upload,
    };
    if let (Some(at), false) = (a.start_at, a.json) {
        let wait = at
            - std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)?
                .as_secs_f64();
        if wait > 0.0 {
            eprintln!("shard {index}/{count}: waiting {wait:.1} s for the shared start");
        }
    }
    // Named once: the live view's labels and the shard's files say the same run.
    plan.run = Some(step::sharded::run_name(&plan));
    let rt = super::runtime()?;
    let (opts, live) = watched(a, opts, &plan, &cfg, &rt, !alone)?;
    let done = rt.block_on(step::sharded::run_shard(&cfg, &opts, &plan));
    if let Some(l) = live {
        // A shard has no document of its own: the view keeps its last second, every
        // session counted, for a last scrape and the last push; a failed one goes at once.
        l.finish_figures(&rt, done.is_err());
    }
    if alone {
        let merged =
            done.and_then(|d| shard::read_dirs(&[d.file]).map(|s| shard::merge(&s, f64::INFINITY)));
        guard::drop_scratch_dir(&dir);
        return Ok(super::merge::print(&merged?, a.json));
    }
    let d = done?;
    let c = &d.counters;
    eprintln!(
        "shard {index}/{count}: {} of the run's {} — {} ok, {} failed, {} in {:.1} s; began {:.0} ms after the shared start; wrote {} (merge with `plimsoll merge {}`)",
        c.sessions_planned,
        result::words::sessions(c.concurrency as f64),
        c.sessions_ok,
        c.sessions_failed,
        result::words::count(c.turns, "turn"),
        c.wall_ms / 1000.0,
        c.late_start_ms,
        d.file.display(),
        dir.display()
    );
    Ok(0)
}

/// A shard's live view, when asked for: the driver's figures, labelled with its shard.
fn watched(
    a: &RunArgs,
    mut opts: step::StepOptions,
    plan: &step::sharded::ShardPlan,
    cfg: &experiment::Config,
    rt: &tokio::runtime::Runtime,
    sharded: bool,
) -> anyhow::Result<(step::StepOptions, Option<super::live::Live>)> {
    if !a.live.wanted() {
        return Ok((opts, None));
    }
    // What a level counts, from the session file (a shard's config may have no [sut]).
    let session = drive::SessionSpec::load(opts.session.as_ref().unwrap_or(&cfg.session_file))?;
    let what = step::Preflight {
        unit: result::words::Unit::calls_when(session.voice.is_some()),
    };
    let run = step::sharded::run_name(plan);
    let live = a.live.start(
        rt,
        super::live::Named {
            run: &run,
            config: &a.config.display().to_string(),
            unit: what.unit,
            budget: &what.budget(cfg.budget.clone()),
            cap: None,
        },
    )?;
    if let Some(l) = &live {
        if sharded {
            l.board.shard(plan.index, plan.count);
        }
        opts.on_tick = Some(l.begin(opts.concurrency.unwrap_or(cfg.concurrency)));
    }
    Ok((opts, live))
}

#[cfg(test)]
mod tests {
    use super::shard_of;

    #[test]
    fn a_shard_from_the_flag_or_an_indexed_job() {
        let none = |_: &str| None;
        assert_eq!(shard_of(Some("1/4"), &none).unwrap(), Some((1, 4)));
        assert_eq!(shard_of(None, &none).unwrap(), None);
        let job = |k: &str| match k {
            "PLIMSOLL_SHARDS" => Some("8".to_string()),
            "JOB_COMPLETION_INDEX" => Some("7".to_string()),
            _ => None,
        };
        assert_eq!(shard_of(None, &job).unwrap(), Some((7, 8)));
        let e = shard_of(Some("4/4"), &none).unwrap_err().to_string();
        assert!(e.contains("0 <= I < N"), "{e}");
        let half = |k: &str| (k == "PLIMSOLL_SHARDS").then(|| "8".to_string());
        let e = shard_of(None, &half).unwrap_err().to_string();
        assert!(e.contains("JOB_COMPLETION_INDEX is not"), "{e}");
    }
}
