//! `plimsoll mock`: the synthetic provider on its own.

use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Args)]
pub struct MockArgs {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:8700")]
    pub listen: SocketAddr,
    /// Scenario file (models, timing); without it every model gets 200 ms TTFT, 5 ms/token, 50 tokens.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// RNG seed (overrides the scenario's); the same seed and request give the same reply.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Tokio worker threads (default: one per core).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Largest request body accepted, in MiB.
    #[arg(long, default_value_t = 32)]
    pub max_body_mb: usize,
    /// Use this fixed `created` timestamp (unix seconds) so replays are byte-identical.
    #[arg(long)]
    pub fixed_created: Option<u64>,
    /// Allow listening on a non-loopback address.
    #[arg(long)]
    pub allow_remote: bool,
}

pub fn run(a: MockArgs) -> anyhow::Result<u8> {
    let mut scenario = match &a.scenario {
        Some(p) => mock::Scenario::load(p)?,
        None => mock::Scenario::default(),
    };
    scenario
        .apply_failure_env(|k| std::env::var(k).ok())
        .map_err(anyhow::Error::msg)?;
    let opts = mock::MockOptions {
        listen: a.listen,
        scenario,
        seed: a.seed,
        max_body_bytes: a.max_body_mb.max(1) << 20,
        fixed_created: a.fixed_created,
        replay: None,
    };
    mock::run::run(opts, a.workers, a.allow_remote)?;
    Ok(0)
}
