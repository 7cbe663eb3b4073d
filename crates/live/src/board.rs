//! What the live view shows, as the run writes it: the run, the level it is at with each
//! second's figures (a [`Tick`]), the steps it finished and the final document. Written
//! by the run, read by the page and the metrics; every read is a copy taken under a lock
//! held for no longer than the copy. What it records is also sent, as it happens, to the
//! run's events file when it has one (`--events`, [`crate::events`]).

use crate::events::Events;
use result::ladder::LadderDoc;
pub use result::live::Tick;
use result::words::Unit;
use result::StepResult;
use std::sync::{Arc, Mutex};

/// The level a run is at.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Level {
    pub concurrency: usize,
    /// Run again (the line confirmed, or a busy machine's level).
    pub again: bool,
    /// Its first second and its latest ones (at most [`KEPT`]): what the view reads, however
    /// long the level runs (a soak's is hours).
    pub ticks: Vec<Tick>,
    /// The most RSS (bytes) and threads of any second so far.
    pub peak_rss_bytes: u64,
    pub peak_threads: u64,
}

/// The latest seconds a level keeps beside its first.
pub const KEPT: usize = 10;

/// The whole of what the view shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State {
    /// The run's name on the page and in every metric's `run` label.
    pub run: String,
    pub unit: Unit,
    /// The arm being run, when the config has arms.
    pub arm: Option<String>,
    /// This driver's shard of the run (index, count), when the step is sharded.
    pub shard: Option<(usize, usize)>,
    /// The cores the SUT may use (its cap), when known.
    pub cap_cores: Option<f64>,
    /// The config file, as the report names it.
    pub config: String,
    /// What "holds" means: the verdict so far is judged by it.
    pub budget: analysis::Budget,
    pub level: Option<Level>,
    /// Finished steps, in the order they ran, with their standing and arm.
    pub steps: Vec<Finished>,
    /// The documents of the whole run once it ended (one, or one an arm).
    pub done: Option<Vec<LadderDoc>>,
    /// A soak's document so far: its series and the leak verdict over it.
    pub soak: Option<Box<result::soak::SoakDoc>>,
}

/// A finished step as the view keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    pub result: StepResult,
    pub standing: String,
    pub arm: Option<String>,
    pub again: bool,
    /// How many times this level (of this arm) ran before: 0 for its first run.
    pub repeat: usize,
}

/// The board: shared by the run that writes it and the server that reads it, and the
/// events file it sends what it records to.
#[derive(Clone, Debug, Default)]
pub struct Board(Arc<Mutex<State>>, Option<Arc<Events>>);

impl Board {
    pub fn new(run: &str, config: &str, unit: Unit, budget: &analysis::Budget) -> Board {
        Board(
            Arc::new(Mutex::new(State {
                run: run.into(),
                config: config.into(),
                unit,
                budget: budget.clone(),
                ..State::default()
            })),
            None,
        )
    }

