//! `plimsoll floor`: the floor reference agent.

use clap::Args;
use std::net::SocketAddr;

#[derive(Args)]
pub struct FloorArgs {
    #[arg(long, default_value = "127.0.0.1:8800")]
    pub listen: SocketAddr,
    /// Model to ask (the scenario decides its script).
    #[arg(long, default_value = "memory")]
    pub model: String,
    /// The provider's OpenAI base URL (default: $OPENAI_BASE_URL).
    #[arg(long, env = "OPENAI_BASE_URL")]
    pub provider: String,
    /// Park an OS thread per session (the costly design, for `plimsoll compare` to catch).
    #[arg(long)]
    pub thread_per_session: bool,
}

pub fn run(a: FloorArgs) -> anyhow::Result<u8> {
    let rt = super::runtime()?;
    rt.block_on(floor::serve(
        a.listen,
        &a.provider,
        &a.model,
        a.thread_per_session,
    ))?;
    Ok(0)
}
