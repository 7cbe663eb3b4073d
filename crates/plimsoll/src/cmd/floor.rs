//! `plimsoll floor`: the floor reference agent.

use clap::Args;
use std::net::SocketAddr;

#[derive(Args)]
pub struct FloorArgs {
    /// Address to serve on ({{port}} in a config: 127.0.0.1:{{port}}).
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
    /// Burn this much CPU time after each LLM call (an agent whose CPU wall is known).
    #[arg(long, default_value_t = 0.0)]
    pub cpu_ms_per_call: f64,
    /// Run at most this many turns at once (an agent with an internal limit that queues).
    #[arg(long)]
    pub max_turns_in_flight: Option<usize>,
    /// Keep this many KB for every new session, forever (a leak of known slope, for soak).
    #[arg(long, default_value_t = 0)]
    pub leak_kb_per_session: usize,
    /// Retry a refused LLM call (429, 5xx, a dropped connection) this many times, after the
    /// provider's retry-after (as the official SDKs do; 0: fail at once).
    #[arg(long, default_value_t = 2)]
    pub max_retries: u32,
    /// Serve on one thread (named floor-loop) and burn --cpu-ms-per-call on it: an event loop doing its work on the loop, whose wall is one thread.
    #[arg(long)]
    pub on_the_loop: bool,
    /// Start an OS thread for every turn and never end it (threads grow with every turn).
    #[arg(long)]
    pub thread_per_turn: bool,
    /// Burn this much more CPU on each session's first turn (a cold start).
    #[arg(long, default_value_t = 0.0)]
    pub cold_start_ms: f64,
}

pub fn run(a: FloorArgs) -> anyhow::Result<u8> {
    let rt = match a.on_the_loop {
        true => {
            // SAFETY: PR_SET_NAME reads a NUL-terminated name of at most 16 bytes.
            unsafe { libc::prctl(libc::PR_SET_NAME, c"floor-loop".as_ptr()) };
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
        }
        // Not the driver's runtime: the floor is a SUT, and its threads keep tokio's names.
        false => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?,
    };
    rt.block_on(floor::serve(
        a.listen,
        &a.provider,
        &a.model,
        floor::Options {
            thread_per_session: a.thread_per_session,
            cpu_ms_per_call: a.cpu_ms_per_call,
            max_turns_in_flight: a.max_turns_in_flight,
            leak_kb_per_session: a.leak_kb_per_session,
            max_retries: a.max_retries,
            on_the_loop: a.on_the_loop,
            thread_per_turn: a.thread_per_turn,
            cold_start_ms: a.cold_start_ms,
        },
    ))?;
    Ok(0)
}
