//! The line with its spread: once the auto ladder has found the levels either side of the
//! line, each runs again (`--confirm N` times, once by default) and a third time when its
//! runs disagree — a line is a draw from a noisy machine until it has been seen twice.
//! When the runs move the line (the level that held fails in most of its runs, or the one
//! beyond holds in most), the ladder bisects again on that side — doubling first when no
//! level above it has failed yet — and confirms the new pair.

use crate::ladder::Run;
use crate::levels::Search;
use result::Standing;

/// At most this many rounds of confirming and bisecting again.
const ROUNDS: usize = 2;
/// At most this many levels doubled when the runs move the line above every level run.
const CLIMB: usize = 3;

impl Run<'_> {
    /// Whether each run at `level` held (first run and repeats), judged among the first
    /// runs as every step is.
    fn runs_at(&self, level: usize) -> Vec<bool> {
        self.steps
            .iter()
            .chain(&self.repeats)
            .filter(|s| s.concurrency == level)
            .map(|s| {
                analysis::verdict::standing_among(&self.steps, s, &self.opts.budget)
                    == Standing::Holds
            })
            .collect()
    }

    /// Confirms the line found by `search`, bisecting again where the runs move it;
    /// false when interrupted.
    pub(crate) async fn settle(
        &mut self,
        search: &mut Search,
        resolution: f64,
    ) -> anyhow::Result<bool> {
        for _ in 0..ROUNDS {
            let (Some(h), Some(f)) = (search.holds, search.fails) else {
                return Ok(true);
            };
            if !self.confirm(h, f, self.opts.confirm).await? {
                return Ok(false);
            }
            let agrees = |r: Vec<bool>| analysis::line::agrees(&r);
            let levels: Vec<usize> = self.steps.iter().map(|s| s.concurrency).collect();
            match (agrees(self.runs_at(h)), agrees(self.runs_at(f))) {
                (true, false) => return Ok(true),
                (false, _) => {
                    // The line is below `h`: between the highest level under it that held
                    // in most of its runs and `h`.
                    search.fails = Some(h);
                    search.holds = levels
                        .iter()
                        .filter(|&&l| l < h && agrees(self.runs_at(l)))
                        .max()
                        .copied();
                }
                (true, true) => {
                    search.holds = Some(f);
                    search.fails = levels
                        .iter()
                        .filter(|&&l| l > f && !agrees(self.runs_at(l)))
                        .min()
                        .copied();
                }
            }
            eprintln!(
                "the runs moved the line: {}; {} again",
                between(search, self.opts.unit),
                if search.fails.is_some() {
                    "bisecting"
                } else {
                    "doubling"
                }
            );
            if search.fails.is_none() && !self.double_up(search).await? {
                return Ok(false);
            }
            if !self.bisect(search, resolution).await? {
                return Ok(false);
            }
        }
        // The pair the last round bisected to is confirmed too (not moved again).
        match (search.holds, search.fails) {
            (Some(h), Some(f)) => self.confirm(h, f, self.opts.confirm).await,
            _ => Ok(true),
        }
    }

    /// The line moved above every level run: doubling from the highest level that held
    /// until one does not (at most [`CLIMB`] levels); false when interrupted.
    async fn double_up(&mut self, search: &mut Search) -> anyhow::Result<bool> {
        let mut level = search.holds.unwrap_or(1);
        for _ in 0..CLIMB {
            level *= 2;
            let Some(st) = self.level(level).await? else {
                return Ok(false);
            };
            search.record(level, st);
            if search.fails.is_some() {
                break;
            }
        }
        Ok(true)
    }

    /// Runs `holds` and `fails` again (a level already run that often is not); false when
    /// interrupted.
    async fn confirm(&mut self, holds: usize, fails: usize, more: usize) -> anyhow::Result<bool> {
        let todo: Vec<usize> = [holds, fails]
            .into_iter()
            .filter(|l| self.runs_at(*l).len() <= more)
            .collect();
        if more == 0 || todo.is_empty() {
            return Ok(true);
        }
        eprintln!(
            "confirming the line: {} {} again ({more} more run{} each, a third when they disagree)",
            todo.iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(" and "),
            self.opts.unit.many(),
            if more == 1 { "" } else { "s" }
        );
        for level in todo {
            let first = self.first_standing(level);
            let mut disagree = false;
            for _ in 0..more {
                let Some(st) = self.again(level).await? else {
                    return Ok(false);
                };
                disagree |= Some(st != Standing::Holds) != first.map(|f| f != Standing::Holds);
            }
            if disagree && more == 1 && self.again(level).await?.is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Where the line lies now, in words: "it lies between 8 and 12 sessions", "it lies below
/// 8 sessions", "it lies above 64 sessions".
fn between(search: &Search, u: result::words::Unit) -> String {
    match (search.holds, search.fails) {
        (Some(h), Some(f)) => format!("it lies between {h} and {f} {}", u.many()),
        (None, Some(f)) => format!("it lies below {}", u.level(f)),
        (Some(h), None) => format!("it lies above {}", u.level(h)),
        (None, None) => "it is not bracketed yet".into(),
    }
}
