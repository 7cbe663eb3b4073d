//! The ladder document (`result.json` of a ramp, a run re-read from the history): its
//! steps and what `analysis` read from them — the verdict against the budget, the
//! throughput knee and plateau, the wall, the latency knee, a USL fit, the capacity
//! projection, the SUT's log findings. Types only: `analysis` fills them, `report` reads
//! them.

use crate::budget::Breach;
use crate::environment::Environment;
use crate::kinds::{Confidence, Outcome, Standing, WallKind};
use crate::step::StepResult;
use serde::{Deserialize, Serialize};

pub use crate::usl::{Usl, UslNote, UslReading, UslRefusal};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LadderDoc {
    pub schema_version: u32,
    /// The history's run id (None: not recorded).
    pub run: Option<i64>,
    /// When it started and how it ended, for a run re-read from the history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Why a run the history holds as failed failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub config: String,
    pub environment: RunEnvironment,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<bool>,
    pub steps: Vec<StepResult>,
    /// The levels either side of the line run again (`--ladder auto`), to give the line
    /// its spread.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<StepResult>,
    /// None for a run the history holds unfinished.
    #[serde(default)]
    pub analysis: Option<RunAnalysis>,
    /// Among arms: this run's name (arm and replica count), its variant and replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<usize>,
    /// On a live page, the level still running (its figures are so far, not a whole
    /// step's): drawn apart from the finished ones, and no verdict is claimed while no
    /// level has finished. None in every finished run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<usize>,
}

impl LadderDoc {
    /// The ladder's analysis (None for an unfinished run or one side of a comparison).
    pub fn ladder(&self) -> Option<&LadderAnalysis> {
        match &self.analysis {
            Some(RunAnalysis::Ladder(a)) => Some(a),
            _ => None,
        }
    }

    /// The budget the run was judged by (None: a run recorded before budgets, or one side
    /// of a comparison).
    pub fn budget(&self) -> Option<&crate::budget::Budget> {
        self.environment.run()?.budget.as_ref()
    }

    /// A step's standing as the run's verdict recorded it (None for runs from before
    /// budgets).
    pub fn standing_of(&self, step: &StepResult) -> Option<Standing> {
        let v = self.ladder()?.verdict.as_ref()?;
        v.standings
            .iter()
            .find(|s| s.concurrency == step.concurrency)
            .map(|s| s.standing)
    }
}

/// Where the run happened: a ramp's or soak's full account, or the few words one side of
/// a comparison keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RunEnvironment {
    Run(Box<Environment>),
    CompareSide(CompareSideEnvironment),
}

impl Default for RunEnvironment {
    fn default() -> Self {
        RunEnvironment::Run(Box::default())
    }
}

impl RunEnvironment {
    pub fn run(&self) -> Option<&Environment> {
        match self {
            RunEnvironment::Run(e) => Some(e),
            RunEnvironment::CompareSide(_) => None,
        }
    }

