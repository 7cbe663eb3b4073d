//! `plimsoll demo`: the floor agent ramped with nothing to set up.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct DemoArgs {
    /// Where the reports (and the generated setup) go.
    #[arg(long, default_value = "plimsoll-demo")]
    pub out: PathBuf,
    /// Levels, or `auto` (doubling from 2 sessions, then bisecting to the line).
    #[arg(long, default_value = "auto")]
    pub ladder: String,
    /// CPU cap for the agent, in cores.
    #[arg(long, default_value_t = 1.0)]
    pub cpus: f64,
    /// Run without a cap.
    #[arg(long)]
    pub no_cap: bool,
    /// How the CPU cap is held where the SUT could run on more cores than --cpus: cpuset (the default: ceil(--cpus) cores of its own, under a quota that binds only for a fraction of a core, so it runs as on a box of that size) or quota (a quota over every core it may use, as docker run --cpus and Kubernetes limits: bursts on many cores, then throttled).
    #[arg(long, value_name = "HOW", default_value = "cpuset", value_parser = cap::CpuBy::parse)]
    pub cpu_by: cap::CpuBy,
    /// Let Plimsoll and the agent share every core.
    #[arg(long)]
    pub no_partition: bool,
}

pub fn run(a: DemoArgs) -> anyhow::Result<u8> {
    super::guard_up();
    let levels = ::ramp::levels::parse_levels(&a.ladder, 2).map_err(anyhow::Error::msg)?;
    let cap = super::cap_unless(a.no_cap, a.cpus, None, a.cpu_by)?;
    let partition = super::partition(!a.no_partition);
    let rt = super::runtime()?;
    rt.block_on(::ramp::demo::run_demo(a.out, levels, cap, partition))?;
    Ok(0)
}
