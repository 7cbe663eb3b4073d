//! `plimsoll bench`: benchmarks of Plimsoll's own parts.

use anyhow::Context;
use clap::{Args, Subcommand};

#[derive(Subcommand)]
pub enum BenchCommand {
    /// C concurrent streams against the mock: timing error, chunks/s, CPU per chunk, RSS per
    /// stream; with --mcp, MCP tools/call against its /mcp: calls/s, latency, CPU per call.
    #[command(
        after_help = "Examples:\n  plimsoll bench mock --streams 10000 --ttft-ms 200 --tok-ms 5 --tokens 50 --repeat 3   (the issue's target)\n  plimsoll bench mock --streams 200 --history 10 --api chat   (agent-like calls: µs a call, the oracle's and the cache's share)\n  plimsoll bench mock --burst --streams 2000 --burst-s 2   (2,000 new connections over 2 s, the client's CPU beside the mock's)\n  plimsoll bench mock --mcp --clients 1,8,64 --reply json,sse   (MCP calls/s and CPU per call)"
    )]
    Mock(Box<BenchMockArgs>),
    /// How many voice calls one harness core drives in real time: Twilio or WebRTC calls
    /// against a bot that costs nothing, every 20 ms frame on its deadline, each reply decoded.
    #[command(
        after_help = "Examples:\n  plimsoll bench calls                          (10, 25, 50, 100, 200 Twilio calls)\n  plimsoll bench calls --transport webrtc       (the same over WebRTC: Opus, DTLS-SRTP, a jitter buffer)\n  plimsoll bench calls --calls 250,500,1000 --transport twilio,webrtc   (a table each; under a row that did not keep time, which part filled first)\n  plimsoll bench calls --calls 50,400 --turns 3 --json   (a line of JSON a transport)"
    )]
    Calls {
        /// Call counts, a row each.
        #[arg(long, value_delimiter = ',', default_value = "10,25,50,100,200")]
        calls: Vec<usize>,
        /// How the calls reach the bot: twilio (µ-law over a WebSocket) or webrtc (Opus over
        /// DTLS-SRTP, offered as Pipecat's SmallWebRTC takes it); a list runs each in turn.
        #[arg(long, value_delimiter = ',', default_value = "twilio", value_parser = ["twilio", "webrtc"])]
        transport: Vec<String>,
        /// Turns each call speaks.
        #[arg(long, default_value_t = 2)]
        turns: u32,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// The driver's cost alone: HTTP sessions against a null SUT that answers at once, in
    /// a closed loop; the driver's CPU a turn (a step's `driver` part) and turns a second.
    #[command(
        after_help = "Examples:\n  plimsoll bench driver                                  (1, 16, 64, 256 sessions)\n  plimsoll bench driver --sessions 64 --body-bytes 16000 --json"
    )]
    Driver {
        /// Concurrent sessions, a row each.
        #[arg(long, value_delimiter = ',', default_value = "1,16,64,256")]
        sessions: Vec<usize>,
        /// Turns of each session (a new session starts when one ends).
        #[arg(long, default_value_t = 10)]
        turns: u32,
        /// Bytes of JSON each turn sends.
        #[arg(long, default_value_t = 1000)]
        body_bytes: usize,
        /// Seconds each row drives.
        #[arg(long, default_value_t = 5.0)]
        window_s: f64,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// The probe's cost: time to sample a SUT's process tree when it holds many OS threads.
    Probe {
        /// OS threads the sampled child holds.
        #[arg(long, default_value_t = 10_000)]
        threads: usize,
        /// Samples taken, each timed.
        #[arg(long, default_value_t = 200)]
        samples: usize,
        /// TCP connections the child also holds (to itself: each one an outbound and an
        /// accepted socket), to time counting them by remote port.
        #[arg(long, default_value_t = 0)]
        connections: usize,
        /// MB the child writes before it forks (shared by its forks, as a worker's model is
        /// by its job processes), to time reading the tree's PSS.
        #[arg(long, default_value_t = 512)]
        memory_mb: usize,
        /// Children the child forks after writing its memory, each a process of the tree.
        #[arg(long, default_value_t = 4)]
        forks: usize,
    },
    /// The live view's cost (`--live`): time to answer the page's parts (the report's body
    /// over the ladder so far) and one /metrics scrape, over boards of more and more
    /// finished levels; and its share of a core with a page open and a scrape every 5 s.
    #[command(
        after_help = "Examples:\n  plimsoll bench live                    (boards of 4, 8, 16 and 32 finished levels)\n  plimsoll bench live --steps 64 --json"
    )]
    Live {
        /// Finished levels on the board, a row each.
        #[arg(long, value_delimiter = ',', default_value = "4,8,16,32")]
        steps: Vec<usize>,
        /// Seconds the running level has run.
        #[arg(long, default_value_t = 600)]
        ticks: usize,
        /// Answers timed for each row (the median is printed).
        #[arg(long, default_value_t = 50)]
        reps: usize,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// (internal) Answer every HTTP request at once until killed; the SUT of `bench driver`.
    #[command(hide = true)]
    NullSut,
    /// (internal) Hold N idle threads until killed; the target of `bench probe`.
    #[command(hide = true)]
    HoldThreads {
        #[arg(long)]
        threads: usize,
        #[arg(long, default_value_t = 0)]
        connections: usize,
        #[arg(long, default_value_t = 0)]
        memory_mb: usize,
        #[arg(long, default_value_t = 0)]
        forks: usize,
    },
}

