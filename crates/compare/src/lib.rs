//! `plimsoll compare`: two builds of the SUT on the same ladder, scenario, seed and cap,
//! their steps interleaved `repeat` times, the order swapped each time (base, branch,
//! branch, base …) so drift of the machine and the warmth one side leaves hit both alike;
//! per level and metric, both medians, their ratio with a bootstrap confidence interval,
//! and a verdict. This crate runs the steps and records
//! them; the statistics are `analysis::stats`, the tables and charts `report`.

use analysis::stats::{COST_METRIC, METRICS};
use experiment::Config;
use step::StepOptions;
pub use worktrees::Worktrees;

mod worktrees;
use result::compare::{CompareDoc, Sides};
use result::StepResult;

#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// Each side's command (run with sh -c), or with `arms` its label ("arm held").
    pub base_cmd: String,
    pub branch_cmd: String,
    /// Two `[[arm]]`s of the config as base and branch, instead of two commands.
    pub arms: Option<[String; 2]>,
    pub levels: Vec<usize>,
    pub repeat: usize,
    pub step: StepOptions,
    /// Gates: (metric, allowed relative increase, e.g. 0.10 for +10 %; for `ceiling`,
    /// the allowed relative drop).
    pub fail_on: Vec<(String, f64)>,
    /// Record both sides in this history database, linked as a pair.
    pub history: Option<std::path::PathBuf>,
    /// A recorded workload for one side only (base, branch), over the config's.
    pub side_workloads: [Option<experiment::WorkloadSettings>; 2],
    /// Compare sides that replayed different workloads (refused otherwise).
    pub allow_different_workloads: bool,
}

/// Two sides that replayed different recordings are not the same experiment: refused,
/// unless the caller says they mean it.
pub fn same_workload(base: &StepResult, branch: &StepResult, allowed: bool) -> anyhow::Result<()> {
    let print = |r: &StepResult| r.workload.as_ref().map(|w| w.sha256.clone());
    let (a, b) = (print(base), print(branch));
    if a == b || allowed {
        return Ok(());
    }
    let name = |p: &Option<String>| {
        p.as_deref()
            .map_or("no workload (the session file)".to_string(), |s| {
                format!("workload {}", &s[..s.len().min(12)])
            })
    };
    anyhow::bail!(
        "base ran {} and branch ran {}: their numbers are not comparable; replay the same workload on both, or pass --allow-different-workloads",
        name(&a),
        name(&b)
    )
}

/// `p99_session_ms>+10%,peak_threads>+0` → gates.
pub fn parse_fail_on(s: &str) -> Result<Vec<(String, f64)>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (metric, limit) = part.split_once(">+").ok_or_else(|| {
            format!("--fail-on {part:?}: write METRIC>+PERCENT%, e.g. p99_session_ms>+10%")
        })?;
        let per_request = metric.starts_with("requests.") && metric.ends_with(".p50_ms");
        let known = METRICS.contains(&metric) || metric == "ceiling" || metric == COST_METRIC;
        if !known && !per_request {
            return Err(format!(
                "--fail-on {part:?}: {metric} is not compared; use one of {}, ceiling, {COST_METRIC}, or requests.NAME.p50_ms for a named request of the session",
                METRICS.join(", ")
            ));
        }
        let pct: f64 = limit
            .trim_end_matches('%')
            .parse()
            .map_err(|_| format!("--fail-on {part:?}: {limit:?} is not a percentage"))?;
        out.push((metric.to_string(), pct / 100.0));
    }
    Ok(out)
}

/// The sides (0 base, 1 branch) in the order repetition `rep` runs them: base first on
/// even repetitions, branch first on odd (ABBA), since a side that always ran second would
/// always start on a machine the other had just warmed.
fn sides_in_order(rep: usize) -> [usize; 2] {
    if rep.is_multiple_of(2) {
        [0, 1]
    } else {
        [1, 0]
    }
}

