//! One step: a fresh mock, a fresh SUT pointed at it, C sessions driven through it
//! (or the user's own harness driving them), its process tree sampled all along, and
//! one RESULT.

pub use crate::options::StepOptions;
use crate::rig::Rig;
use drive::SessionSpec;
use experiment::Config;
pub use result::StepReport;

pub async fn run_step(cfg: &Config, opts: &StepOptions) -> anyhow::Result<StepReport> {
    let armed;
    let cfg = match &opts.arm {
        None => cfg,
        Some(name) => {
            armed = cfg.with_arm(name).ok_or_else(|| {
                anyhow::anyhow!("--arm {name}: no such [[arm]] ({})", cfg.arm_names())
            })?;
            &armed
        }
    };
    let (replay, concurrency) = crate::replayed::plan(cfg, opts)?;
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
    // Read the session file before starting anything, so a bad one costs nothing.
    let session = match harness {
        Some(_) => None,
        None => Some({
            let file = opts.session.as_ref().unwrap_or(&cfg.session_file);
            let mut s = SessionSpec::load(file)?;
            s.turns = opts.turns.unwrap_or(s.turns).max(1);
            for (name, v) in &opts.set {
                s.set(name, *v)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            }
            s
        }),
    };
    // Each warning once per process, not once per step of a ladder.
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    for w in session.iter().flat_map(|s| &s.warnings) {
        let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
        if !said.contains(w) {
            eprintln!("{w}");
            said.push(w.clone());
        }
    }
    let resident = opts.resident.or(cfg.resident);
    if let (Some(n), Some(s)) = (resident, &session) {
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
    if harness.is_some() && cfg.replicas > 1 {
        anyhow::bail!("replicas ({}) need Plimsoll to drive the sessions, to spread them over the replicas; a harness drives its own (leave out --harness, or the replicas)", cfg.replicas);
    }
    let rig = Rig::start(cfg, concurrency, replay).await?;
    match (harness, session) {
        (Some(cmd), _) => crate::harness::run(cfg, opts, rig, cmd).await,
        (None, Some(session)) => crate::driven::run(cfg, opts, rig, &session).await,
        (None, None) => unreachable!("a session is loaded whenever there is no harness"),
    }
}