#[derive(Args)]
pub struct BenchMockArgs {
    /// Concurrent open streams (closed loop: each stream starts a new request when one ends).
    #[arg(long, default_value_t = 1000)]
    pub streams: usize,
    /// The mock's time to first token, in ms (every model of its scenario).
    #[arg(long, default_value_t = 200.0)]
    pub ttft_ms: f64,
    /// The mock's time per further token, in ms.
    #[arg(long, default_value_t = 5.0)]
    pub tok_ms: f64,
    /// Output tokens per reply.
    #[arg(long, default_value_t = 50)]
    pub tokens: u32,
    /// Output tokens per streamed chunk (an SSE event).
    #[arg(long, default_value_t = 1)]
    pub tokens_per_chunk: u32,
    /// chat, responses or messages.
    #[arg(long, default_value = "chat")]
    pub api: String,
    /// Seconds of load before measuring [default: 2; with --mcp 0.5].
    #[arg(long)]
    pub warmup_s: Option<f64>,
    /// Seconds measured per run [default: 5; with --mcp 2, per row].
    #[arg(long)]
    pub window_s: Option<f64>,
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
    /// An agent's history in every request: this many turns of a user's question, the
    /// model's tool call, the tool's JSON result (~1 KB) and the answer, with 4 tools
    /// declared (10 turns: ~15 KB a request). --api chat or messages.
    #[arg(long, default_value_t = 0, value_name = "TURNS")]
    pub history: usize,
    /// An open burst instead of a closed loop: each of the --streams is one request on a
    /// new connection, all started evenly over --burst-s seconds and all measured; the
    /// client's own CPU is shown beside the mock's, and a first token's delay is split into
    /// the connect, the mock's wait from accept to the request and its frames' lateness.
    #[arg(long)]
    pub burst: bool,
    /// With --burst: the seconds over which the streams start.
    #[arg(long, default_value_t = 2.0, requires = "burst")]
    pub burst_s: f64,
    /// Serve the mock from this plimsoll executable instead of this one (an older build,
    /// to compare before and after a change under the same load).
    #[arg(long, value_name = "PATH")]
    pub mock_exe: Option<std::path::PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Measure the mock's MCP server instead: clients call tools/call on /mcp (tools that
    /// answer at once) in a closed loop; a row per era × reply × tool × client count, each
    /// with a fresh mock: calls/s, p50/p99 latency, the mock's CPU µs per call. One run
    /// per row: run it again to see the spread.
    #[arg(long, conflicts_with_all = ["streams", "ttft_ms", "tok_ms", "tokens",
        "tokens_per_chunk", "api", "repeat", "limits", "reasoning", "prompt_tokens", "no_cache",
        "history", "burst"])]
    pub mcp: bool,
    /// With --mcp: client counts, a row each (each client: one connection, one MCP session).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,8,64",
        requires = "mcp"
    )]
    pub clients: Vec<usize>,
    /// With --mcp: how the mock answers (its scenario's mcp.reply): JSON bodies or SSE streams.
    #[arg(long, value_delimiter = ',', default_value = "json,sse", requires = "mcp",
        value_parser = ["json", "sse"])]
    pub reply: Vec<String>,
    /// With --mcp: the protocol era the clients speak: legacy (initialize, Mcp-Session-Id,
    /// 2025-11-25) or stateless (every request names 2026-07-28 in its _meta).
    #[arg(long, value_delimiter = ',', default_value = "legacy,stateless", requires = "mcp",
        value_parser = ["legacy", "stateless"])]
    pub era: Vec<String>,
    /// Measure the mock's audio path instead: streams of speech (24 kHz PCM at real time)
    /// from a mock held to one core with one worker thread, a row per stream count: its
    /// audio frames' lateness, chunks a second, CPU per chunk, and whether it kept time.
    #[arg(long, conflicts_with_all = ["mcp", "streams", "ttft_ms", "tok_ms", "tokens",
        "tokens_per_chunk", "api", "limits", "reasoning", "prompt_tokens", "no_cache"])]
    pub audio: bool,
    /// With --audio: stream counts, a row each.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "250,500,1000",
        requires = "audio"
    )]
    pub audio_streams: Vec<usize>,
    /// With --audio: audio per chunk, in ms (20: a phone frame, five times the writes of
    /// the mock's own default `chunk_ms = 100`; each write costs the same).
    #[arg(long, default_value_t = 20.0, requires = "audio")]
    pub chunk_ms: f64,
    /// With --audio: seconds of speech a request asks for.
    #[arg(long, default_value_t = 10.0, requires = "audio")]
    pub speech_s: f64,
    /// With --audio: every request its own text, so every one is synthesized (default:
    /// one text for all, spoken once and kept by the mock: the audio path alone).
    #[arg(long, requires = "audio")]
    pub distinct: bool,
    /// With --audio: the speech's format: pcm (24 kHz 16-bit), or mp3 (the speech API's
    /// default and LiveKit's plugin's: encoded once per text and kept, like pcm).
    #[arg(long, default_value = "pcm", requires = "audio", value_parser = ["pcm", "mp3"])]
    pub format: String,
    /// With --mcp: the tool called: echo, or kv (kv_put and kv_get in turn, each get checked).
    #[arg(long, value_delimiter = ',', default_value = "echo,kv", requires = "mcp",
        value_parser = ["echo", "kv"])]
    pub tool: Vec<String>,
}

