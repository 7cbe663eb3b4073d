//! `plimsoll mcp --stdio`: the mock's MCP tools over stdio, for agents that start their
//! tool servers as child processes. Relays to a running mock (`--mock`, or the
//! `PLIMSOLL_MOCK_URL` every step gives the SUT) so the step's ledger and oracle see the
//! calls; without one, serves the scenario's tools in this process.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct McpArgs {
    /// Serve over stdin and stdout (the only transport of this command; `plimsoll mock` serves Streamable HTTP at /mcp).
    #[arg(long)]
    pub stdio: bool,
    /// The running mock to relay to (its base URL); default: $PLIMSOLL_MOCK_URL.
    #[arg(long, env = "PLIMSOLL_MOCK_URL")]
    pub mock: Option<String>,
    /// Serve this scenario's [mcp] tools in this process instead of relaying.
    #[arg(long, conflicts_with = "mock")]
    pub scenario: Option<PathBuf>,
    /// RNG seed of the tools' latency and failures (overrides the scenario's; in-process only).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Hold this much memory (MiB) for the life of the process: a stand-in for a heavier server.
    #[arg(long, default_value_t = 0)]
    pub ballast_mb: usize,
}

pub fn run(a: McpArgs) -> anyhow::Result<u8> {
    if !a.stdio {
        anyhow::bail!("plimsoll mcp serves over stdio: pass --stdio (Streamable HTTP is `plimsoll mock`'s /mcp)");
    }
    let scenario = match &a.scenario {
        Some(p) => mock::Scenario::load(p)?,
        None => mock::Scenario::default(),
    };
    let mock = if a.scenario.is_some() { None } else { a.mock };
    mock::mcp::stdio::run(mock::mcp::stdio::StdioOptions {
        scenario,
        seed: a.seed,
        mock,
        ballast_mb: a.ballast_mb,
    })?;
    Ok(0)
}
