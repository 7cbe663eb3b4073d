//! Memory per session said in words when it is material, whatever the wall: a service that
//! keeps ~3 MB for each session in flight gets a CPU verdict when CPU stops it first, but
//! the memory a session holds decides how far a bigger CPU would take it — so it is said,
//! with where the memory cap would stop it and what stops it first.

use crate::binds::Growth;
use crate::growth::{fit, Shape};
use result::facts::{Finding, Limit, MemoryGrowth, Resource};
use result::ladder::Wall;
use result::words::Unit;
use result::{MemoryMeasure, StepResult, WallKind};

/// A session holding less than this (MB) is not worth a sentence.
pub const MATERIAL_MB: f64 = 0.5;
/// … nor is one whose sessions hold less than this share of the RSS at the top level.
const MATERIAL_SHARE: f64 = 0.25;

/// "memory grows 2.9 MB a session (RSS 88 → 298 MB from 5 to 80 sessions): the 1,024 MB
/// cap would hold about 320 sessions — CPU stops it first, at 20", when the memory grows
/// materially and linearly with the sessions and memory is not the wall already. The
/// memory is the tree's PSS where every level read it (a process per call forked from a
/// parent that loaded the models: their shared pages counted once, as the cap counts
/// them), its summed RSS otherwise; the sentence says which.
/// Said with where the memory cap runs out when there is one (for `binds::ranked`).
pub fn said(steps: &[StepResult], wall: &Wall) -> Option<Growth> {
    if wall.kind == WallKind::Memory {
        return None;
    }
    let (measure, ok) = peaks(steps);
    let points: Vec<(f64, f64)> = ok.iter().map(|(s, p)| (s.concurrency as f64, *p)).collect();
    let f = fit(&points, MATERIAL_MB)
        .filter(|f| matches!(f.shape, Shape::Linear | Shape::SuperLinear))?;
    let (&(first, first_peak), &(top, top_peak)) = (ok.first()?, ok.last()?);
    let held = f.slope * top.concurrency as f64;
    let u = Unit::of(steps);
    if f.slope < MATERIAL_MB || held < MATERIAL_SHARE * top_peak {
        return None;
    }
    let cap = ok
        .iter()
        .find_map(|(s, _)| s.cap.as_ref())
        .filter(|c| c.mem_mb > 0.0 && c.method != "affinity")
        .map(|c| (c.mem_mb, ((c.mem_mb - f.intercept) / f.slope).max(0.0)));
    Some(Growth {
        finding: Finding::Memory(MemoryGrowth {
            unit: u,
            mb_per_session: f.slope,
            measure,
            first: (first.concurrency, first_peak),
            top: (top.concurrency, top_peak),
            cap,
            at_1000_mb: f.intercept + f.slope * 1000.0,
            stopped_first: wall.from.map(|from| (wall.kind, from)),
        }),
        runs_out: cap.map(|(mb, near)| Limit {
            resource: Resource::MemoryCap { mb },
            near,
        }),
    })
}

/// What one more session costs in memory, as a ladder's line says it: `mb` a session by
/// `measure`; `over` the levels whose slope it is, None where it is one level's own figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionCost {
    pub measure: MemoryMeasure,
    pub mb: f64,
    pub over: Option<(usize, usize)>,
}

/// A session's memory at the line `at`: the slope of the peak (PSS where every level read
/// it, summed RSS otherwise) over the levels that did not collapse, where two or more did
/// and it rises — what each further session adds, which is what a cap pays for and what
/// the cgroup's own growth shows; a level's own figure (its peak over the memory before
/// the first session, ÷ its sessions) otherwise. That quotient carries what the first
/// session alone sets up: on the LiveKit worker's thread arm it read 44 MB a call where
/// the slope and the cgroup's anonymous pages both grew 14 (issue 62).
pub fn session_cost(steps: &[StepResult], at: usize) -> Option<SessionCost> {
    let (measure, ok) = peaks(steps);
    let points: Vec<(f64, f64)> = ok.iter().map(|(s, p)| (s.concurrency as f64, *p)).collect();
    let lo = ok.iter().map(|(s, _)| s.concurrency).min();
    let hi = ok.iter().map(|(s, _)| s.concurrency).max();
    let slope = crate::growth::theil_sen(&points).filter(|m| *m > 0.0);
    if let (Some(mb), Some(lo), Some(hi)) = (slope, lo, hi) {
        return Some(SessionCost {
            measure,
            mb,
            over: Some((lo, hi)),
        });
    }
    let s = steps.iter().find(|s| s.concurrency == at)?;
    let (measure, mb, _) = s.memory();
    Some(SessionCost {
        measure,
        mb,
        over: None,
    })
}