pub fn run(c: BenchCommand) -> anyhow::Result<u8> {
    if !matches!(c, BenchCommand::NullSut | BenchCommand::HoldThreads { .. }) {
        // The bench's mock, SUT and scratch files go should it be killed.
        super::guard_up();
    }
    match c {
        BenchCommand::Mock(a) => mock(*a)?,
        BenchCommand::Calls {
            calls,
            transport,
            turns,
            json,
        } => bench_calls(calls, &transport, turns, json)?,
        BenchCommand::Driver {
            sessions,
            turns,
            body_bytes,
            window_s,
            json,
        } => bench_driver(sessions, turns, body_bytes, window_s, json)?,
        BenchCommand::Live {
            steps,
            ticks,
            reps,
            json,
        } => bench_live(&steps, ticks, reps, json),
        BenchCommand::Probe {
            threads,
            samples,
            connections,
            memory_mb,
            forks,
        } => {
            let exe = std::env::current_exe().context("locating the plimsoll executable")?;
            let held = bench::Held {
                threads,
                connections,
                memory_mb,
                forks,
            };
            bench::run_probe_bench(&exe, held, samples.max(1))?
        }
        BenchCommand::NullSut => bench::serve_null_sut()?,
        BenchCommand::HoldThreads {
            threads,
            connections,
            memory_mb,
            forks,
        } => bench::hold_threads(bench::Held {
            threads,
            connections,
            memory_mb,
            forks,
        }),
    }
    Ok(0)
}

