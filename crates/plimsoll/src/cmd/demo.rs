//! `plimsoll demo`: the floor agent ramped with nothing to set up.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct DemoArgs {
    /// Where the reports (and the generated setup) go.
    #[arg(long, default_value = "plimsoll-demo")]
    pub out: PathBuf,
    #[arg(long, default_value = "16,32,64,128,256,512")]
    pub ladder: String,
    /// Run without a cap.
    #[arg(long)]
    pub no_cap: bool,
}

pub fn run(a: DemoArgs) -> anyhow::Result<u8> {
    let levels = ::ramp::ladder::parse_levels(&a.ladder, 16).map_err(anyhow::Error::msg)?;
    let cap = (!a.no_cap).then(cap::CapSpec::default);
    let rt = super::runtime()?;
    rt.block_on(::ramp::demo::run_demo(a.out, levels, cap))?;
    Ok(0)
}