    pub fn machine(&self) -> &str {
        match self {
            RunEnvironment::Run(e) => &e.machine,
            RunEnvironment::CompareSide(c) => &c.machine,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareSideEnvironment {
    /// "base" or "branch".
    pub compare: String,
    pub sut_command: String,
    pub machine: String,
}

/// What the history holds as a run's analysis: a ladder's, or, for one side of a
/// comparison, the run it was paired with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RunAnalysis {
    CompareSide { compare_pair: i64, side: String },
    Ladder(Box<LadderAnalysis>),
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LadderAnalysis {
    /// The last level without a collapse.
    pub ceiling: Option<usize>,
    #[serde(default)]
    pub ceiling_is_harness_bound: bool,
    pub collapse: Option<Collapse>,
    #[serde(default)]
    pub no_collapse: bool,
    /// Where throughput stops scaling (the reports mark it).
    pub knee: KneeReading,
    /// Where latency turns (Kneedle on latency inflation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_knee: Option<Knee>,
    pub usl: UslReading,
    /// None for runs recorded before budgets (they had only a ceiling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    pub capacity: Option<Capacity>,
    #[serde(default)]
    pub harness_bound_steps: Vec<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<Vec<LogFinding>>,
}

/// The first collapse: its level, outcome, why (with the SUT's last output under it
/// where the step kept one), and the agent worker's refusal where it refused the calls.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Collapse {
    pub concurrency: usize,
    pub outcome: Outcome,
    #[serde(default, deserialize_with = "crate::cause::legacy")]
    pub cause: Option<crate::cause::Cause>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_output: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<crate::wall::WorkerRefusal>,
}

/// The throughput knee as the reports mark it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum KneeReading {
    /// Throughput kept scaling up to the top level: no knee within the ladder.
    Scaling {
        confidence: Confidence,
        from: usize,
        to: usize,
    },
    Found(Knee),
    /// Too few levels to say.
    Insufficient {
        confidence: Confidence,
    },
}

impl Default for KneeReading {
    fn default() -> Self {
        KneeReading::Insufficient {
            confidence: Confidence::Insufficient,
        }
    }
}

/// A knee between two levels: of throughput (where one more session stops adding
/// throughput) or of latency (where inflation turns).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    pub from: f64,
    pub to: f64,
    pub confidence: Confidence,
    /// How it was found (none for a run recorded with a method this version does not know).
    #[serde(default, deserialize_with = "crate::facts::legacy::knee_method")]
    pub method: Option<crate::facts::KneeMethod>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The headline as the document read recorded it, kept as read: a run recorded before
    /// its wall was a fact, or a document written with its words (`words::json`).
    /// `words::headline::of` words a verdict from its facts and says this only where there
    /// are none. A verdict made now has none here, so none is stored.
    #[serde(rename = "headline", default, skip_serializing_if = "String::is_empty")]
    pub recorded_headline: String,
    /// What the ladder counts, sessions or calls: every sentence here says its levels so
    /// (written only for calls: a run recorded before it counted sessions).
    #[serde(default, skip_serializing_if = "crate::words::Unit::is_sessions")]
    pub unit: crate::words::Unit,
    /// The budgets judged (None in runs recorded when this was a sentence: their
    /// environment holds the budget).
    #[serde(default, deserialize_with = "crate::facts::legacy::option")]
    pub budget: Option<crate::Budget>,
    /// A voice budget one call's own pace set, where the user set none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced: Option<crate::facts::Paced>,
    /// The highest level within budget below the first level that is not.
    pub holds: Option<usize>,
    /// The first level over budget (not collapsed): its standing says what it broke.
    pub over_from: Option<usize>,
    /// Levels below `holds` that were over budget all the same.
    #[serde(default)]
    pub over_below: Vec<usize>,
    pub collapse: Option<usize>,
    pub top: Option<usize>,
    pub standings: Vec<LevelStanding>,
    pub plateau: Option<Plateau>,
    pub knee: Option<Knee>,
    pub wall: Wall,
    /// When even the first level is over budget: what a session costs there.
    #[serde(default, deserialize_with = "crate::facts::legacy::option")]
    pub first_level_cost: Option<crate::facts::FirstCost>,
    /// What makes the reading less certain (an unstable cost per turn).
    #[serde(default, deserialize_with = "crate::facts::legacy::list")]
    pub notes: Vec<crate::facts::Note>,
    /// The line with its spread, when the levels either side of it ran more than once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<Line>,
    /// What else the ladder shows: growth per session, a cold start, run-queue wait, a
    /// rate that needed checking, the agent worker's own reports.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::facts::legacy::list"
    )]
    pub findings: Vec<crate::facts::Finding>,
    /// The lines under the headline as a run recorded before its wall was a fact said
    /// them, kept as read (as `recorded_headline`).
    #[serde(rename = "lines", default, skip_serializing_if = "Vec::is_empty")]
    pub recorded_lines: Vec<Labelled>,
    /// The figures that grow with sessions, fitted (the charts draw the lines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub growth: Vec<GrowthFit>,
    /// What other processes took of the cores near the line, where measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<crate::facts::Machine>,
    /// Why the collapse's calls failed, where an agent worker refused them and the wall
    /// there does not say so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collapse_cause: Option<crate::wall::WorkerRefusal>,
}

/// A figure's robust line against the sessions: value = intercept + slope × sessions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GrowthFit {
    pub figure: FitFigure,
    pub slope: f64,
    pub intercept: f64,
    pub shape: FitShape,
}

/// The figure a growth line is fitted to (the chart it is drawn on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FitFigure {
    #[default]
    Threads,
    OpenFiles,
    Connections,
    KbPerSession,
    CpuMsPerTurn,
}

/// How a fitted figure grows with the sessions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FitShape {
    #[default]
    #[serde(rename = "linear")]
    Linear,
    #[serde(rename = "super-linear")]
    SuperLinear,
}

/// One level against the budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelStanding {
    pub concurrency: usize,
    pub standing: Standing,
    #[serde(default)]
    pub breaches: Vec<Breach>,
    /// Turns/s gained per session added since the level before (not for the first level
    /// or a collapsed one), and that as a share of what one session gave at the first.
    #[serde(default)]
    pub gain_per_session: Option<f64>,
    #[serde(default)]
    pub gain_share: Option<f64>,
}

/// Where throughput stops growing at all.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    /// The first level of the plateau.
    pub from: f64,
    pub turns_per_s: f64,
    /// Levels on the plateau (2: flat over one step; 3 or more: clear).
    pub levels: usize,
    pub confidence: Confidence,
    /// Throughput falls after its peak (more sessions, less work done).
    pub retrograde: bool,
    /// The highest level of the plateau: (sessions, turns/s).
    pub peak: (f64, f64),
    /// The peak stands out from the plateau: said beside it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub peak_said: bool,
}