fn bench_driver(
    sessions: Vec<usize>,
    turns: u32,
    body_bytes: usize,
    window_s: f64,
    json: bool,
) -> anyhow::Result<()> {
    if sessions.contains(&0) || turns == 0 {
        anyhow::bail!("--sessions: every count ≥ 1, and --turns ≥ 1");
    }
    if !(window_s.is_finite() && (0.2..=3600.0).contains(&window_s)) {
        anyhow::bail!("--window-s {window_s}: between 0.2 and 3600 seconds");
    }
    if body_bytes > 10_000_000 {
        anyhow::bail!("--body-bytes {body_bytes}: at most 10000000");
    }
    bench::print_driver_bench(
        &bench::DriverBenchOptions {
            sessions,
            turns,
            body_bytes,
            window: std::time::Duration::from_secs_f64(window_s),
            exe: std::env::current_exe().context("locating the plimsoll executable")?,
        },
        json,
    )
}

/// Each transport's rows in turn, the harness pinned apart from the bot's core once.
fn bench_calls(
    calls: Vec<usize>,
    transports: &[String],
    turns: u32,
    json: bool,
) -> anyhow::Result<()> {
    if calls.contains(&0) || turns == 0 {
        anyhow::bail!("--calls: every count ≥ 1, and --turns ≥ 1");
    }
    let cores = probe::affinity::available();
    // The bot on the last core; the harness (this process) on the others.
    let bot_core = *cores.last().context("no core to run on")?;
    if cores.len() > 1 {
        let _ = probe::affinity::pin_current(&cores[..cores.len() - 1]);
    }
    let mine = probe::affinity::available();
    for t in transports {
        bench::print_calls_bench(
            &bench::CallsBenchOptions {
                calls: calls.clone(),
                transport: match t.as_str() {
                    "webrtc" => bench::Transport::WebRtc,
                    _ => bench::Transport::Twilio,
                },
                turns,
                bot_core,
                harness_cores: mine.len(),
                apart: !mine.contains(&bot_core),
            },
            json,
        )?;
    }
    Ok(())
}

fn mock(a: BenchMockArgs) -> anyhow::Result<()> {
    if a.mcp {
        return mcp(a);
    }
    if a.audio {
        return audio(a);
    }
    // Client and mock on cores of their own (before the client's runtime is built).
    let (mock_cores, client_cores) = bench::partition_client_and_mock().unwrap_or_default();
    let opts = bench::MockBenchOptions {
        streams: a.streams,
        ttft_ms: a.ttft_ms,
        tok_ms: a.tok_ms,
        tokens: a.tokens,
        tokens_per_chunk: a.tokens_per_chunk,
        api: a.api,
        warmup: std::time::Duration::from_secs_f64(a.warmup_s.unwrap_or(2.0).max(0.1)),
        window: std::time::Duration::from_secs_f64(a.window_s.unwrap_or(5.0).max(0.5)),
        repeat: a.repeat,
        mock_workers: a.mock_workers,
        limits: a.limits,
        reasoning: a.reasoning,
        prompt_tokens: a.prompt_tokens,
        cache: !a.no_cache,
        history: a.history,
        exe: match a.mock_exe {
            Some(p) => p,
            None => std::env::current_exe().context("locating the plimsoll executable")?,
        },
        mock_cores,
        client_cores,
    };
    if a.burst {
        if a.burst_s.is_nan() || a.burst_s <= 0.0 {
            anyhow::bail!("--burst-s must be more than 0 (got {})", a.burst_s);
        }
        let over = std::time::Duration::from_secs_f64(a.burst_s);
        return bench::print_burst_bench(&opts, over, a.json);
    }
    bench::print_mock_bench(&opts, a.json)
}

