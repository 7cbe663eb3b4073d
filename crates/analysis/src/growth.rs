//! What grows with every session, fitted across a ladder's levels: threads, open files,
//! connections, memory per session, CPU per turn against the sessions in flight. A robust
//! line through each (Theil–Sen: the median of the pairwise slopes, an outlier level
//! cannot tilt it) says how much a session adds; its shape says whether it is flat,
//! linear, or super-linear (the upper levels' slope well above the lower's). A material
//! slope is a finding in its own right ("threads grow 3.0 per session"), and where the box
//! has a limit (threads, open files) the slope says at how many sessions it runs out.

use crate::binds::Growth;
use result::facts::{CountGrowth, Finding, Held, Limit, Resource, Rising, RisingFigure};
use result::ladder::{FitFigure, FitShape};
use result::words::Unit;
use result::{BoxLimits, StepResult};

/// A slope this many times the lower levels' over the upper ones: super-linear.
const SUPER: f64 = 1.5;

/// How a figure grows with sessions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    Flat,
    Linear,
    SuperLinear,
    /// Growing over the lower levels, flat over the upper: a bounded pool filling up
    /// (anyio's 40 threads), not a cost per session.
    LevelsOff,
}

/// A robust line through (sessions, value) points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// Per session added.
    pub slope: f64,
    pub intercept: f64,
    pub shape: Shape,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The median of the pairwise slopes (points at the same x left out).
pub(crate) fn theil_sen(p: &[(f64, f64)]) -> Option<f64> {
    let mut slopes = Vec::new();
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            let dx = p[j].0 - p[i].0;
            if dx.abs() > 1e-9 {
                slopes.push((p[j].1 - p[i].1) / dx);
            }
        }
    }
    median(slopes)
}

/// The line through the points (sorted by sessions inside), with its shape: flat when
/// the whole growth over the ladder is under `material` per session × the sessions
/// spanned; super-linear when the upper half's slope is `SUPER` times the lower half's.
pub fn fit(points: &[(f64, f64)], material: f64) -> Option<Fit> {
    let mut p = points.to_vec();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    if p.len() < 3 {
        return None;
    }
    let slope = theil_sen(&p)?;
    let intercept = median(p.iter().map(|(x, y)| y - slope * x).collect())?;
    let half = p.len() / 2;
    let (lo, hi) = (theil_sen(&p[..=half]), theil_sen(&p[half..]));
    let shape = if slope < material {
        Shape::Flat
    } else if let (Some(l), Some(h)) = (lo, hi) {
        if h < material && l >= material && p.len() >= 4 {
            Shape::LevelsOff
        } else if h > SUPER * l.max(material) {
            Shape::SuperLinear
        } else {
            Shape::Linear
        }
    } else {
        Shape::Linear
    };
    Some(Fit {
        slope,
        intercept,
        shape,
    })
}

/// The levels that did not collapse, first runs only: (sessions, the figure).
fn points(steps: &[StepResult], f: impl Fn(&StepResult) -> Option<f64>) -> Vec<(f64, f64)> {
    steps
        .iter()
        .filter(|s| s.outcome.is_ok())
        .filter_map(|s| Some((s.concurrency as f64, f(s)?)))
        .collect()
}

/// What a slope of things held per session means.
fn held_per(slope: f64, turns: f64, u: Unit) -> Held {
    if u.is_calls() {
        // A call is open the whole time it lasts: what it holds, it holds while it lasts.
        return Held::WhileACallLasts;
    }
    if turns > 1.5 && (slope / turns - 1.0).abs() <= 0.2 {
        Held::PerTurnNeverReleased
    } else if (slope - 1.0).abs() <= 0.2 {
        Held::OnePerSession
    } else {
        Held::ManyPerSession
    }
}

/// A count still growing at the top of the ladder (not flat, not levelled off).
fn grows(f: &Fit) -> bool {
    matches!(f.shape, Shape::Linear | Shape::SuperLinear)
}