/// The levels that did not collapse, each with its peak memory, and the measure of it:
/// PSS where every level read it (a forked worker's shared pages counted once), else RSS.
fn peaks(steps: &[StepResult]) -> (MemoryMeasure, Vec<(&StepResult, f64)>) {
    let ok: Vec<&StepResult> = steps.iter().filter(|s| s.outcome.is_ok()).collect();
    let measure = match ok.iter().all(|s| s.memory().0 == MemoryMeasure::Pss) {
        true => MemoryMeasure::Pss,
        false => MemoryMeasure::Rss,
    };
    let peak = |s: &StepResult| match measure {
        MemoryMeasure::Pss => s.memory().2,
        MemoryMeasure::Rss => s.peak_rss_mb,
    };
    (measure, ok.into_iter().map(|s| (s, peak(s))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::CapInfo;

    /// The finding in words.
    fn per_session(steps: &[StepResult], wall: &Wall) -> Option<String> {
        said(steps, wall).map(|g| words::findings::finding(&g.finding))
    }

    /// A service that keeps ~3 MB per concurrent session under a 1 GB cap (issue 40): RSS
    /// 88 → 298 MB from 5 to 80 sessions, CPU the wall at 20.
    fn service(per_session_mb: f64) -> Vec<StepResult> {
        [5usize, 10, 20, 40, 80]
            .iter()
            .map(|&n| StepResult {
                concurrency: n,
                sessions_ok: n as u64,
                peak_rss_mb: 73.0 + per_session_mb * n as f64,
                cap: Some(CapInfo {
                    method: "cgroup-v2".into(),
                    cpus: 1.0,
                    mem_mb: 1024.0,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn three_mb_a_session_is_said_with_the_cap_and_what_stops_it_first() {
        let cpu = Wall {
            kind: WallKind::Cpu,
            from: Some(20.0),
            ..Default::default()
        };
        let said = per_session(&service(2.8), &cpu).unwrap();
        assert_eq!(
            said,
            "memory grows 2.8 MB a session (RSS 87 → 297 MB from 5 to 80 sessions): the 1,024 MB cap would hold about 340 sessions — CPU stops it first, at 20"
        );
        // A memory wall says it already; a few KB a session is not worth a sentence.
        let mem = Wall {
            kind: WallKind::Memory,
            ..cpu.clone()
        };
        assert_eq!(per_session(&service(2.8), &mem), None);
        assert_eq!(per_session(&service(0.1), &cpu), None);
    }

    /// Issue 62's LiveKit worker under a 2 GB cap: its job processes forked from a parent
    /// that had loaded onnxruntime and the VAD. Summed RSS grew 405 MB a call (1728 → 2943
    /// MB from 1 to 4 calls: "the cap would hold about 2"); the cgroup read 571, 639 and
    /// 768 MB, and so does the tree's PSS. The sentence is the PSS's, and says so.
    #[test]
    fn a_forked_worker_s_calls_cost_their_pss_not_their_summed_rss() {
        let steps: Vec<StepResult> = [
            (1usize, 1728.0, 571.0),
            (2, 2133.0, 639.0),
            (4, 2943.0, 768.0),
        ]
        .iter()
        .map(|&(n, rss, pss)| StepResult {
            concurrency: n,
            sessions_ok: n as u64,
            peak_rss_mb: rss,
            pss: Some(result::PssFigures {
                baseline_mb: 500.0,
                peak_mb: pss,
                kb_per_session: (pss - 500.0) * 1024.0 / n as f64,
            }),
            voice: Some(Default::default()),
            cap: Some(CapInfo {
                method: "cgroup-v2".into(),
                cpus: 1.0,
                mem_mb: 2048.0,
                ..Default::default()
            }),
            ..Default::default()
        })
        .collect();
        let said = per_session(&steps, &Wall::default()).unwrap();
        assert_eq!(
            said,
            "memory grows 65.7 MB a call (PSS 571 → 768 MB from 1 to 4 calls): the 2,048 MB cap would hold about 23 calls"
        );
        // What a call costs at the line is the same slope, not a level's quotient (67 MB
        // at 4: what the first call alone set up, spread over four).
        let cost = session_cost(&steps, 4).unwrap();
        assert_eq!(cost.measure, MemoryMeasure::Pss);
        assert!((cost.mb - 65.7).abs() < 0.1, "{cost:?}");
        assert_eq!(cost.over, Some((1, 4)));
        // A level that read no PSS: RSS for every level, said as RSS.
        let mut mixed = steps.clone();
        mixed[1].pss = None;
        let said = per_session(&mixed, &Wall::default()).unwrap();
        assert!(
            said.starts_with("memory grows 405 MB a call (RSS 1728 → 2943 MB"),
            "{said}"
        );
    }

    /// One level, or levels whose memory falls: that level's own figure, its measure kept.
    #[test]
    fn one_level_s_cost_is_its_own_figure() {
        let step = |n: usize, pss: f64| StepResult {
            concurrency: n,
            sessions_ok: n as u64,
            peak_rss_mb: 900.0,
            pss: Some(result::PssFigures {
                baseline_mb: 500.0,
                peak_mb: pss,
                kb_per_session: (pss - 500.0) * 1024.0 / n as f64,
            }),
            ..Default::default()
        };
        let one = session_cost(&[step(2, 600.0)], 2).unwrap();
        assert_eq!(
            (one.measure, one.mb, one.over),
            (MemoryMeasure::Pss, 50.0, None)
        );
        let falls = session_cost(&[step(1, 600.0), step(2, 590.0)], 2).unwrap();
        assert_eq!((falls.mb, falls.over), (45.0, None));
        assert_eq!(session_cost(&[step(1, 600.0)], 3), None);
    }
}
