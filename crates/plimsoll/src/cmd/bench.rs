//! `plimsoll bench`: benchmarks of Plimsoll's own parts.

use anyhow::Context;
use clap::{Args, Subcommand};

#[derive(Subcommand)]
pub enum BenchCommand {
    /// C concurrent streams against the mock: timing error, chunks/s, CPU per chunk, RSS per stream.
    #[command(
        after_help = "Example (the issue's target):\n  plimsoll bench mock --streams 10000 --ttft-ms 200 --tok-ms 5 --tokens 50 --repeat 3"
    )]
    Mock(BenchMockArgs),
    /// The probe's cost: time to sample a SUT's process tree when it holds many OS threads.
    Probe {
        /// OS threads the sampled child holds.
        #[arg(long, default_value_t = 10_000)]
        threads: usize,
        #[arg(long, default_value_t = 200)]
        samples: usize,
        /// TCP connections the child also holds (to itself: each one an outbound and an
        /// accepted socket), to time counting them by remote port.
        #[arg(long, default_value_t = 0)]
        connections: usize,
    },
    /// (internal) Hold N idle threads until killed; the target of `bench probe`.
    #[command(hide = true)]
    HoldThreads {
        #[arg(long)]
        threads: usize,
        #[arg(long, default_value_t = 0)]
        connections: usize,
    },
}

#[derive(Args)]
pub struct BenchMockArgs {
    /// Concurrent open streams (closed loop: each stream starts a new request when one ends).
    #[arg(long, default_value_t = 1000)]
    pub streams: usize,
    #[arg(long, default_value_t = 200.0)]
    pub ttft_ms: f64,
    #[arg(long, default_value_t = 5.0)]
    pub tok_ms: f64,
    /// Output tokens per reply.
    #[arg(long, default_value_t = 50)]
    pub tokens: u32,
    #[arg(long, default_value_t = 1)]
    pub tokens_per_chunk: u32,
    /// chat, responses or messages.
    #[arg(long, default_value = "chat")]
    pub api: String,
    /// Seconds of load before measuring.
    #[arg(long, default_value_t = 2.0)]
    pub warmup_s: f64,
    /// Seconds measured per run.
    #[arg(long, default_value_t = 5.0)]
    pub window_s: f64,
    /// Runs, each with a fresh mock process; the table shows each run and the median.
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Tokio worker threads of the mock.
    #[arg(long)]
    pub mock_workers: Option<usize>,
    /// Give the mock a provider quota and generation slots that never bind: what checking
    /// them costs per request (compare with a run without).
    #[arg(long)]
    pub limits: bool,
    /// Reasoning tokens per reply: Anthropic thinking streamed before the text
    /// (thinking deltas count as chunks), OpenAI reasoning as a silence before it (with
    /// encrypted content in Responses). Compare with a run without.
    #[arg(long, default_value_t = 0, value_name = "TOKENS")]
    pub reasoning: u32,
    /// A system prompt of this many tokens in every request, the same for all: what the
    /// provider's prompt cache serves (compare with --no-cache).
    #[arg(long, default_value_t = 0, value_name = "TOKENS")]
    pub prompt_tokens: u32,
    /// Turn the mock's prompt cache off (it is on in every scenario by default).
    #[arg(long)]
    pub no_cache: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(c: BenchCommand) -> anyhow::Result<u8> {
    match c {
        BenchCommand::Mock(a) => mock(a)?,
        BenchCommand::Probe {
            threads,
            samples,
            connections,
        } => {
            let exe = std::env::current_exe().context("locating the plimsoll executable")?;
            bench::run_probe_bench(&exe, threads, samples.max(1), connections)?
        }
        BenchCommand::HoldThreads {
            threads,
            connections,
        } => bench::hold_threads(threads, connections),
    }
    Ok(0)
}

fn mock(a: BenchMockArgs) -> anyhow::Result<()> {
    let opts = bench::MockBenchOptions {
        streams: a.streams,
        ttft_ms: a.ttft_ms,
        tok_ms: a.tok_ms,
        tokens: a.tokens,
        tokens_per_chunk: a.tokens_per_chunk,
        api: a.api,
        warmup: std::time::Duration::from_secs_f64(a.warmup_s.max(0.1)),
        window: std::time::Duration::from_secs_f64(a.window_s.max(0.5)),
        repeat: a.repeat,
        mock_workers: a.mock_workers,
        limits: a.limits,
        reasoning: a.reasoning,
        prompt_tokens: a.prompt_tokens,
        cache: !a.no_cache,
        exe: std::env::current_exe().context("locating the plimsoll executable")?,
    };
    bench::print_mock_bench(&opts, a.json)
}