    /// The board sending what it records to `events` too, from the run's start.
    pub fn with_events(mut self, events: Events) -> Board {
        let s = self.state();
        events.run(&s.run, &s.config, s.unit.many());
        self.1 = Some(Arc::new(events));
        self
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// A copy of what the view shows now.
    pub fn state(&self) -> State {
        self.with(|s| s.clone())
    }

    /// The cores the SUT may use, once the cap is made.
    pub fn cap(&self, cores: Option<f64>) {
        self.with(|s| s.cap_cores = cores);
    }

    /// This driver is shard `index` of `count`.
    pub fn shard(&self, index: usize, count: usize) {
        self.with(|s| s.shard = Some((index, count)));
    }

    /// The arm the next levels belong to (None: no arms).
    pub fn arm(&self, arm: Option<&str>) {
        self.with(|s| s.arm = arm.map(String::from));
    }

    /// A level begins.
    pub fn level(&self, concurrency: usize, again: bool) {
        let arm = self.with(|s| {
            s.level = Some(Level {
                concurrency,
                again,
                ..Level::default()
            });
            s.arm.clone()
        });
        if let Some(e) = &self.1 {
            e.level(arm.as_deref(), concurrency, again);
        }
    }

    /// A second of the level that is running.
    pub fn tick(&self, t: Tick) {
        // The events file gets the second too, sent after the board's lock is let go.
        let sent = self.1.as_ref().map(|_| t.clone());
        let at = self.with(|s| {
            let arm = s.arm.clone();
            let l = s.level.as_mut()?;
            // A level run afresh (its machine was busy) starts its seconds again.
            if l.ticks.last().is_some_and(|last| t.t_s < last.t_s) {
                l.ticks.clear();
                (l.peak_rss_bytes, l.peak_threads) = (0, 0);
            }
            l.peak_rss_bytes = l.peak_rss_bytes.max(t.rss_bytes);
            l.peak_threads = l.peak_threads.max(t.threads);
            l.ticks.push(t);
            if l.ticks.len() > KEPT + 1 {
                l.ticks.remove(1);
            }
            Some((arm, l.concurrency))
        });
        if let (Some(e), Some(t), Some((arm, level))) = (&self.1, sent, at) {
            e.second(arm.as_deref(), level, &t);
        }
    }

    /// The level that was running finished as `result`, standing so against the budget.
    pub fn step(&self, result: &StepResult, standing: &str) {
        let (arm, again) = self.with(|s| {
            let again = s.level.take().is_some_and(|l| l.again);
            let repeat = s
                .steps
                .iter()
                .filter(|f| f.arm == s.arm && f.result.concurrency == result.concurrency)
                .count();
            s.steps.push(Finished {
                result: result.clone(),
                standing: standing.into(),
                arm: s.arm.clone(),
                again,
                repeat,
            });
            (s.arm.clone(), again)
        });
        if let Some(e) = &self.1 {
            e.step(arm.as_deref(), result, standing, again);
        }
    }

    /// A soak's document so far (each sample), or its last.
    pub fn soak(&self, doc: &result::soak::SoakDoc) {
        self.with(|s| s.soak = Some(Box::new(doc.clone())));
        if let Some(e) = &self.1 {
            e.soak(doc);
        }
    }

    /// The run ended with these documents (one, or one an arm). A shard has none of its
    /// own (its figures come together in the merge): its level stays, with its last second.
    pub fn done(&self, docs: &[LadderDoc]) {
        self.with(|s| {
            if !docs.is_empty() {
                s.level = None;
            }
            s.done = Some(docs.to_vec());
        });
        if let Some(e) = &self.1 {
            e.done(docs);
        }
    }
}

impl State {
    /// What a collector tells this driver's figures apart by: the run, and its shard.
    pub fn instance(&self) -> String {
        match self.shard {
            Some((i, n)) => format!("{}-shard-{i}-of-{n}", self.run),
            None => self.run.clone(),
        }
    }

    /// The level running now as a step so far — its figures over the seconds it has run —
    /// for the report's charts to place beside the finished steps.
    pub fn provisional(&self) -> Option<StepResult> {
        let l = self.level.as_ref()?;
        let last = l.ticks.last()?;
        let first = l.ticks.first()?;
        let span = last.t_s - first.t_s;
        let rate = |a: f64, b: f64| (span > 0.0).then(|| (b - a) / span);
        let cores = rate(first.cpu_sec, last.cpu_sec).filter(|_| !last.unsampled);
        let peak = l.peak_rss_bytes;
        let held = peak.saturating_sub(last.baseline_rss_bytes) as f64 / 1024.0;
        Some(StepResult {
            schema_version: 1,
            concurrency: l.concurrency,
            sessions_ok: last.sessions_ok,
            sessions_failed: last.sessions_failed,
            turns: last.turns,
            wall_ms: last.t_s * 1000.0,
            turns_per_s: rate(first.turns as f64, last.turns as f64),
            peak_rss_mb: peak as f64 / 1048576.0,
            baseline_rss_mb: last.baseline_rss_bytes as f64 / 1048576.0,
            rss_kb_per_session: held / l.concurrency.max(1) as f64,
            cpu_ms_per_turn: (last.turns > 0 && !last.unsampled)
                .then(|| last.cpu_sec * 1000.0 / last.turns as f64),
            peak_threads: l.peak_threads,
            cpu_sec: last.cpu_sec,
            cpu_cores: self.cap_cores,
            cpu_of_cap: cores.zip(self.cap_cores).map(|(c, cap)| c / cap),
            ..StepResult::default()
        })
    }

