//! Everything a step reads before it starts anything: the arm's config, the recorded
//! workload, the harness or the session file (with `--set` applied), the mock's scenario,
//! and the options that do not go together — each file read and checked once, so a run
//! that cannot start says so before its first step (`preflight`), and a step costs
//! nothing when its files are wrong.

use drive::SessionSpec;
use experiment::Config;
use std::sync::Arc;

/// What a step needs, read and checked.
pub(crate) struct Prepared {
    pub cfg: Config,
    pub replay: Option<Arc<workload::Replay>>,
    pub concurrency: usize,
    pub harness: Option<Vec<String>>,
    pub session: Option<SessionSpec>,
    pub scenario: mock::Scenario,
}

/// Reads and checks every file a step of `cfg` needs (session, scenario, workload,
/// templates) and the options, as the step will: the error a step would meet, before
/// any step runs.
pub fn preflight(cfg: &Config, opts: &crate::StepOptions) -> anyhow::Result<Preflight> {
    prepare(cfg, opts).map(|p| Preflight {
        unit: result::words::Unit::calls_when(
            p.session.as_ref().is_some_and(|s| s.voice.is_some()),
        ),
    })
}

/// What a run of `cfg` is, as read before it starts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Preflight {
    /// Its sessions are voice calls (`protocol = "twilio"` or `"pcm-ws"`): judged by the
    /// voice budget (`Budget::for_calls`) and said in calls.
    pub unit: result::words::Unit,
}

impl Preflight {
    /// The budget this run is judged by.
    pub fn budget(&self, b: analysis::Budget) -> analysis::Budget {
        match self.unit.is_calls() {
            true => b.for_calls(),
            false => b,
        }
    }
}

pub(crate) fn prepare(cfg: &Config, opts: &crate::StepOptions) -> anyhow::Result<Prepared> {
    let cfg = match &opts.arm {
        None => cfg.clone(),
        Some(name) => cfg.with_arm(name).ok_or_else(|| {
            anyhow::anyhow!("--arm {name}: no such [[arm]] ({})", cfg.arm_names())
        })?,
    };
    let (replay, concurrency) = crate::replayed::plan(&cfg, opts)?;
    let harness = match (&opts.harness, &cfg.harness) {
        (Some(line), _) => Some(vec!["sh".to_string(), "-c".to_string(), line.clone()]),
        (None, Some(cmd)) => Some(cmd.clone()),
        (None, None) => None,
    };
    if harness.is_none() && cfg.command.is_empty() {
        anyhow::bail!(
            "{}: [sut] command is required (or pass --harness)",
            cfg.file.display()
        );
    }
    let session = match harness {
        Some(_) => None,
        None => Some(session(&cfg, opts)?),
    };
    let mut scenario = match &cfg.scenario {
        Some(p) => mock::Scenario::load(p)?,
        None => mock::Scenario::default(),
    };
    scenario
        .apply_failure_env(|k| std::env::var(k).ok())
        .map_err(anyhow::Error::msg)?;
    together(&cfg, opts, concurrency, session.as_ref(), harness.is_some())?;
    Ok(Prepared {
        cfg,
        replay,
        concurrency,
        harness,
        session,
        scenario,
    })
}

/// The session file, with the turns and `--set` values the options give.
pub(crate) fn session(cfg: &Config, opts: &crate::StepOptions) -> anyhow::Result<SessionSpec> {
    let file = opts.session.as_ref().unwrap_or(&cfg.session_file);
    let mut s = SessionSpec::load(file)?;
    s.turns = opts.turns.unwrap_or(s.turns).max(1);
    for (name, v) in &opts.set {
        s.set(name, *v)
            .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    }
    Ok(s)
}

/// Options that do not go together, each refused with what to do instead.
fn together(
    cfg: &Config,
    opts: &crate::StepOptions,
    concurrency: usize,
    session: Option<&SessionSpec>,
    harness: bool,
) -> anyhow::Result<()> {
    let resident = opts.resident.or(cfg.resident);
    if let (Some(n), Some(s)) = (resident, session) {
        if s.setup.is_empty() {
            anyhow::bail!("--resident (or [step] resident) needs a session that opens with [[setup]] requests: they are what holds a session open in the SUT between its turns (see session.toml's [[setup]])");
        }
        if n < concurrency {
            anyhow::bail!("--resident {n} is fewer than the {concurrency} sessions to keep active: give at least as many residents as the concurrency");
        }
        if opts.soak.is_some() {
            anyhow::bail!("--resident (or [step] resident) and a soak do not go together: a soak churns sessions, residents stay open; leave resident out of the soak's config");
        }
        if opts.slow.or(cfg.slow).is_some_and(|(share, _)| share > 0.0) {
            anyhow::bail!("--resident and slow consumers do not go together yet: drive the residents at full speed, or the slow share without --resident");
        }
        if opts.rate.or(cfg.arrival_rate).is_some() {
            anyhow::bail!("--resident and an arrival rate do not go together: residents are driven a closed model, the concurrency of them at a time");
        }
    }
    if session.is_some_and(|s| s.voice.is_some()) {
        if opts.slow.or(cfg.slow).is_some_and(|(share, _)| share > 0.0) {
            anyhow::bail!("slow consumers and voice calls do not go together: a call's audio is already read as a phone plays it, in real time (leave out --slow)");
        }
        if opts.workload.is_some() {
            anyhow::bail!("a recorded workload replays text sessions, and this session file is a voice call: drive calls without --replay");
        }
    }
    if let Some(s) = session {
        services_named(cfg, opts.session.as_ref().unwrap_or(&cfg.session_file), s)?;
    }
    if harness && cfg.replicas > 1 {
        anyhow::bail!("replicas ({}) need Plimsoll to drive the sessions, to spread them over the replicas; a harness drives its own (leave out --harness, or the replicas)", cfg.replicas);
    }
    Ok(())
}

/// Every `{{NAME.port}}` in the session names a `[[service]]` of the config.
fn services_named(
    cfg: &Config,
    file: &std::path::Path,
    session: &SessionSpec,
) -> anyhow::Result<()> {
    let templates = session
        .requests()
        .flat_map(|r| r.templates().map(|(t, _)| t));
    for p in templates.flat_map(drive::template::placeholders) {
        let Some(name) = drive::template::service_port(p) else {
            continue;
        };
        if !cfg.services.iter().any(|s| s.name == name) {
            let known: Vec<&str> = cfg.services.iter().map(|s| s.name.as_str()).collect();
            anyhow::bail!(
                "{}: {{{{{p}}}}} names no [[service]] of {}: {}",
                file.display(),
                cfg.file.display(),
                match known.is_empty() {
                    true => format!("add a [[service]] named {name:?}, or write the port"),
                    false => format!("the services are {}", known.join(", ")),
                }
            );
        }
    }
    Ok(())
}