/// Where a count growing `fit` per session reaches `limit`.
fn runs_out(fit: &Fit, limit: Option<u64>) -> Option<f64> {
    let l = limit? as f64;
    (fit.slope > 0.0).then(|| (l - fit.intercept) / fit.slope)
}

/// Sessions within which running out of a count is worth a line even when each session
/// holds only what it is expected to: this many, or ten times the ladder's top level.
const NEAR: f64 = 1_000.0;

/// A count that grows per session, and what a session holds of it anyway.
struct Count {
    resource: Resource,
    /// Its figure in the ladder document's fits (the charts).
    figure: FitFigure,
    get: fn(&StepResult) -> Option<f64>,
    /// A slope under this is flat.
    material: f64,
    /// What every session of a network service holds (its client's socket, the one to
    /// the provider while a call is out): growth within it is the design, not a finding,
    /// unless the box runs out of them near the levels tested.
    expected: f64,
    limit: Option<u64>,
}

/// Whether a fitted growth is worth saying: beyond what a session is expected to hold
/// (by a quarter and `material`), or running out near the levels tested (see [`NEAR`]).
fn worth_saying(f: &Fit, c: &Count, top: f64) -> bool {
    let beyond = f.slope > c.expected * 1.25 + c.material && c.expected > 0.0;
    let soon = runs_out(f, c.limit).is_some_and(|n| n < NEAR.max(10.0 * top));
    c.expected == 0.0 || beyond || soon
}

/// A count's fit across the levels when its growth is worth saying, and the top level
/// that held a session (where the finding quotes it).
fn material<'s>(steps: &'s [StepResult], c: &Count) -> Option<(Fit, &'s StepResult)> {
    let top = steps.iter().rfind(|s| s.outcome.is_ok())?;
    let f = fit(&points(steps, c.get), c.material)
        .filter(|f| grows(f) && worth_saying(f, c, top.concurrency as f64))?;
    Some((f, top))
}

/// A count that grows per session: threads, open files, connections, with where the box
/// runs out of it.
fn count_finding(steps: &[StepResult], c: &Count) -> Option<Growth> {
    let (f, top) = material(steps, c)?;
    let u = Unit::of(steps);
    let turns = top.turns as f64 / (top.sessions_ok + top.sessions_failed).max(1) as f64;
    let near = runs_out(&f, c.limit);
    Some(Growth {
        finding: Finding::Count(CountGrowth {
            resource: c.resource,
            unit: u,
            slope: f.slope,
            at_top: (c.get)(top).unwrap_or(0.0),
            top_level: top.concurrency,
            held: held_per(f.slope, turns, u),
            at_10k: f.intercept + f.slope * 10_000.0,
            limit: near.and(c.limit),
            runs_out_near: near,
        }),
        runs_out: near.map(|near| Limit {
            resource: c.resource,
            near,
        }),
    })
}

/// A figure per session or per turn that rises with the sessions.
fn rising(
    steps: &[StepResult],
    figure: RisingFigure,
    get: impl Fn(&StepResult) -> Option<f64>,
) -> Option<Finding> {
    let p = points(steps, &get);
    let (first, last) = (p.first()?, p.last()?);
    // Material: the fitted growth over the ladder is at least 30 % of where it began.
    rising_fit(steps, &get).map(|_| {
        Finding::Rising(Rising {
            figure,
            unit: Unit::of(steps),
            first: *first,
            last: *last,
        })
    })
}

/// Threads (none expected per session), open files (two a session: its client's socket
/// and one to the provider) and connections to peers (one a session, to the provider).
fn counts(limits: &BoxLimits) -> [Count; 3] {
    [
        Count {
            resource: Resource::Threads,
            figure: FitFigure::Threads,
            get: |s| Some(s.peak_threads as f64),
            material: 0.5,
            expected: 0.0,
            limit: limits.threads,
        },
        Count {
            resource: Resource::OpenFiles,
            figure: FitFigure::OpenFiles,
            get: |s| Some(s.peak_fds as f64),
            material: 1.0,
            expected: 2.0,
            limit: limits.open_files,
        },
        Count {
            resource: Resource::Connections,
            figure: FitFigure::Connections,
            get: |s| Some(s.connections.iter().map(|c| c.peak as f64).sum()),
            material: 0.5,
            expected: 1.0,
            limit: None,
        },
    ]
}

