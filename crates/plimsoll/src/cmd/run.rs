//! `plimsoll run`: one step.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct RunArgs {
    /// The experiment file.
    #[arg(long, default_value = "plimsoll.toml")]
    pub config: PathBuf,
    /// Resident sessions: open this many first (their [[setup]] run, their state held in the SUT), then keep --concurrency of them active at a time; memory is reported per resident and per active session (overrides [step] resident).
    #[arg(long, value_name = "N")]
    pub resident: Option<usize>,
    /// Concurrent sessions (overrides [step] concurrency).
    #[arg(long, short = 'c')]
    pub concurrency: Option<usize>,
    /// Print only the RESULT line (no verdict, no progress).
    #[arg(long)]
    pub json: bool,
    /// Allow session URLs that are not loopback.
    #[arg(long)]
    pub allow_remote: bool,
    /// Open model: sessions arrive at this rate per second (the --concurrency count of them), latency counted from each intended start.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Cap the SUT's CPU (cores) in a cgroup made for the step.
    #[arg(long)]
    pub cpus: Option<f64>,
    /// Cap the SUT's memory (e.g. 2G, 512M) in a cgroup made for the step.
    #[arg(long)]
    pub mem: Option<String>,
    /// Harness mode: this command (run with sh -c) drives its own sessions against the mock and prints `RESULT {json}`; Plimsoll probes it and merges its figures in.
    #[arg(long)]
    pub harness: Option<String>,
    /// Let Plimsoll and the SUT share every core (by default Plimsoll takes one core, the SUT the rest).
    #[arg(long)]
    pub no_partition: bool,
    /// Run this [[arm]] of the config: its command and env over [sut]'s.
    #[arg(long, value_name = "NAME")]
    pub arm: Option<String>,
    #[command(flatten)]
    pub load: super::LoadArgs,
}

pub fn run(a: RunArgs) -> anyhow::Result<u8> {
    super::guard_up();
    let cap = match (a.cpus, &a.mem) {
        (None, None) => None,
        (cpus, mem) => Some(super::cap_spec(cpus, mem.as_deref()).map_err(anyhow::Error::msg)?),
    };
    let opts = step::StepOptions {
        concurrency: a.concurrency,
        allow_remote: a.allow_remote,
        progress: !a.json,
        harness: a.harness,
        rate: a.rate,
        cap,
        partition: super::partition(!a.no_partition),
        session: a.load.session.clone(),
        resident: a.resident,
        probe_path: a.load.probe.clone(),
        slow: a.load.slow(),
        arm: a.arm,
        ..Default::default()
    };
    step::cli::run(&a.config, opts, a.json)
}
