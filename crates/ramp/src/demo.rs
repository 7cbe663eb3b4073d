//! `plimsoll demo`: the whole job with nothing to set up — the built-in floor agent made
//! to cost 20 CPU ms per LLM call (3 calls a turn: a CPU wall at about 16 turns/s on one
//! core), the bundled memory scenario, an auto ladder under a 1-core cap, the reports.

use crate::ladder::{run_ladder, RampOptions};
use crate::levels::Levels;
use cap::CapSpec;
use experiment::Config;
use std::path::PathBuf;
use step::StepOptions;

const SCENARIO: &str = include_str!("../../../scenarios/memory.toml");
const SESSION: &str = include_str!("../../../examples/floor/session.toml");
const CONFIG: &str = r#"# Written by `plimsoll demo`: the floor agent built into Plimsoll.
[sut]
command = ["{{plimsoll}}", "floor", "--listen", "127.0.0.1:{{port}}", "--model", "memory", "--cpu-ms-per-call", "20"]
ready = "http"
ready_path = "/health"
[mock]
scenario = "scenario.toml"
seed = 1
[session]
file = "session.toml"
[step]
timeout_s = 120
"#;

/// Writes the demo's files into `out/setup` and ramps; returns the ladder document.
pub async fn run_demo(
    out: PathBuf,
    levels: Levels,
    cap: Option<CapSpec>,
    partition: Option<probe::affinity::Partition>,
) -> anyhow::Result<result::ladder::LadderDoc> {
    let setup = out.join("setup");
    std::fs::create_dir_all(&setup)?;
    std::fs::write(setup.join("plimsoll.toml"), CONFIG)?;
    std::fs::write(setup.join("session.toml"), SESSION)?;
    std::fs::write(setup.join("scenario.toml"), SCENARIO)?;
    let cfg = Config::load(&setup.join("plimsoll.toml"))?;
    eprintln!(
        "plimsoll demo: ramping the floor agent at 20 CPU ms per LLM call (memory scenario: store and recall a fact each turn, 3 LLM calls a turn, 3 turns a session); setup in {}",
        setup.display()
    );
    let opts = RampOptions {
        step: StepOptions {
            cap,
            partition,
            progress: true,
            ..Default::default()
        },
        budget: cfg.budget.clone(),
        host: Some((64.0, 16.0)),
        target: Some(100_000),
        out: Some(out),
        history: None,
        replicas_axis: false,
        unit: Default::default(),
        live: None,
        confirm: 1,
    };
    run_ladder(&cfg, levels, &opts).await
}
