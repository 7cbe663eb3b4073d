//! `plimsoll compare`: two builds, interleaved and repeated.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct CompareArgs {
    /// The experiment file (paths in it count from its directory).
    #[arg(long, default_value = "plimsoll.toml")]
    pub config: PathBuf,
    /// The base build as a ready command (run with sh -c; {{port}} is filled in).
    #[arg(long, conflicts_with = "base")]
    pub base_cmd: Option<String>,
    /// The branch build as a ready command.
    #[arg(long, conflicts_with = "branch")]
    pub branch_cmd: Option<String>,
    /// The base as an [[arm]] of the config (its command and env over [sut]'s).
    #[arg(long, requires = "branch_arm", conflicts_with_all = ["base", "base_cmd"])]
    pub base_arm: Option<String>,
    /// The branch as an [[arm]] of the config.
    #[arg(long, requires = "base_arm", conflicts_with_all = ["branch", "branch_cmd"])]
    pub branch_arm: Option<String>,
    /// The base as a git ref of the SUT's repository.
    #[arg(long, requires = "branch")]
    pub base: Option<String>,
    /// The branch as a git ref.
    #[arg(long, requires = "base")]
    pub branch: Option<String>,
    /// Build command run in each worktree (with --base/--branch).
    #[arg(long)]
    pub build: Option<String>,
    /// Concurrency levels both sides run, e.g. 10,20,40 (every level, both sides, each repetition).
    #[arg(long, default_value = "10,20")]
    pub ladder: String,
    /// Repetitions per level and side, interleaved base, branch, branch, base … (6 or more for a verdict).
    #[arg(long, default_value_t = 6)]
    pub repeat: usize,
    /// CI gates, e.g. 'p99_session_ms>+10%,peak_threads>+0'.
    #[arg(long, default_value = "")]
    pub fail_on: String,
    /// Directory for compare.json, compare.md and compare.html.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write a JUnit XML report here: each --fail-on gate at each level a test case, failed
    /// when the gate is breached (CI systems show it as a test result).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary sized for a pull request's comment here: pass or fail, the
    /// breaches, the table. Under GitHub Actions it is also appended to $GITHUB_STEP_SUMMARY.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// The history database both sides are recorded in, linked as a pair.
    #[arg(long, default_value = ".plimsoll/history.db")]
    pub history: PathBuf,
    /// Do not record this comparison.
    #[arg(long)]
    pub no_history: bool,
    /// Let Plimsoll and the SUT share every core (by default Plimsoll takes one core, the SUT the rest).
    #[arg(long)]
    pub no_partition: bool,
    #[command(flatten)]
    pub cap: super::CapArgs,
    /// Replay this workload on the base side (over [workload]).
    #[arg(long, value_name = "FILE")]
    pub base_workload: Option<PathBuf>,
    /// Replay this workload on the branch side.
    #[arg(long, value_name = "FILE")]
    pub branch_workload: Option<PathBuf>,
    /// Compare sides that replayed different workloads (refused otherwise: their numbers
    /// describe different loads).
    #[arg(long)]
    pub allow_different_workloads: bool,
}

/// Every file a step needs read before any build or step (each arm's when arms are
/// compared): a bad one costs nothing.
fn preflight(
    cfg: &experiment::Config,
    arms: Option<&[String; 2]>,
    step: &step::StepOptions,
) -> anyhow::Result<()> {
    match arms {
        Some(names) => names.iter().try_for_each(|n| {
            let armed = cfg.with_arm(n).unwrap_or_else(|| cfg.clone());
            step::preflight(&armed, step).map(|_| ())
        }),
        None => step::preflight(cfg, step).map(|_| ()),
    }
}

