//! `plimsoll soak`: one SUT held under steady load for a long time — sessions ending and
//! new ones starting, so what each leaves behind adds up — then a drain with no load; its
//! process tree sampled into the history as the soak goes (an interrupted soak keeps its
//! series), then a leak verdict per resource (`analysis::leak`) and the reports.
//! Running one step is `step`'s business; the statistics are `analysis`'s.

use anyhow::Context;
use experiment::Config;
use result::environment::{Environment, SoakPlan as PlanDoc};
use result::soak::{SoakAnalysis, SoakDoc};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use step::{SoakPlan, SoakSample, StepOptions};

#[derive(Clone, Debug)]
pub struct SoakOptions {
    /// The step: concurrency, cap, partition, session file, rate.
    pub step: StepOptions,
    pub duration: Duration,
    pub drain: Duration,
    pub every: Duration,
    /// The first part of the load phase left out of the verdict (warming caches, JIT).
    pub warmup: Duration,
    pub history: Option<PathBuf>,
    pub out: Option<PathBuf>,
    /// A live view's board: the series so far and its verdict, a sample at a time.
    pub live: Option<live::Board>,
}

/// A soak stopped by an error: recorded as failed with its reason, never left `running`.
fn failed(history: &Mutex<Option<store::History>>, id: Option<i64>, e: &anyhow::Error) {
    if let (Some(h), Some(id)) = (&*history.lock().unwrap_or_else(|p| p.into_inner()), id) {
        if let Err(w) = h.fail_run(id, &format!("{e:#}")) {
            eprintln!("warning: could not record soak {id} as failed: {w:#}");
        }
    }
}

/// Runs the soak; the document every report is made from.
pub async fn run_soak(cfg: &Config, opts: &SoakOptions) -> anyhow::Result<SoakDoc> {
    let environment = Environment {
        kind: Some("soak".into()),
        // The plan goes in with the start, so a killed soak is judged as it was meant.
        plan: Some(plan_doc(cfg, opts)),
        ..step::environment::describe(cfg, &opts.step)
    };
    let history = opts
        .history
        .as_deref()
        .map(store::History::open)
        .transpose()?;
    let started = step::now_rfc3339();
    let id = match &history {
        Some(h) => Some(h.start_run(&started, &cfg.file.display().to_string(), &environment)?),
        None => None,
    };
    let history = Arc::new(Mutex::new(history));
    let series: Arc<Mutex<Vec<SoakSample>>> = Arc::default();
    let so_far = opts.live.clone().map(|board| SoFar {
        board,
        doc: document(
            cfg,
            opts,
            Environment::default(),
            &started,
            id,
            Vec::new(),
            None,
            false,
        ),
        warmup_s: opts.warmup.as_secs_f64(),
    });
    let plan = plan(opts, (history.clone(), id), series.clone(), so_far);
    let mut step_opts = opts.step.clone();
    step_opts.soak = Some(plan);
    step_opts.progress = false; // the soak prints its own line a sample
    let outcome = step::start(cfg, &step_opts, step::Start::default())
        .await
        .context("the soak's step")
        .inspect_err(|e| failed(&history, id, e))?;
    let interrupted = outcome.is_none();
    if interrupted {
        eprintln!("\ninterrupted: the series so far is kept and judged; the SUT was stopped");
    }
    let series = std::mem::take(&mut *series.lock().unwrap_or_else(|p| p.into_inner()));
    let doc = document(
        cfg,
        opts,
        environment,
        &started,
        id,
        series,
        outcome.map(|o| o.result),
        interrupted,
    );
    if let (Some(h), Some(id)) = (&*history.lock().unwrap_or_else(|p| p.into_inner()), id) {
        if let Some(r) = &doc.result {
            h.add_step(id, 0, r)?;
        }
        h.finish_run(
            id,
            if interrupted { "interrupted" } else { "done" },
            &doc.analysis,
        )?;
    }
    if let Some(dir) = &opts.out {
        write_reports(&doc, dir)?;
    }
    if let Some(b) = &opts.live {
        b.soak(&doc);
    }
    Ok(doc)
}

type Shared<T> = Arc<Mutex<T>>;

