//! `plimsoll ramp`: a ladder of fresh steps under a resource cap, stopping at the first
//! collapse; then the ceiling, the knee, a USL fit and a capacity projection, printed as
//! the table grows and written as `result.json` and `report.md`.

use crate::levels::Levels;
use anyhow::Context;
use experiment::Config;
use report::table::{header_for, row};
use result::cause::StepCause;
use result::environment::Environment;
use result::ladder::{LadderDoc, RunAnalysis, RunEnvironment};
use result::{Standing, StepResult};
use std::path::PathBuf;
use step::StepOptions;

#[derive(Clone, Debug, Default)]
pub struct RampOptions {
    pub step: StepOptions,
    /// (GB, cores) of the host to project onto.
    pub host: Option<(f64, f64)>,
    pub target: Option<u64>,
    pub out: Option<PathBuf>,
    /// The history database (None: do not record).
    pub history: Option<PathBuf>,
    /// What "holds" means (the config's `[budget]` with `--budget` over it).
    pub budget: analysis::Budget,
    /// A replicas axis is in use (`--replicas`): each run is named with its count.
    pub replicas_axis: bool,
    /// A live view's board: each level, each second of it and each finished step.
    pub live: Option<live::Board>,
    /// What the ladder counts, sessions or voice calls (`step::Preflight`): the calls
    /// table, and its progress said in calls.
    pub unit: result::words::Unit,
    /// With `--ladder auto`: how many more times the levels either side of the line run
    /// (a third time when two runs disagree); 0 runs them once.
    pub confirm: usize,
}

/// The steps of a run so far, recorded as they finish.
pub(crate) struct Run<'a> {
    pub(crate) cfg: &'a Config,
    pub(crate) opts: &'a RampOptions,
    history: Option<store::History>,
    id: Option<i64>,
    environment: Environment,
    pub(crate) steps: Vec<StepResult>,
    causes: Vec<Option<StepCause>>,
    /// Levels run again to give the line its spread.
    pub(crate) repeats: Vec<StepResult>,
    pub(crate) interrupted: bool,
    /// The arm and replica count in a name ("held", "held-x2", "x4"); None for the SUT alone.
    pub(crate) label: Option<String>,
}

/// A run's name among others: its arm, with its replica count when that is an axis.
fn label(cfg: &Config, axis: bool) -> Option<String> {
    match (&cfg.arm, axis) {
        (Some(a), true) => Some(format!("{a}-x{}", cfg.replicas)),
        (Some(a), false) => Some(a.clone()),
        (None, true) => Some(format!("x{}", cfg.replicas)),
        (None, false) => None,
    }
}

