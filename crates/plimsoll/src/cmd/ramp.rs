//! `plimsoll ramp`: a ladder of steps.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct RampArgs {
    #[arg(long, default_value = "plimsoll.toml")]
    pub config: PathBuf,
    /// Concurrency levels, e.g. 10,20,40,80, or `auto` (doubling from [step] concurrency until collapse).
    #[arg(long, default_value = "auto")]
    pub ladder: String,
    /// CPU cap for the SUT, in cores.
    #[arg(long, default_value_t = 2.0)]
    pub cpus: f64,
    /// Memory cap for the SUT.
    #[arg(long, default_value = "2G")]
    pub mem: String,
    /// Run without a cap.
    #[arg(long)]
    pub no_cap: bool,
    /// Host to project capacity onto, e.g. 64GB,16cpu.
    #[arg(long)]
    pub host: Option<String>,
    /// Sessions to project hosts for (with --host).
    #[arg(long)]
    pub target: Option<u64>,
    /// Directory for result.json and report.md.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[arg(long)]
    pub allow_remote: bool,
    /// The history database every run and step is recorded in.
    #[arg(long, default_value = ".plimsoll/history.db")]
    pub history: PathBuf,
    /// Do not record this run.
    #[arg(long)]
    pub no_history: bool,
}

pub fn run(a: RampArgs) -> anyhow::Result<u8> {
    let cfg = step::Config::load(&a.config)?;
    let levels =
        ::ramp::ladder::parse_levels(&a.ladder, cfg.concurrency).map_err(anyhow::Error::msg)?;
    let cap = if a.no_cap {
        None
    } else {
        Some(super::cap_spec(Some(a.cpus), Some(&a.mem)).map_err(anyhow::Error::msg)?)
    };
    let opts = ::ramp::ladder::RampOptions {
        step: step::StepOptions {
            allow_remote: a.allow_remote,
            progress: false,
            cap,
            ..Default::default()
        },
        host: a
            .host
            .as_deref()
            .map(::ramp::ladder::parse_host)
            .transpose()
            .map_err(anyhow::Error::msg)?,
        target: a.target,
        out: a.out,
        history: (!a.no_history).then_some(a.history),
    };
    let rt = super::runtime()?;
    let doc = rt.block_on(::ramp::ladder::run_ladder(&cfg, levels, &opts))?;
    println!("{}", serde_json::to_string(&doc)?);
    Ok(0)
}
