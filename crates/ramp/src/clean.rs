//! A step of a ladder or a sweep started so that a busy machine does not pass for the
//! system's limit: `step::start` runs it again after a pause when others took a material
//! share of the SUT's cores, and this says so on the terminal.

use experiment::Config;
use result::StepReport;
use step::{Note, Start, StepOptions};

/// One step, run again once when the first run was contaminated (the cleaner is kept);
/// None when Ctrl-C stopped it.
pub async fn run_clean(
    cfg: &Config,
    opts: &StepOptions,
    what: &str,
) -> anyhow::Result<Option<StepReport>> {
    let say = |n: Note<'_>| match n {
        Note::Busy { first, pause } => eprintln!(
            "  the machine was busy during the step at {what}: {}; running it again in {} s",
            report::step::busy_words(&first.result),
            pause.as_secs()
        ),
    };
    let how = Start {
        again_when_busy: true,
        note: Some(&say),
    };
    step::start(cfg, opts, how).await
}