pub async fn run_compare(
    cfg: &Config,
    opts: &CompareOptions,
    worktrees: Option<&Worktrees>,
) -> anyhow::Result<(CompareDoc, Vec<result::compare::Breach>)> {
    let mut samples: Vec<[Vec<StepResult>; 2]> = vec![[Vec::new(), Vec::new()]; opts.levels.len()];
    for rep in 0..opts.repeat.max(1) {
        for (li, &level) in opts.levels.iter().enumerate() {
            for side in sides_in_order(rep) {
                let cmd = [&opts.base_cmd, &opts.branch_cmd][side];
                let mut c = cfg.clone();
                let mut o = opts.step.clone();
                match &opts.arms {
                    Some(arms) => o.arm = Some(arms[side].clone()),
                    None => c.command = vec!["sh".into(), "-c".into(), cmd.clone()],
                }
                if let Some(w) = worktrees {
                    c.cwd = w.dirs[side].clone();
                }
                o.concurrency = Some(level);
                if let Some(w) = &opts.side_workloads[side] {
                    o.workload = Some(w.clone());
                }
                let Some(step) = step::start(&c, &o, step::Start::default()).await? else {
                    anyhow::bail!(
                        "interrupted at rep {}: the comparison is left unfinished and unrecorded",
                        rep + 1
                    );
                };
                eprintln!(
                    "  rep {} · {} · {:<6} → {} (p99 {} ms, {})",
                    rep + 1,
                    result::words::Unit::of_step(&step.result).level(level),
                    if side == 0 { "base" } else { "branch" },
                    step.result.outcome,
                    step.result
                        .p99_session_ms
                        .map_or("—".to_string(), |v| format!("{v:.1}")),
                    step.result.peak_threads
                );
                samples[li][side].push(step.result);
            }
            let [base, branch] = &samples[li];
            if let (Some(a), Some(b)) = (base.last(), branch.last()) {
                same_workload(a, b, opts.allow_different_workloads)?;
            }
        }
    }
    let analysis::compare::Summary {
        levels,
        ceiling: (cb, cr),
        breaches,
        line,
    } = analysis::compare::summarise(&opts.levels, &samples, &opts.fail_on);
    let history = match &opts.history {
        Some(path) => Some(record_pair(path, opts, &samples)?),
        None => None,
    };
    let doc = CompareDoc {
        schema_version: 1,
        base: opts.base_cmd.clone(),
        branch: opts.branch_cmd.clone(),
        repeat: opts.repeat,
        ceiling: Sides {
            base: cb,
            branch: cr,
        },
        history_runs: history.map(|(base, branch)| Sides { base, branch }),
        levels,
        line,
    };
    Ok((doc, breaches))
}

/// Both sides go into the history as runs of their own, each naming the other.
fn record_pair(
    path: &std::path::Path,
    opts: &CompareOptions,
    samples: &[[Vec<StepResult>; 2]],
) -> anyhow::Result<(i64, i64)> {
    let h = store::History::open(path)?;
    let now = step::now_rfc3339();
    let env = |side: &str, cmd: &str| result::ladder::CompareSideEnvironment {
        compare: side.into(),
        sut_command: cmd.into(),
        machine: probe::machine::fingerprint(),
    };
    let base = h.start_run(
        &now,
        &format!("compare base: {}", opts.base_cmd),
        &env("base", &opts.base_cmd),
    )?;
    let branch = h.start_run(
        &now,
        &format!("compare branch: {}", opts.branch_cmd),
        &env("branch", &opts.branch_cmd),
    )?;
    for (id, side) in [(base, 0usize), (branch, 1)] {
        let mut idx = 0;
        for level in samples {
            for r in &level[side] {
                h.add_step(id, idx, r)?;
                idx += 1;
            }
        }
    }
    h.finish_run(
        base,
        "done",
        &result::ladder::RunAnalysis::CompareSide {
            compare_pair: branch,
            side: "base".into(),
        },
    )?;
    h.finish_run(
        branch,
        "done",
        &result::ladder::RunAnalysis::CompareSide {
            compare_pair: base,
            side: "branch".into(),
        },
    )?;
    Ok((base, branch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_parse_and_name_the_fix() {
        assert_eq!(
            parse_fail_on("p99_session_ms>+10%,peak_threads>+0").unwrap(),
            vec![("p99_session_ms".into(), 0.1), ("peak_threads".into(), 0.0)]
        );
        assert_eq!(
            parse_fail_on("cost_per_session>+10%").unwrap(),
            vec![("cost_per_session".into(), 0.1)]
        );
        assert!(parse_fail_on("p99>+10%")
            .unwrap_err()
            .contains("not compared"));
        assert!(parse_fail_on("p99_session_ms<5")
            .unwrap_err()
            .contains("METRIC>+PERCENT%"));
    }
}

#[cfg(test)]
mod workload_tests {
    use super::*;

    #[test]
    fn sides_of_different_workloads_are_refused_unless_allowed() {
        let with = |sha: &str| StepResult {
            workload: Some(result::Replayed {
                sha256: sha.into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(same_workload(&with("aa"), &with("aa"), false).is_ok());
        let e = same_workload(&with("aa"), &with("bb"), false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("base ran workload aa and branch ran workload bb"),
            "{e}"
        );
        let e = same_workload(&StepResult::default(), &with("bb"), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no workload (the session file)"), "{e}");
        assert!(same_workload(&with("aa"), &with("bb"), true).is_ok());
    }

    #[test]
    fn each_repetition_swaps_which_side_runs_first() {
        let order: Vec<[usize; 2]> = (0..4).map(sides_in_order).collect();
        assert_eq!(order, [[0, 1], [1, 0], [0, 1], [1, 0]]);
    }
}
