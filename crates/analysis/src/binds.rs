//! Which growing resource runs out first. Growth findings each project where their limit
//! is reached (threads and open files at the box's limits, memory at its cap); listed side
//! by side, "open files run out near 348 calls" reads as a worry next to a memory cap
//! reached near 22. The nearest keeps its sentence, said to run out first; the others go
//! in one line after it, nearest first.

use result::words::{many, Unit};

/// Where one finding's resource runs out: its name as the grouped line says it ("open
/// files"), and the sessions or calls at which it does.
#[derive(Clone, Debug, PartialEq)]
pub struct RunsOut {
    pub what: String,
    pub near: f64,
}

/// A growth finding's sentence, with where its resource runs out when it says so.
#[derive(Clone, Debug, PartialEq)]
pub struct Growth {
    pub text: String,
    pub runs_out: Option<RunsOut>,
}

impl Growth {
    pub fn said(text: String) -> Growth {
        Growth {
            text,
            runs_out: None,
        }
    }
}

/// The findings in their order, but where two or more project a limit: the nearest named
/// as the first the sessions reach, the farther ones folded into one line after it.
pub fn ranked(found: Vec<Growth>, u: Unit) -> Vec<String> {
    let mut near: Vec<(usize, &RunsOut)> = found
        .iter()
        .enumerate()
        .filter_map(|(i, g)| Some((i, g.runs_out.as_ref()?)))
        .collect();
    if near.len() < 2 {
        return found.into_iter().map(|g| g.text).collect();
    }
    near.sort_by(|a, b| a.1.near.total_cmp(&b.1.near));
    let first = near[0].0;
    let farther: Vec<String> = near[1..]
        .iter()
        .map(|(_, r)| format!("{} near {}", r.what, many(at(r.near), u.one())))
        .collect();
    let folded: Vec<usize> = near[1..].iter().map(|(i, _)| *i).collect();
    let mut out = Vec::new();
    for (i, g) in found.into_iter().enumerate() {
        if i == first {
            out.push(format!("first to run out: {}", g.text));
            out.push(format!(
                "farther off, as {} are added: {}",
                u.many(),
                farther.join(", ")
            ));
        } else if !folded.contains(&i) {
            out.push(g.text);
        }
    }
    out
}

fn at(n: f64) -> u64 {
    n.max(0.0).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(text: &str, what: &str, near: f64) -> Growth {
        Growth {
            text: text.into(),
            runs_out: Some(RunsOut {
                what: what.into(),
                near,
            }),
        }
    }

    /// Issue 62's LiveKit worker: open files out near 348 calls and threads near 5,162,
    /// said beside a memory cap reached near 22. The cap is first; the rest one line.
    #[test]
    fn the_nearest_limit_is_named_first_and_the_farther_ones_folded() {
        let found = vec![
            runs("threads grow 32 per call", "threads", 5162.0),
            runs("open files grow 57.3 per call", "open files", 348.0),
            Growth::said("CPU per turn rises with calls".into()),
            runs("memory grows 66 MB a call", "the 2,048 MB memory cap", 22.4),
        ];
        assert_eq!(
            ranked(found, Unit::Call),
            [
                "CPU per turn rises with calls",
                "first to run out: memory grows 66 MB a call",
                "farther off, as calls are added: open files near 348 calls, threads near 5,162 calls",
            ]
        );
    }

    #[test]
    fn one_projection_is_said_as_it_was() {
        let found = vec![
            runs("threads grow 3 per session", "threads", 332.0),
            Growth::said("memory per session rises".into()),
        ];
        assert_eq!(
            ranked(found, Unit::Session),
            ["threads grow 3 per session", "memory per session rises"]
        );
    }
}
