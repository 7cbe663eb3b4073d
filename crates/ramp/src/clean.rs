//! A step run so that a busy machine does not pass for the system's limit: a step whose
//! SUT lost a material share of its cores to other processes (`analysis::trust`) is run
//! again after a pause, and the cleaner of the two is kept, marked as a re-run.

use experiment::Config;
use result::StepReport;
use std::time::Duration;
use step::{run_step, StepOptions};

/// How long a contaminated step waits before it runs again.
pub const PAUSE: Duration = Duration::from_secs(5);

/// What other processes took of the cores a step ran on (0 when not measured).
fn others(r: &StepReport) -> f64 {
    analysis::trust::taken(&r.result)
}

/// One step, run again once when the first run was contaminated; the cleaner is kept.
pub async fn run_clean(cfg: &Config, opts: &StepOptions, what: &str) -> anyhow::Result<StepReport> {
    let first = run_step(cfg, opts).await?;
    if !first.result.contaminated() {
        return Ok(first);
    }
    eprintln!(
        "  the machine was busy during the step at {what}: {}; running it again in {} s",
        report::step::busy_words(&first.result),
        PAUSE.as_secs()
    );
    tokio::time::sleep(PAUSE).await;
    let second = run_step(cfg, opts).await?;
    let mut kept = if others(&second) < others(&first) {
        second
    } else {
        first
    };
    if let Some(i) = kept.result.interference.as_mut() {
        i.rerun = true;
    }
    Ok(kept)
}
