//! `plimsoll ramp`: a ladder of steps.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct RampArgs {
    /// The experiment file (paths in it count from its directory).
    #[arg(long, default_value = "plimsoll.toml")]
    pub config: PathBuf,
    /// Resident sessions: open this many first (their [[setup]] run, their state held in the SUT), then keep --concurrency of them active at a time; memory is reported per resident and per active session (overrides [step] resident).
    #[arg(long, value_name = "N")]
    pub resident: Option<usize>,
    /// Concurrency levels, e.g. 10,20,40,80, or `auto`: doubling from [step] concurrency
    /// until two levels are over budget or one collapses, then bisecting to the line.
    #[arg(long, default_value = "auto")]
    pub ladder: String,
    /// With `--ladder auto`: bisect until the line is found within this share.
    #[arg(long, default_value = "10%")]
    pub resolution: String,
    /// Budgets over the config's [budget], e.g. 'latency_inflation=3,p99_turn_ms=800' (NAME=off stops judging one).
    #[arg(long, default_value = "")]
    pub budget: String,
    /// Let Plimsoll and the SUT share every core (by default Plimsoll takes one core, the SUT the rest).
    #[arg(long)]
    pub no_partition: bool,
    /// Host to project capacity onto, e.g. 64GB,16cpu.
    #[arg(long)]
    pub host: Option<String>,
    /// Sessions to project hosts for (with --host).
    #[arg(long)]
    pub target: Option<u64>,
    /// Directory for result.json and report.md.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Allow session URLs that are not loopback (load goes only to 127.0.0.1 otherwise).
    #[arg(long)]
    pub allow_remote: bool,
    /// The history database every run and step is recorded in.
    #[arg(long, default_value = ".plimsoll/history.db")]
    pub history: PathBuf,
    /// Do not record this run.
    #[arg(long)]
    pub no_history: bool,
    /// Print the whole result document (what --out writes as result.json) on stdout.
    #[arg(long)]
    pub json: bool,
    /// Write a JUnit XML report here: a test suite per level, a case for its outcome and
    /// one per budget check, failed with the figures where the level is over budget or
    /// collapsed (levels above the line fail by design; gate a change with `compare`).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary sized for a pull request's comment here: the verdict, the
    /// lines that back it, the ladder's table. Under GitHub Actions it is also appended to
    /// $GITHUB_STEP_SUMMARY.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Arms to run, e.g. held,command: the config's [[arm]] tables, every one at every
    /// level (interleaved), one report. Default: every arm the config has; `none` runs [sut]
    /// alone.
    #[arg(long, value_name = "NAMES")]
    pub arm: Option<String>,
    /// Replicas axis, e.g. 1,2,4: that many instances of the SUT, each its own process on
    /// its own port, sessions spread over them (sticky by session); every count at every
    /// level, one report with the scaling efficiency and the memory per instance. A --cpus
    /// cap holds all replicas together.
    #[arg(long, value_name = "N,N,…")]
    pub replicas: Option<String>,
    /// Sweep an axis instead of the concurrency ladder, e.g. messages=50,100,200 (a bus's
    /// messages per connection), pad=64,4096,65536 (body size), turns=10,50,100, or
    /// concurrency=10,100; twice makes a grid (a heat map in report.html). Each point is a
    /// fresh step at [step] concurrency; each row stops at its first collapse.
    #[arg(long, value_name = "NAME=V,V,…")]
    pub sweep: Vec<String>,
    /// With `--ladder auto`: run the levels either side of the line this many more times (a third time when two runs disagree), so the line is reported with its spread ("holds 11–12 sessions"); 0 runs each level once.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub confirm: usize,
    /// With --sweep: the concurrency of every point (default: [step] concurrency).
    #[arg(long, short = 'c', requires = "sweep")]
    pub concurrency: Option<usize>,
    #[command(flatten)]
    pub load: super::LoadArgs,
    #[command(flatten)]
    pub cap: super::CapArgs,
    #[command(flatten)]
    pub live: super::live::LiveArgs,
}

/// The ladder the flags ask for, checked against the residents (when there are some).
fn levels(a: &RampArgs, cfg: &experiment::Config) -> anyhow::Result<::ramp::levels::Levels> {
    let mut levels =
        ::ramp::levels::parse_levels(&a.ladder, cfg.concurrency).map_err(anyhow::Error::msg)?;
    if let ::ramp::levels::Levels::Auto { resolution, .. } = &mut levels {
        *resolution =
            ::ramp::levels::parse_resolution(&a.resolution).map_err(anyhow::Error::msg)?;
    }
    if let Some(n) = a.resident.or(cfg.resident) {
        match &levels {
            ::ramp::levels::Levels::Auto { .. } => anyhow::bail!(
                "--resident {n} with the auto ladder: the ladder could double past {n}; give the levels, e.g. --ladder 2,4,8 (each at most {n})"
            ),
            ::ramp::levels::Levels::List(v) if v.iter().any(|l| *l > n) => anyhow::bail!(
                "--ladder {}: every level must be at most the {n} residents (the active ones are drawn from them)",
                a.ladder
            ),
            _ => {}
        }
    }
    Ok(levels)
}

