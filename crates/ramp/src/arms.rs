//! `plimsoll ramp` over the `[[arm]]`s of a config: every arm at every level, interleaved
//! level by level (a fresh SUT and mock each step, the same seed, the same cap), each arm
//! analysed on its own, one document and one report with every arm on each chart and a
//! line per arm saying what it holds.

use crate::ladder::{conclude, print_verdict, RampOptions, Run};
use crate::levels::{Levels, Search};
use anyhow::Context;
use experiment::Config;
use result::arms::ArmsDoc;
use result::ladder::LadderDoc;

/// The ladder table's header with the arm's column first.
fn header(unit: result::words::Unit) -> String {
    let head = report::table::live_header(unit);
    let mut lines = head.lines();
    format!(
        "| arm          {}\n|:-------------{}",
        lines.next().unwrap_or(""),
        lines.next().unwrap_or("")
    )
}

/// Each arm's config, in the order asked (every arm of the config when `names` is empty).
pub fn arm_configs(cfg: &Config, names: &[String]) -> anyhow::Result<Vec<Config>> {
    let names: Vec<String> = match names.is_empty() {
        true => cfg.arms.iter().map(|a| a.name.clone()).collect(),
        false => names.to_vec(),
    };
    names
        .iter()
        .map(|n| {
            cfg.with_arm(n)
                .with_context(|| format!("--arm {n}: no such [[arm]] ({})", cfg.arm_names()))
        })
        .collect()
}

/// Runs every arm over the levels and reports them together.
pub async fn run_arms(
    arms: &[Config],
    levels: Levels,
    opts: &RampOptions,
) -> anyhow::Result<ArmsDoc> {
    let mut runs: Vec<Run> = arms
        .iter()
        .map(|c| Run::start(c, opts))
        .collect::<anyhow::Result<_>>()?;
    eprintln!("budget: {}", opts.budget.describe());
    eprintln!(
        "arms: {} — every arm at every level, interleaved",
        arm_names(arms).join(", ")
    );
    eprintln!("{}", header(opts.unit));
    match climb(&mut runs, levels, opts).await {
        Ok(()) => finish(runs, opts),
        Err(e) => {
            for r in &runs {
                r.fail(&e);
            }
            Err(e)
        }
    }
}

/// The levels for every arm, from one session first when latency is judged against it.
async fn climb(runs: &mut [Run<'_>], levels: Levels, opts: &RampOptions) -> anyhow::Result<()> {
    let first = match &levels {
        Levels::List(v) => v.first().copied(),
        Levels::Auto { start, .. } => Some(*start),
    };
    if opts.budget.latency_vs_single.is_some() && first.is_some_and(|f| f > 1) {
        for r in runs.iter_mut() {
            if r.level(1).await?.is_none() {
                return Ok(());
            }
        }
    }
    match levels {
        Levels::List(v) => list(runs, &v).await,
        Levels::Auto {
            start,
            max_steps,
            resolution,
        } => auto(runs, start, max_steps, resolution).await,
    }
}

/// Every level for every arm still standing; an arm stops at its first collapse.
async fn list(runs: &mut [Run<'_>], levels: &[usize]) -> anyhow::Result<()> {
    let mut done = vec![false; runs.len()];
    for &n in levels {
        for (i, r) in runs.iter_mut().enumerate() {
            if done[i] {
                continue;
            }
            match r.level(n).await? {
                None => return Ok(()),
                Some(result::Standing::Collapsed) => done[i] = true,
                Some(_) => {}
            }
        }
        if done.iter().all(|d| *d) {
            break;
        }
    }
    Ok(())
}

/// Doubling with every arm at each level until each is done (see `Search`), then
/// bisecting each arm's line in turn.
async fn auto(
    runs: &mut [Run<'_>],
    start: usize,
    max_steps: usize,
    resolution: f64,
) -> anyhow::Result<()> {
    let mut search = vec![Search::default(); runs.len()];
    let mut level = start;
    for _ in 0..max_steps {
        for (r, s) in runs.iter_mut().zip(search.iter_mut()) {
            if s.doubling_done() {
                continue;
            }
            let Some(st) = r.level(level).await? else {
                return Ok(());
            };
            s.record(level, st);
            if let Some(x) = r.last_rate() {
                s.rate(level, x);
            }
        }
        if search.iter().all(Search::doubling_done) {
            break;
        }
        level *= 2;
    }
    loop {
        let mut ran = false;
        for (r, s) in runs.iter_mut().zip(search.iter_mut()) {
            if let Some(m) = s.next_bisect(resolution) {
                let Some(st) = r.level(m).await? else {
                    return Ok(());
                };
                s.record(m, st);
                ran = true;
            }
        }
        if !ran {
            return Ok(());
        }
    }
}

/// With more than one replica count: each variant's throughput and memory by replicas.
fn scaling(docs: &[LadderDoc]) -> Vec<result::arms::Scaling> {
    let rows: Vec<analysis::replicas::Measured> =
        docs.iter().map(analysis::replicas::measure).collect();
    let counts: std::collections::BTreeSet<usize> = rows.iter().map(|r| r.replicas).collect();
    match counts.len() > 1 {
        true => analysis::replicas::scaling(&rows),
        false => Vec::new(),
    }
}

/// Each arm analysed, the verdicts printed arm by arm, then a line per arm; the reports
/// written.
fn finish(runs: Vec<Run>, opts: &RampOptions) -> anyhow::Result<ArmsDoc> {
    let config = runs
        .first()
        .map(|r| r.cfg.file.display().to_string())
        .unwrap_or_default();
    let interrupted = runs.iter().any(|r| r.interrupted);
    let mut docs = Vec::new();
    for r in runs {
        docs.push(conclude(r)?.0);
    }
    for d in &docs {
        eprintln!("\narm {}:", d.arm.as_deref().unwrap_or("the SUT"));
        print_verdict(d);
    }
    let scaling = scaling(&docs);
    let doc = ArmsDoc {
        schema_version: 1,
        config,
        environment: docs.first().and_then(|d| d.environment.run().cloned()),
        interrupted,
        arms: docs,
        scaling,
    };
    eprintln!();
    for line in report::arms::summary_lines(&doc) {
        eprintln!("{line}");
    }
    if let Some(dir) = &opts.out {
        let md = report::arms::markdown(&doc);
        let html = report::arms::html(&doc);
        crate::ladder::write_files(
            dir,
            &result::to_file_json(&words::json::arms(&doc)),
            &md,
            &html,
        )?;
    }
    Ok(doc)
}

/// Each arm by its name — an arm without one is "the SUT" — with its replica count when
/// the arms differ in it (`--replicas 1,2`).
pub(crate) fn arm_names(arms: &[Config]) -> Vec<String> {
    let axis = arms.iter().any(|c| c.replicas != arms[0].replicas);
    arms.iter()
        .map(|c| {
            let name = c.arm.clone().unwrap_or_else(|| "the SUT".into());
            match axis {
                true => format!("{name} ×{}", c.replicas),
                false => name,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_without_arms_name_the_sut() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/floor/plimsoll.toml");
        let one = Config::load(&root).unwrap();
        let mut two = one.clone();
        two.replicas = 2;
        assert_eq!(arm_names(&[one.clone(), two]), ["the SUT ×1", "the SUT ×2"]);
        let mut named = one.clone();
        named.arm = Some("held".into());
        assert_eq!(arm_names(&[named, one]), ["held", "the SUT"]);
    }
}