pub fn run(a: CompareArgs) -> anyhow::Result<u8> {
    super::guard_up();
    let cfg = experiment::Config::load(&a.config)?;
    let levels = match ::ramp::levels::parse_levels(&a.ladder, 1).map_err(anyhow::Error::msg)? {
        ::ramp::levels::Levels::List(v) => v,
        ::ramp::levels::Levels::Auto { .. } => {
            anyhow::bail!("--ladder auto is for ramp; compare needs fixed levels, e.g. 10,20")
        }
    };
    let cap = a.cap.spec()?;
    let fail_on = ::compare::parse_fail_on(&a.fail_on).map_err(anyhow::Error::msg)?;
    let gates = fail_on.clone();
    let step = step::StepOptions {
        cap,
        partition: super::partition(!a.no_partition),
        ..Default::default()
    };
    // Git refs: a worktree per ref, built, removed afterwards (the guards' Drop).
    let arms = match (&a.base_arm, &a.branch_arm) {
        (Some(b), Some(r)) => {
            for n in [b, r] {
                if cfg.with_arm(n).is_none() {
                    anyhow::bail!(
                        "--base-arm/--branch-arm {n}: no such [[arm]] ({})",
                        cfg.arm_names()
                    );
                }
            }
            Some([b.clone(), r.clone()])
        }
        _ => None,
    };
    preflight(&cfg, arms.as_ref(), &step)?;
    let (worktrees, base_cmd, branch_cmd) = match (&a.base, &a.branch, &a.base_cmd, &a.branch_cmd) {
        _ if arms.is_some() => {
            let [b, r] = arms.clone().unwrap_or_default();
            (None, format!("arm {b}"), format!("arm {r}"))
        }
        (Some(b), Some(r), None, None) => {
            let wt = ::compare::Worktrees::create(&cfg.cwd, b, r, a.build.as_deref())?;
            let cmd = shell_join(&cfg.command);
            (Some(wt), cmd.clone(), cmd)
        }
        (None, None, Some(b), Some(r)) => (None, b.clone(), r.clone()),
        _ => anyhow::bail!("give --base-cmd and --branch-cmd, --base and --branch (git refs), or --base-arm and --branch-arm ([[arm]]s of the config)"),
    };
    let opts = ::compare::CompareOptions {
        arms,
        base_cmd,
        branch_cmd,
        levels,
        repeat: a.repeat,
        step,
        fail_on,
        history: (!a.no_history).then_some(a.history.clone()),
        side_workloads: side_workloads(&a, &cfg),
        allow_different_workloads: a.allow_different_workloads,
    };
    let rt = super::runtime()?;
    let (doc, breaches) = rt.block_on(::compare::run_compare(&cfg, &opts, worktrees.as_ref()))?;
    drop(worktrees);
    let md = report::markdown::compare(&doc);
    eprintln!("{md}");
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("compare.json"), result::to_file_json(&doc))?;
        std::fs::write(dir.join("compare.md"), &md)?;
        std::fs::write(dir.join("compare.html"), report::html::render_compare(&doc))?;
    }
    println!("{}", result::to_line_json(&doc));
    for b in &breaches {
        eprintln!("FAIL: {}", report::gates::said(b));
    }
    for_ci(&a, &doc, &gates, &breaches)?;
    Ok(if breaches.is_empty() { 0 } else { 2 })
}

/// `--junit`, `--summary` and, under GitHub Actions, the job's summary.
fn for_ci(
    a: &CompareArgs,
    doc: &result::compare::CompareDoc,
    gates: &[(String, f64)],
    breaches: &[result::compare::Breach],
) -> anyhow::Result<()> {
    let ci = super::ForCi {
        junit: a.junit.as_deref(),
        summary: a.summary.as_deref(),
        job_summary_always: true,
    };
    ci.write(
        || report::junit::compare(doc, gates, breaches),
        report::junit::compare_summary(doc, breaches),
    )
}

fn shell_join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `--base-workload` / `--branch-workload`: each side's file, replayed as `[workload]` says.
fn side_workloads(
    a: &CompareArgs,
    cfg: &experiment::Config,
) -> [Option<experiment::WorkloadSettings>; 2] {
    let base = cfg
        .workload
        .clone()
        .unwrap_or(experiment::WorkloadSettings {
            file: PathBuf::new(),
            exact: false,
            speed: 1.0,
            recorded_prompts: false,
        });
    [&a.base_workload, &a.branch_workload].map(|f| {
        f.clone().map(|file| experiment::WorkloadSettings {
            file,
            ..base.clone()
        })
    })
}
