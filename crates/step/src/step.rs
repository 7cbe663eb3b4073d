//! One step: a fresh mock, a fresh SUT pointed at it, C sessions driven through it
//! (or the user's own harness driving them), its process tree sampled all along, and
//! one RESULT. What it reads before it starts is `prepare`'s.

pub use crate::options::StepOptions;
use crate::rig::Rig;
use experiment::Config;
pub use result::StepReport;

pub async fn run_step(cfg: &Config, opts: &StepOptions) -> anyhow::Result<StepReport> {
    // Every file read before anything starts, so a bad one costs nothing.
    let p = crate::prepare::prepare(cfg, opts)?;
    // Each warning once per process, not once per step of a ladder.
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    for w in p.session.iter().flat_map(|s| &s.warnings) {
        let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
        if !said.contains(w) {
            eprintln!("{w}");
            said.push(w.clone());
        }
    }
    let cfg = &p.cfg;
    let rig = Rig::start(cfg, p.concurrency, p.replay, p.scenario).await?;
    match (p.harness, p.session) {
        (Some(cmd), _) => crate::harness::run(cfg, opts, rig, cmd).await,
        (None, Some(session)) => crate::driven::run(cfg, opts, rig, &session).await,
        (None, None) => unreachable!("a session is loaded whenever there is no harness"),
    }
}
