//! Which growing resource runs out first. Growth findings each project where their limit
//! is reached (threads and open files at the box's limits, memory at its cap); listed side
//! by side, "open files run out near 348 calls" reads as a worry next to a memory cap
//! reached near 22. The nearest keeps its sentence, said to run out first; the others go
//! in one line after it, nearest first.

use result::facts::{Finding, Limit};
use result::words::Unit;

/// A growth finding, with where its resource runs out when it says so.
#[derive(Clone, Debug, PartialEq)]
pub struct Growth {
    pub finding: Finding,
    pub runs_out: Option<Limit>,
}

impl Growth {
    pub fn said(finding: Finding) -> Growth {
        Growth {
            finding,
            runs_out: None,
        }
    }
}

/// The findings in their order, but where two or more project a limit: the nearest named
/// as the first the sessions reach, the farther ones folded into one line after it.
pub fn ranked(found: Vec<Growth>, u: Unit) -> Vec<Finding> {
    let mut near: Vec<(usize, Limit)> = found
        .iter()
        .enumerate()
        .filter_map(|(i, g)| Some((i, g.runs_out?)))
        .collect();
    if near.len() < 2 {
        return found.into_iter().map(|g| g.finding).collect();
    }
    near.sort_by(|a, b| a.1.near.total_cmp(&b.1.near));
    let first = near[0].0;
    let folded: Vec<usize> = near[1..].iter().map(|(i, _)| *i).collect();
    let mut out = Vec::new();
    for (i, g) in found.into_iter().enumerate() {
        if i == first {
            out.push(Finding::FirstToRunOut {
                finding: Box::new(g.finding),
            });
            out.push(Finding::FartherOff {
                unit: u,
                limits: near[1..].iter().map(|(_, l)| *l).collect(),
            });
        } else if !folded.contains(&i) {
            out.push(g.finding);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::facts::{Resource, Rising, RisingFigure};

    fn runs(resource: Resource, near: f64) -> Growth {
        Growth {
            finding: Finding::Rising(rises(near)),
            runs_out: Some(Limit { resource, near }),
        }
    }

    /// A finding to rank, told apart by its figures.
    fn rises(x: f64) -> Rising {
        Rising {
            figure: RisingFigure::CpuPerTurn,
            unit: Unit::Call,
            first: (1.0, x),
            last: (4.0, x),
        }
    }

    /// Issue 62's LiveKit worker: open files out near 348 calls and threads near 5,162,
    /// said beside a memory cap reached near 22. The cap is first; the rest one line.
    #[test]
    fn the_nearest_limit_is_named_first_and_the_farther_ones_folded() {
        let cap = Resource::MemoryCap { mb: 2048.0 };
        let found = vec![
            runs(Resource::Threads, 5162.0),
            runs(Resource::OpenFiles, 348.0),
            Growth::said(Finding::Rising(rises(0.0))),
            runs(cap, 22.4),
        ];
        assert_eq!(
            ranked(found, Unit::Call),
            [
                Finding::Rising(rises(0.0)),
                Finding::FirstToRunOut {
                    finding: Box::new(Finding::Rising(rises(22.4)))
                },
                Finding::FartherOff {
                    unit: Unit::Call,
                    limits: vec![
                        Limit {
                            resource: Resource::OpenFiles,
                            near: 348.0
                        },
                        Limit {
                            resource: Resource::Threads,
                            near: 5162.0
                        }
                    ]
                },
            ]
        );
    }

    #[test]
    fn one_projection_is_said_as_it_was() {
        let found = vec![
            runs(Resource::Threads, 332.0),
            Growth::said(Finding::Rising(rises(0.0))),
        ];
        assert_eq!(
            ranked(found, Unit::Session),
            [Finding::Rising(rises(332.0)), Finding::Rising(rises(0.0))]
        );
    }
}