    /// The documents to show: the run's own once it ended; before, the steps so far of
    /// the arm running (first runs only) with the verdict of the finished ones and the
    /// level running now beside them — none while no step has finished or run a second.
    pub fn so_far(&self) -> Vec<LadderDoc> {
        if let Some(d) = self.done.as_ref().filter(|d| !d.is_empty()) {
            return d.clone();
        }
        let arm = self.arm.clone();
        let mut steps: Vec<StepResult> = self
            .steps
            .iter()
            .filter(|f| !f.again && f.arm == arm)
            .map(|f| f.result.clone())
            .collect();
        steps.sort_by_key(|s| s.concurrency);
        let analysis = (!steps.is_empty()).then(|| {
            let causes = vec![None; steps.len()];
            let a = analysis::ladder::analyse(
                &steps,
                &[],
                &causes,
                &self.budget,
                analysis::ladder::Projection::default(),
                false,
            );
            result::ladder::RunAnalysis::Ladder(Box::new(a))
        });
        let now = self.provisional();
        if steps.is_empty() && now.is_none() {
            return Vec::new();
        }
        let running = now.as_ref().map(|s| s.concurrency);
        steps.extend(now);
        vec![LadderDoc {
            schema_version: 1,
            config: self.config.clone(),
            steps,
            analysis,
            arm,
            running,
            ..LadderDoc::default()
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tick(t_s: f64, turns: u64, cpu_sec: f64) -> Tick {
        Tick {
            t_s,
            turns,
            cpu_sec,
            rss_bytes: 20 << 20,
            threads: 3,
            ..Tick::default()
        }
    }

    #[test]
    fn the_running_level_is_a_step_so_far_beside_the_finished_ones() {
        let b = Board::new(
            "r",
            "plimsoll.toml",
            Unit::Call,
            &analysis::Budget::default(),
        );
        b.cap(Some(1.0));
        assert!(b.state().so_far().is_empty());
        b.level(2, false);
        b.tick(tick(1.0, 10, 0.5));
        b.tick(tick(3.0, 30, 1.5));
        let now = b.state().provisional().expect("a level with two seconds");
        assert_eq!((now.concurrency, now.turns), (2, 30));
        // Nothing finished: the level so far, marked running, and nothing judged.
        let first = &b.state().so_far()[0];
        assert_eq!((first.running, first.ladder().is_none()), (Some(2), true));
        let body = report::html::body(first);
        assert!(
            body.contains("Verdict:</b> none yet — the first level is running"),
            "{body}"
        );
        assert!(
            !body.contains("ceiling") && body.contains(r#"class="running""#),
            "{body}"
        );
        assert_eq!(now.turns_per_s, Some(10.0));
        assert_eq!(now.cpu_of_cap, Some(0.5));
        assert_eq!(now.peak_rss_mb, 20.0);
        // Finished, it is its RESULT; the next level runs beside it.
        let done = StepResult {
            concurrency: 2,
            turns: 40,
            ..now.clone()
        };
        b.step(&done, "holds");
        b.level(4, false);
        b.tick(tick(1.0, 5, 0.1));
        b.tick(tick(2.0, 25, 0.9));
        let docs = b.state().so_far();
        let levels: Vec<usize> = docs[0].steps.iter().map(|s| s.concurrency).collect();
        assert_eq!(levels, vec![2, 4]);
        assert_eq!(docs[0].steps[0].turns, 40);
        assert_eq!(docs[0].running, Some(4));
        assert!(docs[0].ladder().is_some_and(|a| a.verdict.is_some()));
        // However long it runs, a level keeps its first second and its latest.
        for i in 3..100 {
            b.tick(tick(i as f64, 25 + i, 0.9));
        }
        let kept = b.state().level.unwrap().ticks;
        assert_eq!(kept.len(), KEPT + 1);
        assert_eq!((kept[0].t_s, kept[KEPT].t_s), (1.0, 99.0));
        // A level begun afresh starts its seconds again.
        b.tick(tick(0.5, 1, 0.0));
        assert_eq!(b.state().level.unwrap().ticks.len(), 1);
        // Ended: the run's own documents.
        b.done(&[LadderDoc::default()]);
        let s = b.state();
        assert!(s.level.is_none() && s.so_far().len() == 1);
        assert_eq!(s.so_far()[0].running, None);
    }
}