impl crate::wall::Flat {
    /// A plateau as a wall cites it: its peak kept where it stands out.
    pub fn of(p: &Plateau) -> Self {
        Self {
            from: p.from,
            turns_per_s: p.turns_per_s,
            peak: p.peak_said.then_some(p.peak),
        }
    }
}

/// What hit its wall first, and from which level.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Wall {
    pub kind: WallKind,
    pub from: Option<f64>,
    /// What was read, with its figures (`words::wall` says it). None in a run recorded
    /// before walls were facts, and for a reading not yet typed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fact: Option<crate::wall::WallFact>,
    /// What the reading adds, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<crate::wall::WallAlso>,
    /// The wall in words as a run recorded before walls were facts said it, kept as
    /// read; `words::wall::text` says it only for a wall with no fact. A wall read now
    /// has none here (a document written carries `text` and `short` beside the facts,
    /// `words::json`).
    #[serde(rename = "text", default, skip_serializing_if = "String::is_empty")]
    pub recorded_text: String,
    /// The wall in a few words as such a run recorded them, for its headline.
    #[serde(rename = "short", default, skip_serializing_if = "String::is_empty")]
    pub recorded_short: String,
}

/// The line with its spread: the levels either side of it run more than once, the range
/// of levels that hold, and how it is crossed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// The highest level that held in most of its runs (the runs agree there), and the
    /// highest that held in any.
    pub low: usize,
    pub high: usize,
    /// Each level run more than once: how many of its runs held.
    pub runs: Vec<LevelRuns>,
    /// How the binding figure crosses the line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boundary: Option<crate::facts::Boundary>,
    /// The budget broken beyond the line (or the collapse).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::facts::legacy::option"
    )]
    pub binding: Option<crate::facts::Binding>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelRuns {
    pub concurrency: usize,
    pub held: u32,
    pub of: u32,
}

/// One line under the headline: what it is about, and the fact.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Labelled {
    pub label: String,
    pub text: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    pub host_mem_gb: f64,
    pub host_cpus: f64,
    /// Infinite (null) when a session costs nothing measurable of it.
    #[serde(deserialize_with = "crate::serde_util::infinite_f64_if_null")]
    pub sessions_per_host_by_memory: f64,
    #[serde(deserialize_with = "crate::serde_util::infinite_f64_if_null")]
    pub sessions_per_host_by_cpu: f64,
    #[serde(deserialize_with = "crate::serde_util::infinite_f64_if_null")]
    pub sessions_per_host: f64,
    pub target: Option<u64>,
    pub hosts: Option<u64>,
    /// What one session cost at the step the projection stands on (`words::capacity`
    /// says the arithmetic from it). None in a run recorded before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_session: Option<SessionCost>,
    /// The arithmetic in words as such a run recorded it, kept as read (a document
    /// written now carries `working` made from the facts, `words::json`).
    #[serde(rename = "working", default, skip_serializing_if = "Vec::is_empty")]
    pub recorded_working: Vec<String>,
    /// The LLM provider's bill per hour for the target's sessions (a host's, without a
    /// target) at the cost per turn measured at the line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_bill_per_hour: Option<f64>,
    /// What the bill was reckoned from, where it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bill: Option<BillBasis>,
}

impl Capacity {
    /// The share of a host a projection counts on: the one place it is decided.
    pub const USABLE: f64 = 0.8;

    /// The host's memory a projection counts on, in KB.
    pub fn usable_mem_kb(&self) -> f64 {
        self.host_mem_gb * 1024.0 * 1024.0 * Self::USABLE
    }

    /// The host's CPU a projection counts on, in CPU ms a second.
    pub fn usable_cpu_ms_per_s(&self) -> f64 {
        self.host_cpus * 1000.0 * Self::USABLE
    }
}

/// One session's cost where capacity is projected from: its memory (PSS where read,
/// RSS else), the CPU a turn took, and the turns it asks for a second.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionCost {
    pub mem_kb: f64,
    pub cpu_ms_per_turn: f64,
    pub turns_per_s: f64,
}

impl SessionCost {
    /// The CPU one session asks for, in CPU ms a second.
    pub fn cpu_ms_per_s(&self) -> f64 {
        self.cpu_ms_per_turn * self.turns_per_s
    }
}

/// The provider's price of a turn as measured at the line, in its currency, with the
/// date of the price list.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BillBasis {
    pub currency: String,
    pub per_turn: f64,
    pub prices_date: String,
}

/// One kind of the SUT's log lines across the ladder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogFinding {
    pub level: String,
    pub message: String,
    pub example: String,
    /// The lowest level (sessions) where it appeared.
    pub first_at: usize,
    pub count_at_first: u64,
    /// Whether the lowest level of the ladder had it too (then it is not load's doing).
    pub at_lowest: bool,
    /// A level below `first_at` logged more kinds than its RESULT keeps: "none below"
    /// cannot be said, only "not among the kinds kept below".
    pub below_cut: bool,
    /// (sessions, count) for every level where it appeared.
    pub levels: Vec<(usize, u64)>,
}