pub fn run(a: RampArgs) -> anyhow::Result<u8> {
    super::guard_up();
    let cfg = experiment::Config::load(&a.config)?;
    let levels = levels(&a, &cfg)?;
    super::preflight();
    let mut budget = cfg.budget.clone();
    budget
        .apply_flag(&a.budget)
        .map_err(|e| anyhow::anyhow!("--budget: {e}"))?;
    let cap = a.cap.spec()?;
    let mut opts = ::ramp::ladder::RampOptions {
        step: step::StepOptions {
            allow_remote: a.allow_remote,
            progress: !a.json,
            cap,
            partition: super::partition(!a.no_partition),
            session: a.load.session.clone(),
            keep_audio_dir: a.load.keep_audio.clone(),
            resident: a.resident,
            probe_path: a.load.probe.clone(),
            slow: a.load.slow(),
            set: a.load.sets()?,
            workload: a.load.replay.settings(&a.config)?,
            ..Default::default()
        },
        budget,
        host: a
            .host
            .as_deref()
            .map(::ramp::levels::parse_host)
            .transpose()
            .map_err(anyhow::Error::msg)?,
        target: a.target,
        replicas_axis: a.replicas.is_some(),
        confirm: a.confirm,
        out: a.out.clone(),
        history: (!a.no_history).then(|| a.history.clone()),
        unit: Default::default(),
        live: None,
    };
    let names: Vec<String> = match a.arm.as_deref() {
        None => Vec::new(),
        Some("none") => vec!["none".into()],
        Some(list) => list.split(',').map(|n| n.trim().to_string()).collect(),
    };
    // Every file each run needs read before the budget and the table's header are
    // printed: a run that cannot start says so before it starts.
    let runs = runs_of(&a, &cfg, &names)?;
    let mut what = step::Preflight::default();
    for c in &runs {
        what = step::preflight(c, &opts.step)?;
    }
    // Calls are judged by the voice budget, the decision `Preflight` makes.
    opts.budget = what.budget(opts.budget);
    opts.unit = what.unit;
    let rt = super::runtime()?;
    if !a.sweep.is_empty() {
        if a.junit.is_some() || a.summary.is_some() {
            anyhow::bail!("--junit and --summary judge a ladder's levels against the budget; a --sweep has no line to judge (run a ladder, or gate with `compare`)");
        }
        if a.live.wanted() {
            anyhow::bail!("--live, --otlp and --events follow a ladder, a step or a soak; a --sweep is not followed yet (run it without them: its report.html has its grid)");
        }
        return sweep(&a, &cfg, &opts, &rt);
    }
    let json = ladders(&a, &runs, levels, &opts, &rt)?;
    if a.json {
        println!("{json}");
    }
    Ok(0)
}

/// The ladder (or each arm's), its document as JSON, and what CI reads written.
fn ladders(
    a: &RampArgs,
    runs: &[experiment::Config],
    levels: ::ramp::levels::Levels,
    opts: &::ramp::ladder::RampOptions,
    rt: &tokio::runtime::Runtime,
) -> anyhow::Result<String> {
    let config = a.config.display().to_string();
    let live = a.live.start(
        rt,
        super::live::Named {
            run: &config,
            config: &config,
            unit: opts.unit,
            budget: &opts.budget,
            cap: opts.step.cap.as_ref().map(|c| c.cpus),
        },
    )?;
    let mut opts = opts.clone();
    opts.live = live.as_ref().map(|l| l.board.clone());
    let (json, docs) = match runs {
        [one] if a.replicas.is_none() && one.arm.is_none() => {
            let doc = rt.block_on(::ramp::ladder::run_ladder(one, levels, &opts))?;
            (words::json::ladder(&doc).to_string(), vec![doc])
        }
        _ => {
            let doc = rt.block_on(::ramp::arms::run_arms(runs, levels, &opts))?;
            (words::json::arms(&doc).to_string(), doc.arms)
        }
    };
    if let Some(l) = live {
        l.finish(rt, &docs);
    }
    let ci = super::ForCi {
        junit: a.junit.as_deref(),
        summary: a.summary.as_deref(),
        job_summary_always: false,
    };
    ci.write(
        || report::junit::steps::ramp(&config, &docs),
        report::junit::steps::ramp_summary(&docs),
    )?;
    Ok(json)
}

/// The runs a ramp makes: the config alone, or each arm, times each replica count.
fn runs_of(
    a: &RampArgs,
    cfg: &experiment::Config,
    names: &[String],
) -> anyhow::Result<Vec<experiment::Config>> {
    let variants = match (cfg.arms.is_empty(), names) {
        (_, [none]) if none == "none" => vec![cfg.clone()],
        (true, []) => vec![cfg.clone()],
        _ => ::ramp::arms::arm_configs(cfg, names)?,
    };
    Ok(match &a.replicas {
        None => variants,
        Some(list) => {
            let counts = ::ramp::levels::parse_replicas(list).map_err(anyhow::Error::msg)?;
            variants
                .iter()
                .flat_map(|v| counts.iter().map(|n| v.with_replicas(*n)))
                .collect()
        }
    })
}

fn sweep(
    a: &RampArgs,
    cfg: &experiment::Config,
    opts: &::ramp::ladder::RampOptions,
    rt: &tokio::runtime::Runtime,
) -> anyhow::Result<u8> {
    if a.sweep.len() > 2 {
        anyhow::bail!(
            "--sweep: one axis, or two for a grid (got {})",
            a.sweep.len()
        );
    }
    if a.arm.is_some() || a.replicas.is_some() || !cfg.arms.is_empty() {
        anyhow::bail!("--sweep runs [sut] alone: no --arm, --replicas or [[arm]] tables (sweep one arm's config at a time)");
    }
    let axes = a
        .sweep
        .iter()
        .map(|s| ::ramp::sweep::parse_axis(s).map_err(anyhow::Error::msg))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut opts = opts.clone();
    opts.step.concurrency = a.concurrency;
    let doc = rt.block_on(::ramp::sweep::run_sweep(cfg, &axes, &opts))?;
    if a.json {
        println!("{}", words::json::sweep(&doc));
    }
    Ok(0)
}
