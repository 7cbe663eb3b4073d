//! `[workload]` in plimsoll.toml: a recorded workload replayed instead of the session
//! file's uniform sessions — which file, exact or sampled, the time scale of an exact
//! replay, and whether recorded text may be sent. Reading the workload file itself is
//! the step's (`workload` crate); this only checks the settings.
//!
//! ```toml
//! [workload]
//! file = "traces/workload.json"   # made by `plimsoll workload from-traces`
//! replay = "sampled"              # or "exact": every recorded session once, at its start
//! speed = 1.0                     # exact: recorded time divided by this
//! prompts = "filler"              # or "recorded": the recorded text where there is some
//! ```

use crate::raw::RawWorkload;
use std::path::PathBuf;

/// The `[workload]` settings, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSettings {
    pub file: PathBuf,
    /// Every recorded session once at its recorded start (else sampled with the seed).
    pub exact: bool,
    pub speed: f64,
    /// Send the recorded user text where the recording has it (else filler of its size).
    pub recorded_prompts: bool,
}

pub(crate) fn read(
    raw: Option<&RawWorkload>,
    spans: &spans::Spans,
    rel: impl Fn(&str) -> PathBuf,
) -> Result<Option<WorkloadSettings>, spans::FileError> {
    let Some(w) = raw else { return Ok(None) };
    let exact = match w.replay.as_ref().map(|s| (s.get_ref().as_str(), s.span())) {
        None | Some(("sampled", _)) => false,
        Some(("exact", _)) => true,
        Some((other, span)) => {
            return Err(spans.err(
                Some(span),
                format!("workload.replay must be \"sampled\" or \"exact\" (got {other:?})"),
            ))
        }
    };
    let speed = match &w.speed {
        None => 1.0,
        Some(s) if *s.get_ref() > 0.0 && s.get_ref().is_finite() => *s.get_ref(),
        Some(s) => {
            return Err(spans.err(
                Some(s.span()),
                format!(
                    "workload.speed must be above 0, e.g. 2.0 for twice as fast (got {})",
                    s.get_ref()
                ),
            ))
        }
    };
    let recorded_prompts = match w.prompts.as_ref().map(|s| (s.get_ref().as_str(), s.span())) {
        None | Some(("filler", _)) => false,
        Some(("recorded", _)) => true,
        Some((other, span)) => {
            return Err(spans.err(
                Some(span),
                format!("workload.prompts must be \"filler\" or \"recorded\" (got {other:?})"),
            ))
        }
    };
    Ok(Some(WorkloadSettings {
        file: rel(w.file.as_str()),
        exact,
        speed,
        recorded_prompts,
    }))
}