fn audio(a: BenchMockArgs) -> anyhow::Result<()> {
    if a.chunk_ms < 10.0 || a.speech_s <= 0.0 || a.audio_streams.contains(&0) {
        anyhow::bail!("--chunk-ms must be ≥ 10, --speech-s > 0 and every stream count ≥ 1");
    }
    let cores = probe::affinity::available();
    // The mock on the last core; the client (this process) on the others.
    let mock_core = *cores.last().context("no core to run on")?;
    if cores.len() > 1 {
        let _ = probe::affinity::pin_current(&cores[..cores.len() - 1]);
    }
    let opts = bench::AudioBenchOptions {
        streams: a.audio_streams,
        chunk_ms: a.chunk_ms,
        seconds: a.speech_s,
        distinct: a.distinct,
        mp3: a.format == "mp3",
        warmup: std::time::Duration::from_secs_f64(a.warmup_s.unwrap_or(3.0).max(0.1)),
        window: std::time::Duration::from_secs_f64(a.window_s.unwrap_or(5.0).max(0.5)),
        mock_core,
        exe: std::env::current_exe().context("locating the plimsoll executable")?,
    };
    bench::print_audio_bench(&opts, a.json)
}

fn mcp(a: BenchMockArgs) -> anyhow::Result<()> {
    let opts = bench::McpBenchOptions {
        clients: a.clients,
        eras: a
            .era
            .iter()
            .map(|s| bench::Era::parse(s))
            .collect::<Result<_, _>>()?,
        replies: a
            .reply
            .iter()
            .map(|s| bench::Reply::parse(s))
            .collect::<Result<_, _>>()?,
        tools: a
            .tool
            .iter()
            .map(|s| bench::Tool::parse(s))
            .collect::<Result<_, _>>()?,
        // Short floors, so a test can run every row in a few seconds.
        warmup: std::time::Duration::from_secs_f64(a.warmup_s.unwrap_or(0.5).max(0.05)),
        window: std::time::Duration::from_secs_f64(a.window_s.unwrap_or(2.0).max(0.1)),
        mock_workers: a.mock_workers,
        exe: std::env::current_exe().context("locating the plimsoll executable")?,
    };
    bench::print_mcp_bench(&opts, a.json)
}

/// `plimsoll bench live`: a row a board size.
fn bench_live(steps: &[usize], ticks: usize, reps: usize, json: bool) {
    let rows: Vec<live::cost::Cost> = steps
        .iter()
        .map(|n| live::cost::measure(*n, ticks, reps))
        .collect();
    if json {
        println!("{}", serde_json::json!({ "live": rows }));
        return;
    }
    println!("the live view's answers, over a running level of {ticks} s (median of {reps}):");
    println!(
        "| levels | parts ms | parts KB | metrics ms | metrics KB | page open + scrape / 5 s |"
    );
    println!(
        "|-------:|---------:|---------:|-----------:|-----------:|-------------------------:|"
    );
    for r in rows {
        println!(
            "| {:>6} | {:>8.2} | {:>8.1} | {:>10.3} | {:>10.1} | {:>22.2} % |",
            r.steps,
            r.parts_ms,
            r.parts_bytes as f64 / 1024.0,
            r.metrics_ms,
            r.metrics_bytes as f64 / 1024.0,
            r.share_of_a_core * 100.0
        );
    }
}
