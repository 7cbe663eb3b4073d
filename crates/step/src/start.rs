//! Where every step starts — `run`, `check`, a ramp's levels, a sweep's points, a soak,
//! each side of a comparison: the step run to its end or to Ctrl-C (its futures dropped,
//! so the SUT's process group is stopped), run once more after a pause when a busy
//! machine put its figures in doubt (where the caller asks), and its RESULT checked
//! against the schema before anything records it. What happened on the way is a typed
//! note the caller words; nothing here prints.

use crate::options::StepOptions;
use experiment::Config;
use result::StepReport;
use std::time::Duration;

/// How long a step whose machine was busy waits before it runs again.
pub const PAUSE: Duration = Duration::from_secs(5);

/// What happened on the way to a step's end, for the caller to say.
pub enum Note<'a> {
    /// Other processes took a material share of the SUT's cores (`analysis::trust`):
    /// the step runs again after `pause`, and the cleaner of the two is kept.
    Busy {
        first: &'a StepReport,
        pause: Duration,
    },
}

/// How a step is started.
#[derive(Clone, Copy, Default)]
pub struct Start<'a> {
    /// Run the step once more when its machine was busy (ladders and sweeps, whose line
    /// a busy step would put low); a single `run` reports what it measured.
    pub again_when_busy: bool,
    /// Told what happened on the way (None: nothing is said).
    pub note: Option<&'a (dyn Fn(Note<'_>) + Sync)>,
}

/// One step to its end: its report, or None when Ctrl-C stopped it (what was running is
/// stopped; the caller says so and keeps what finished before).
pub async fn start(
    cfg: &Config,
    opts: &StepOptions,
    how: Start<'_>,
) -> anyhow::Result<Option<StepReport>> {
    tokio::select! {
        r = checked(cfg, opts, how) => r.map(Some),
        _ = tokio::signal::ctrl_c() => Ok(None),
    }
}

async fn checked(cfg: &Config, opts: &StepOptions, how: Start<'_>) -> anyhow::Result<StepReport> {
    let first = crate::step::run_step(cfg, opts).await?;
    let step = match how.again_when_busy && first.result.contaminated() {
        false => first,
        true => {
            if let Some(note) = how.note {
                note(Note::Busy {
                    first: &first,
                    pause: PAUSE,
                });
            }
            tokio::time::sleep(PAUSE).await;
            let second = crate::step::run_step(cfg, opts).await?;
            cleaner(first, second)
        }
    };
    // Nothing reaches the history, result.json or the terminal that the schema refuses.
    let value = serde_json::to_value(&step.result)?;
    result::schema::check(&value)
        .map_err(|e| anyhow::anyhow!("the step produced a RESULT the schema refuses: {e}"))?;
    Ok(step)
}

/// Of a busy step and its re-run, the one others took less from, marked as a re-run.
fn cleaner(first: StepReport, second: StepReport) -> StepReport {
    let others = |r: &StepReport| analysis::trust::taken(&r.result);
    let mut kept = match others(&second) < others(&first) {
        true => second,
        false => first,
    };
    if let Some(i) = kept.result.interference.as_mut() {
        i.rerun = true;
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::trust::Interference;

    /// A busy step whose SUT lost `taken` of its cores to the hypervisor.
    fn busy(taken: f64) -> StepReport {
        let mut r = StepReport::default();
        r.result.interference = Some(Interference {
            contaminated: true,
            cores: 1.0,
            steal_share: taken,
            ..Default::default()
        });
        r
    }

    #[test]
    fn the_cleaner_run_is_kept_and_marked_a_rerun() {
        let kept = cleaner(busy(0.6), busy(0.2));
        let i = kept.result.interference.unwrap();
        assert!(i.rerun);
        assert_eq!(i.steal_share, 0.2);
        // A tie keeps the first.
        let mut first = busy(0.3);
        first.result.turns = 1;
        let kept = cleaner(first, busy(0.3));
        assert_eq!(kept.result.turns, 1);
        assert!(kept.result.interference.unwrap().rerun);
    }
}