/// The soak's plan for its step: each sample stored in the history (run `id`), said on
/// the terminal, kept in `series`, and shown live when a view watches.
fn plan(
    opts: &SoakOptions,
    (history, id): (Shared<Option<store::History>>, Option<i64>),
    series: Shared<Vec<SoakSample>>,
    so_far: Option<SoFar>,
) -> SoakPlan {
    SoakPlan {
        duration: opts.duration,
        drain: opts.drain,
        every: opts.every,
        on_sample: Arc::new(move |s: &SoakSample| {
            if let (Some(h), Some(id)) = (&*history.lock().unwrap_or_else(|p| p.into_inner()), id) {
                if let Err(e) = h.add_sample(id, s) {
                    eprintln!("soak: could not store a sample in the history: {e}");
                }
            }
            progress_line(s);
            let mut all = series.lock().unwrap_or_else(|p| p.into_inner());
            all.push(s.clone());
            if let Some(v) = &so_far {
                v.show(&all);
            }
        }),
    }
}

/// What a live view shows of a soak while it runs: its document with the series so far.
struct SoFar {
    board: live::Board,
    doc: SoakDoc,
    warmup_s: f64,
}

impl SoFar {
    fn show(&self, series: &[SoakSample]) {
        self.board.soak(&SoakDoc {
            status: "running".into(),
            series: series.to_vec(),
            analysis: judged(series, self.warmup_s),
            ..self.doc.clone()
        });
    }
}

#[allow(clippy::too_many_arguments)]
fn document(
    cfg: &Config,
    opts: &SoakOptions,
    environment: Environment,
    started: &str,
    id: Option<i64>,
    series: Vec<SoakSample>,
    result: Option<step::StepResult>,
    interrupted: bool,
) -> SoakDoc {
    let analysis = judged(&series, opts.warmup.as_secs_f64());
    SoakDoc {
        schema_version: 1,
        kind: "soak".into(),
        run: id,
        started: started.to_string(),
        config: cfg.file.display().to_string(),
        environment,
        status: if interrupted { "interrupted" } else { "done" }.into(),
        plan: plan_doc(cfg, opts),
        result,
        series,
        analysis,
        steps: None,
    }
}

fn plan_doc(cfg: &Config, opts: &SoakOptions) -> PlanDoc {
    PlanDoc {
        concurrency: opts.step.concurrency.unwrap_or(cfg.concurrency),
        rate: opts.step.rate,
        duration_s: opts.duration.as_secs_f64(),
        drain_s: opts.drain.as_secs_f64(),
        every_s: opts.every.as_secs_f64(),
        warmup_s: opts.warmup.as_secs_f64(),
    }
}

/// A line per sample on a terminal: where the soak is and what the SUT holds.
fn progress_line(s: &SoakSample) {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        eprint!(
            "\r\x1b[2K{} {:>6.0} s  RSS {:>8.1} MB  threads {:>5}  fds {:>5}  sessions done {:>7}",
            s.phase,
            s.t_s,
            s.rss_kb as f64 / 1024.0,
            s.threads,
            s.fds,
            s.sessions_done
        );
    }
}

/// Writes `soak.json`, `soak.md` and `soak.html`.
pub fn write_reports(doc: &SoakDoc, dir: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(
        dir.join("soak.json"),
        result::to_file_json(&words::json::soak(doc)),
    )?;
    std::fs::write(dir.join("soak.md"), report::soak::markdown(doc))?;
    std::fs::write(dir.join("soak.html"), report::soak::html(doc))?;
    eprintln!(
        "wrote {0}/soak.json, {0}/soak.md and {0}/soak.html",
        dir.display()
    );
    Ok(())
}

/// The leak verdicts of a series.
fn judged(series: &[SoakSample], warmup_s: f64) -> SoakAnalysis {
    analysis::leak::soak(series, warmup_s)
}

/// What the history holds of a soak: its run (with the environment and plan it started
/// with) and its one step.
#[derive(serde::Deserialize)]
pub struct Stored {
    pub run: Option<i64>,
    #[serde(default)]
    pub started: String,
    pub config: String,
    pub environment: Environment,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub steps: Vec<step::StepResult>,
}

/// A stored soak again: its series from the history, judged anew (the same verdict).
pub fn from_history(h: &store::History, run: i64, stored: Stored) -> anyhow::Result<SoakDoc> {
    let series: Vec<SoakSample> = h.samples(run)?;
    let plan = stored.environment.plan.clone().unwrap_or_default();
    let analysis = judged(&series, plan.warmup_s);
    Ok(SoakDoc {
        schema_version: 1,
        kind: "soak".into(),
        run: stored.run,
        started: stored.started,
        config: stored.config,
        environment: stored.environment,
        status: stored.status,
        plan,
        result: stored.steps.first().cloned(),
        series,
        analysis,
        steps: Some(stored.steps),
    })
}