/// The findings of growth per session over a ladder (sorted by sessions).
pub fn findings(steps: &[StepResult]) -> Vec<Finding> {
    said(steps).into_iter().map(|g| g.finding).collect()
}

/// The same findings, each with where its resource runs out when the box limits it
/// (`binds::ranked` puts the nearest first).
pub fn said(steps: &[StepResult]) -> Vec<Growth> {
    let limits = steps
        .iter()
        .find_map(|s| s.limits.clone())
        .unwrap_or(BoxLimits::default());
    let [threads, files, conns] = counts(&limits);
    let rises = [
        // PSS where it was read (`StepResult::memory`), RSS else.
        rising(steps, RisingFigure::MemoryPerSession, |s| {
            Some(s.memory().1 * 1024.0).filter(|k| *k > 0.0)
        }),
        rising(steps, RisingFigure::CpuPerTurn, |s| s.cpu_ms_per_turn),
    ];
    [threads, files, conns]
        .iter()
        .filter_map(|c| count_finding(steps, c))
        .chain(rises.into_iter().flatten().map(Growth::said))
        .collect()
}

/// The material fits, for the charts to draw: counts that grow per session, figures per
/// session or per turn that rise.
pub fn fits(steps: &[StepResult]) -> Vec<result::ladder::GrowthFit> {
    type Get = fn(&StepResult) -> Option<f64>;
    let rising: [(FitFigure, Get); 2] = [
        (FitFigure::KbPerSession, |s| {
            Some(s.memory().1 * 1024.0).filter(|k| *k > 0.0)
        }),
        (FitFigure::CpuMsPerTurn, |s| s.cpu_ms_per_turn),
    ];
    let as_doc = |figure: FitFigure, f: Fit| result::ladder::GrowthFit {
        figure,
        slope: f.slope,
        intercept: f.intercept,
        shape: match f.shape {
            Shape::SuperLinear => FitShape::SuperLinear,
            _ => FitShape::Linear,
        },
    };
    let mut out: Vec<result::ladder::GrowthFit> = counts(&BoxLimits::default())
        .iter()
        .filter_map(|c| {
            let f = fit(&points(steps, c.get), c.material).filter(grows)?;
            Some(as_doc(c.figure, f))
        })
        .collect();
    for (name, get) in rising {
        if rising_fit(steps, get).is_some() {
            out.extend(fit(&points(steps, get), 0.0).map(|f| as_doc(name, f)));
        }
    }
    out
}

/// The fit of a figure that rises materially (30 % of where it began over the ladder).
fn rising_fit(steps: &[StepResult], get: impl Fn(&StepResult) -> Option<f64>) -> Option<Fit> {
    let p = points(steps, &get);
    let (first, last) = (p.first()?, p.last()?);
    let f = fit(&p, 0.0)?;
    (first.1 > 0.0 && f.slope * (last.0 - first.0) >= 0.3 * first.1).then_some(f)
}

/// Whether CPU per turn rises with the sessions (the wall then has a cause to name).
pub fn cpu_per_turn_rises(steps: &[StepResult]) -> bool {
    rising(steps, RisingFigure::CpuPerTurn, |s| s.cpu_ms_per_turn).is_some()
}

/// The SUT's threads per session, when they grow enough to be a finding: what makes a
/// turn dearer as sessions are added (more threads to schedule and switch between).
pub fn threads_per_session(steps: &[StepResult]) -> Option<f64> {
    let [threads, ..] = counts(&BoxLimits::default());
    material(steps, &threads).map(|(f, _)| f.slope)
}

#[cfg(test)]
#[path = "growth_tests.rs"]
mod tests;