impl<'a> Run<'a> {
    /// A run begun: recorded in the history (when kept) from its first step.
    pub(crate) fn start(cfg: &'a Config, opts: &'a RampOptions) -> anyhow::Result<Run<'a>> {
        let environment = environment(cfg, opts);
        let history = opts
            .history
            .as_deref()
            .map(store::History::open)
            .transpose()?;
        let started = step::now_rfc3339();
        let label = label(cfg, opts.replicas_axis);
        let name = match &label {
            Some(a) => format!("{} [{a}]", cfg.file.display()),
            None => cfg.file.display().to_string(),
        };
        let id = match &history {
            Some(h) => Some(h.start_run(&started, &name, &environment)?),
            None => None,
        };
        Ok(Run {
            cfg,
            opts,
            history,
            id,
            environment,
            steps: Vec::new(),
            causes: Vec::new(),
            repeats: Vec::new(),
            interrupted: false,
            label,
        })
    }

    /// The standing of a level's first run, among the first runs.
    pub(crate) fn first_standing(&self, level: usize) -> Option<Standing> {
        let s = self.steps.iter().find(|s| s.concurrency == level)?;
        Some(analysis::verdict::standing_among(
            &self.steps,
            s,
            &self.opts.budget,
        ))
    }

    /// The throughput of the last step run.
    pub(crate) fn last_rate(&self) -> Option<f64> {
        self.steps.last().and_then(|s| s.turns_per_s)
    }

    /// Runs one level; its standing against the budget, or None once interrupted.
    pub(crate) async fn level(&mut self, level: usize) -> anyhow::Result<Option<Standing>> {
        self.step_at(level, false).await
    }

    /// Runs the levels between the highest that holds and the lowest that fails until
    /// they are within `resolution`; false when interrupted.
    pub(crate) async fn bisect(
        &mut self,
        search: &mut crate::levels::Search,
        resolution: f64,
    ) -> anyhow::Result<bool> {
        while let Some(m) = search.next_bisect(resolution) {
            let Some(st) = self.level(m).await? else {
                return Ok(false);
            };
            search.record(m, st);
        }
        Ok(true)
    }

    /// Runs a level once more (its standing is judged among the first runs).
    pub(crate) async fn again(&mut self, level: usize) -> anyhow::Result<Option<Standing>> {
        self.step_at(level, true).await
    }

    async fn step_at(&mut self, level: usize, again: bool) -> anyhow::Result<Option<Standing>> {
        let mut o = self.opts.step.clone();
        o.concurrency = Some(level);
        let what = self.opts.unit.level(level);
        if let Some(b) = &self.opts.live {
            b.arm(self.label.as_deref());
            b.level(level, again);
            let board = b.clone();
            o.on_tick = Some(step::options::OnTick(std::sync::Arc::new(move |t| {
                board.tick(t)
            })));
        }
        let step = crate::clean::run_clean(self.cfg, &o, &what)
            .await
            .with_context(|| format!("step at {what}"))?;
        let Some(step) = step else {
            eprintln!("interrupted: the finished steps are kept; the run is marked interrupted");
            self.interrupted = true;
            return Ok(None);
        };
        let standing =
            analysis::verdict::standing_among(&self.steps, &step.result, &self.opts.budget);
        if let Some(b) = &self.opts.live {
            b.step(&step.result, standing.as_str());
        }
        let cells = row(&step.result, standing.as_str());
        let again_mark = if again { " again" } else { "" };
        match &self.label {
            Some(a) => eprintln!("| {:<12} {cells}{again_mark}", arm_cell(a)),
            None => eprintln!("{cells}{again_mark}"),
        }
        if let (Some(h), Some(id)) = (&self.history, self.id) {
            h.add_step(id, self.steps.len() + self.repeats.len(), &step.result)?;
        }
        if let Some(dir) = &self.opts.out {
            // The SUT's own output beside the results, a file a step (the newest lines).
            std::fs::create_dir_all(dir)?;
            let file = match &self.label {
                Some(a) => dir.join(format!("sut-log-{a}-c{level}.txt")),
                None => dir.join(format!("sut-log-c{level}.txt")),
            };
            std::fs::write(&file, step.log_lines.join("\n") + "\n")
                .with_context(|| format!("writing {}", file.display()))?;
        }
        if again {
            self.repeats.push(step.result);
        } else {
            self.steps.push(step.result);
            self.causes.push(step.cause.map(|cause| StepCause {
                cause,
                last_output: step.last_output,
            }));
        }
        Ok(Some(standing))
    }

    /// The levels asked for, from one session first when latency is judged against it.
    async fn climb(&mut self, levels: Levels) -> anyhow::Result<()> {
        let first = match &levels {
            Levels::List(v) => v.first().copied(),
            Levels::Auto { start, .. } => Some(*start),
        };
        // Latency against one session needs one session measured first.
        if self.opts.budget.latency_vs_single.is_some() && first.is_some_and(|f| f > 1) {
            self.level(1).await?;
        }
        match levels {
            Levels::List(v) => self.list(&v).await,
            Levels::Auto {
                start,
                max_steps,
                resolution,
            } => self.auto(start, max_steps, resolution).await,
        }
    }

    /// A run stopped by an error: recorded as failed with its reason (never left
    /// `running`, which the history reads as killed).
    pub(crate) fn fail(&self, e: &anyhow::Error) {
        if let (Some(h), Some(id)) = (&self.history, self.id) {
            if let Err(w) = h.fail_run(id, &format!("{e:#}")) {
                eprintln!("warning: could not record run {id} as failed: {w:#}");
            }
        }
    }

    /// A fixed list: every level in turn, stopping at the first collapse.
    async fn list(&mut self, levels: &[usize]) -> anyhow::Result<()> {
        for &n in levels {
            match self.level(n).await? {
                None | Some(Standing::Collapsed) => break,
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Doubling, then bisecting (see `Levels::Auto`).
    async fn auto(
        &mut self,
        start: usize,
        max_steps: usize,
        resolution: f64,
    ) -> anyhow::Result<()> {
        let t0 = std::time::Instant::now();
        let mut search = crate::levels::Search::default();
        let mut level = start;
        for _ in 0..max_steps {
            let Some(st) = self.level(level).await? else {
                return Ok(());
            };
            search.record(level, st);
            if let Some(r) = self.steps.last().and_then(|s| s.turns_per_s) {
                search.rate(level, r);
            }
            if search.doubling_done() {
                break;
            }
            level *= 2;
        }
        let doubled = self.steps.len();
        if !self.bisect(&mut search, resolution).await? {
            return Ok(());
        }
        if !self.settle(&mut search, resolution).await? {
            return Ok(());
        }
        eprintln!(
            "auto ladder: {} steps in {:.0} s ({doubled} doubling, {} bisecting, {} again){}",
            self.steps.len() + self.repeats.len(),
            t0.elapsed().as_secs_f64(),
            self.steps.len() - doubled,
            self.repeats.len(),
            match (search.holds, search.fails) {
                (Some(h), Some(f)) => format!(
                    "; the line lies between {h} and {f} {} (resolution {:.0} %)",
                    self.opts.unit.many(),
                    resolution * 100.0
                ),
                _ => String::new(),
            }
        );
        Ok(())
    }
}

pub async fn run_ladder(
    cfg: &Config,
    levels: Levels,
    opts: &RampOptions,
) -> anyhow::Result<LadderDoc> {
    let mut run = Run::start(cfg, opts)?;
    eprintln!("budget: {}", opts.budget.describe());
    eprintln!("{}", report::table::live_header(opts.unit));
    if let Err(e) = run.climb(levels).await {
        run.fail(&e);
        return Err(e);
    }
    let (doc, reordered) = conclude(run)?;
    if reordered {
        // The bisection ran levels out of order: the table again, by level.
        eprintln!("\nby level:\n{}", header_for(&doc.steps));
        for s in &doc.steps {
            eprintln!("{}", row(s, report::table::standing_in(&doc, s)));
        }
    }
    print_verdict(&doc);
    if let Some(dir) = &opts.out {
        write_reports(&doc, dir)?;
    }
    Ok(doc)
}

/// An arm's name in the terminal's first column.
pub(crate) fn arm_cell(a: &str) -> String {
    match a.chars().count() > 12 {
        true => a.chars().take(11).collect::<String>() + "…",
        false => a.to_string(),
    }
}

/// Sorts the steps by level, analyses them and records the end of the run: the ladder
/// document, and whether the levels ran out of order.
pub(crate) fn conclude(run: Run) -> anyhow::Result<(LadderDoc, bool)> {
    let Run {
        cfg,
        opts,
        history,
        id,
        environment,
        steps,
        causes,
        repeats,
        interrupted,
        label,
    } = run;
    let mut pairs: Vec<(StepResult, Option<StepCause>)> = steps.into_iter().zip(causes).collect();
    let run_order: Vec<usize> = pairs.iter().map(|(s, _)| s.concurrency).collect();
    pairs.sort_by_key(|(s, _)| s.concurrency);
    let reordered = pairs.iter().map(|(s, _)| s.concurrency).ne(run_order);
    let (steps, causes): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
    // A level is judged by most of its runs: a flaky first run gives way to the repeats.
    let (steps, causes, repeats) =
        analysis::line::representatives(steps, causes, repeats, &opts.budget);
    let projection = analysis::ladder::Projection {
        host: opts.host,
        target: opts.target,
    };
    let analysis = analysis::ladder::analyse(
        &steps,
        &repeats,
        &causes,
        &opts.budget,
        projection,
        interrupted,
    );
    if let (Some(h), Some(id)) = (&history, id) {
        h.finish_run(
            id,
            if interrupted { "interrupted" } else { "done" },
            &analysis,
        )?;
    }
    let mut environment = environment;
    // How the SUT was held to its cores is known once a step has run.
    if let (Some(p), Some(e)) = (
        steps.first().and_then(|s| s.partition.as_ref()),
        environment.partition.as_mut(),
    ) {
        e.method = p.method.clone();
    }
    let doc = LadderDoc {
        schema_version: 1,
        run: id,
        config: cfg.file.display().to_string(),
        environment: RunEnvironment::Run(Box::new(environment)),
        interrupted: Some(interrupted),
        steps,
        repeats,
        analysis: Some(RunAnalysis::Ladder(Box::new(analysis))),
        arm: label.clone(),
        variant: label
            .as_ref()
            .map(|_| cfg.arm.clone().unwrap_or_else(|| "sut".into())),
        replicas: label.as_ref().map(|_| cfg.replicas),
        ..LadderDoc::default()
    };
    Ok((doc, reordered))
}

/// Writes `result.json`, `report.md` and `report.html` for a ladder document (fresh or from history).
pub fn write_reports(doc: &LadderDoc, dir: &std::path::Path) -> anyhow::Result<()> {
    let md = report::markdown::ladder(doc);
    let html = report::html::render(doc);
    write_files(
        dir,
        &result::to_file_json(&words::json::ladder(doc)),
        &md,
        &html,
    )
}

/// `result.json`, `report.md` and `report.html` into `dir`, said on the terminal.
pub(crate) fn write_files(
    dir: &std::path::Path,
    json: &str,
    md: &str,
    html: &str,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("result.json"), json)?;
    std::fs::write(dir.join("report.md"), md)?;
    std::fs::write(dir.join("report.html"), html)?;
    eprintln!(
        "wrote {0}/result.json, {0}/report.md and {0}/report.html",
        dir.display()
    );
    Ok(())
}

/// A ladder re-read from the history: its table by level and its verdict on the terminal,
/// the files in `out`.
pub fn rerender(mut doc: LadderDoc, out: Option<&std::path::Path>) -> anyhow::Result<LadderDoc> {
    // The history keeps every run in order: a level's later runs are its repeats.
    let mut seen = std::collections::BTreeSet::new();
    let (firsts, again): (Vec<StepResult>, Vec<StepResult>) = std::mem::take(&mut doc.steps)
        .into_iter()
        .partition(|s| seen.insert(s.concurrency));
    doc.steps = firsts;
    doc.repeats.extend(again);
    doc.steps.sort_by_key(|s| s.concurrency);
    eprintln!("{}", header_for(&doc.steps));
    for s in &doc.steps {
        eprintln!("{}", row(s, report::table::standing_in(&doc, s)));
    }
    match &doc.analysis {
        None if doc.status.as_deref() == Some("failed") => eprintln!(
            "run {} failed: {}",
            doc.run.unwrap_or(0),
            doc.reason.as_deref().unwrap_or("no reason recorded")
        ),
        None => eprintln!(
            "run {} did not finish (status {}): the steps above are all it has",
            doc.run.unwrap_or(0),
            serde_json::to_string(&doc.status).unwrap_or_default()
        ),
        Some(RunAnalysis::CompareSide { compare_pair, side }) => eprintln!(
            "run {} is the {side} side of a comparison (the other side: run {compare_pair}); `plimsoll compare` writes its report",
            doc.run.unwrap_or(0)
        ),
        Some(RunAnalysis::Ladder(_)) => print_verdict(&doc),
    }
    if let Some(dir) = out {
        write_reports(&doc, dir)?;
    }
    Ok(doc)
}

/// Where Plimsoll ran and what it ran, with the budget: stored with every run.
fn environment(cfg: &Config, opts: &RampOptions) -> Environment {
    Environment {
        budget: Some(opts.budget.clone()),
        ..step::environment::describe(cfg, &opts.step)
    }
}

pub(crate) fn print_verdict(doc: &LadderDoc) {
    for line in report::verdict::verdict_lines(doc) {
        eprintln!("{line}");
    }
}
