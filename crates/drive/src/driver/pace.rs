//! A session's pace: how many turns it runs and the pause before each — the session
//! file's `turns` and `think_ms`, or, when a recorded workload is replayed, the recorded
//! session's own (`workload::Replay`), each pause's lateness recorded. The turn loops
//! (`sequence`, `talk`) ask here; the user's words of a turn are `vars`' (`{{prompt}}`).

use super::vars::Vars;
use crate::run::Recorder;
use crate::spec::SessionSpec;
use std::time::Duration;
use tokio::time::Instant;

/// How many turns the session runs.
pub(super) fn turns(spec: &SessionSpec, vars: &Vars) -> u32 {
    match &vars.replay {
        Some((r, i)) => r.turns(*i),
        None => spec.turns,
    }
}

/// The pause before `turn` (none before the first), recorded when replayed.
pub(super) async fn think(spec: &SessionSpec, vars: &Vars, turn: u32, recorder: &Recorder) {
    if turn <= 1 {
        return;
    }
    let ms = match &vars.replay {
        Some((r, i)) => r.think_ms(*i, turn),
        None => spec.think_ms,
    };
    if ms <= 0.0 {
        return;
    }
    let meant = Duration::from_secs_f64(ms / 1000.0);
    let began = Instant::now();
    tokio::time::sleep(meant).await;
    if vars.replay.is_some() {
        recorder.think_done(meant, began.elapsed());
    }
}
