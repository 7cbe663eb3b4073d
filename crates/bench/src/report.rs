//! Printing benchmark figures: a table with the machine's fingerprint, each run and
//! the median, or JSON.

use crate::mcp_bench::{run_mcp_bench, McpBenchOptions, McpBenchRow};
use crate::mcp_requests::Era;
use crate::mock_bench::{run_mock_bench, MockBenchOptions, MockBenchResult};
use anyhow::Context;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Raises the open-files limit, then refuses a run before anything starts when `flag` at
/// `count` needs more sockets than it allows (`per` each, and 64 to spare).
pub(crate) fn sockets_for(flag: &str, count: usize, per: usize, lower: &str) -> anyhow::Result<()> {
    let nofile = crate::raise_nofile_limit();
    if (nofile as usize) < per * count + 64 {
        let many = if per == 1 {
            "that many"
        } else {
            "twice that many"
        };
        anyhow::bail!("{flag} {count} needs {many} sockets but the open-files limit is {nofile}; raise it (ulimit -n) or lower {lower}");
    }
    Ok(())
}

/// The runtime a bench's client runs on.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")
}

/// A table row: its name, how to read it from a run, its unit.
type RowOf<R> = (&'static str, fn(&R) -> f64, &'static str);
type Row = RowOf<MockBenchResult>;

/// A column per run and the median, a line per row.
fn print_runs<R>(rows: &[RowOf<R>], runs: &[R]) {
    print!("{:<34}", "");
    for i in 0..runs.len() {
        print!("{:>12}", format!("run {}", i + 1));
    }
    println!("{:>12}", "median");
    for (name, get, unit) in rows {
        print!("{:<34}", format!("{name} ({unit})").replace(" ()", ""));
        for r in runs {
            print!("{:>12}", fmt(get(r)));
        }
        println!("{:>12}", fmt(median(runs.iter().map(get).collect())));
    }
}

const ROWS: &[Row] = &[
    ("TTFT error p50", |r| r.errors.ttft_err_p50_ms, "ms"),
    ("TTFT error p99", |r| r.errors.ttft_err_p99_ms, "ms"),
    ("TTFT error max", |r| r.errors.ttft_err_max_ms, "ms"),
    ("interval error p50", |r| r.errors.interval_err_p50_ms, "ms"),
    ("interval error p99", |r| r.errors.interval_err_p99_ms, "ms"),
    ("interval error max", |r| r.errors.interval_err_max_ms, "ms"),
    (
        "mock lateness p99 (server side)",
        |r| r.mock_late_p99_ms,
        "ms",
    ),
    ("chunks/s", |r| r.chunks_per_s, ""),
    ("mock CPU per chunk", |r| r.mock_cpu_us_per_chunk, "µs"),
    ("mock CPU per request", |r| r.mock_cpu_us_per_request, "µs"),
    ("  of which its oracle", |r| r.oracle_us_per_request, "µs"),
    (
        "  of which its prompt cache",
        |r| r.cache_us_per_request,
        "µs",
    ),
    (
        "  of which user (mock code)",
        |r| r.mock_user_us_per_chunk,
        "µs",
    ),
    (
        "  of which kernel (TCP send)",
        |r| r.mock_sys_us_per_chunk,
        "µs",
    ),
    ("mock CPU", |r| r.mock_cpu_cores, "cores"),
    (
        "mock RSS per open stream",
        |r| r.mock_rss_kb_per_stream,
        "KB",
    ),
    ("mock RSS idle → peak", |r| r.mock_peak_rss_mb, "MB"),
    ("requests completed", |r| r.requests_ok as f64, ""),
    ("requests failed", |r| r.requests_failed as f64, ""),
];

pub fn print_mock_bench(opts: &MockBenchOptions, json: bool) -> anyhow::Result<()> {
    sockets_for("--streams", opts.streams, 1, "--streams")?;
    let rt = runtime()?;
    let runs = rt.block_on(run_mock_bench(opts))?;
    if json {
        println!(
            "{}",
            serde_json::json!({"machine": crate::fingerprint(), "streams": opts.streams,
                "ttft_ms": opts.ttft_ms, "tok_ms": opts.tok_ms, "tokens": opts.tokens,
                "tokens_per_chunk": opts.tokens_per_chunk, "api": opts.api,
                "prompt_tokens": opts.prompt_tokens, "cache": opts.cache, "runs": runs})
        );
        return Ok(());
    }
    println!("plimsoll bench mock — {}", crate::fingerprint());
    println!(
        "{} streams, api {}, ttft {} ms, {} tokens at {} ms, {} a chunk; {:.0} s warm-up + {:.0} s window × {}",
        opts.streams,
        opts.api,
        opts.ttft_ms,
        opts.tokens,
        opts.tok_ms,
        match opts.tokens_per_chunk {
            1 => "1 token".to_string(),
            n => format!("{n} tokens"),
        },
        opts.warmup.as_secs_f64(),
        opts.window.as_secs_f64(),
        runs.len()
    );
    if opts.history > 0 {
        println!(
            "an agent's history in every request: {} turns of tool calls and their JSON results, 4 tools declared ({} bytes a request)",
            opts.history,
            runs.first().map_or(0, |r| r.request_bytes)
        );
    }
    if opts.prompt_tokens > 0 || !opts.cache {
        println!(
            "a {}-token system prompt shared by every request; the mock's prompt cache {}",
            opts.prompt_tokens,
            if opts.cache { "on" } else { "off" }
        );
    }
    println!("{}", cores_line(opts));
    print_runs(ROWS, &runs);
    let idle = median(runs.iter().map(|r| r.mock_idle_rss_mb).collect());
    println!("(mock idle RSS {idle:.1} MB; interval error compares each gap between delta events with its nominal gap; \
              a coalesced write shows as a gap of 0)");
    Ok(())
}

/// Where client and mock ran: "the mock on cores 1, the client on core 0 (apart)".
fn cores_line(opts: &MockBenchOptions) -> String {
    let on = |c: &[usize]| match c.len() {
        1 => format!("core {}", probe::affinity::list(c)),
        _ => format!("cores {}", probe::affinity::list(c)),
    };
    match opts.mock_cores.is_empty() {
        true => match probe::affinity::available().len() {
            1 => "the mock and the client share the one core here".into(),
            n => format!(
                "the mock and the client share all {n} cores (pinning them apart was refused)"
            ),
        },
        false => format!(
            "the mock on {}, the client on {}: apart, so neither makes the other late",
            on(&opts.mock_cores),
            on(&opts.client_cores)
        ),
    }
}

fn fmt(x: f64) -> String {
    if x.is_nan() {
        "—".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// `plimsoll bench mock --mcp`: a line per row as it is measured, or JSON at the end.
pub fn print_mcp_bench(opts: &McpBenchOptions, json: bool) -> anyhow::Result<()> {
    let most = opts.clients.iter().copied().max().unwrap_or(0);
    sockets_for("--clients", most, 1, "--clients")?;
    let rt = runtime()?;
    if json {
        let rows = rt.block_on(run_mcp_bench(opts, |_| {}))?;
        println!(
            "{}",
            serde_json::json!({"machine": crate::fingerprint(),
                "warmup_s": opts.warmup.as_secs_f64(), "window_s": opts.window.as_secs_f64(),
                "rows": rows})
        );
        return Ok(());
    }
    print_mcp_head(opts);
    rt.block_on(run_mcp_bench(opts, print_mcp_row))?;
    println!(
        "(latency: sent to the answer's last byte, as the client saw it; mock CPU: utime+stime from /proc \
         over the window; the clients run on the same cores (client cores); legacy = initialize and \
         Mcp-Session-Id at {}, stateless = _meta at {}; kv = kv_put and kv_get in turn)",
        Era::Legacy.version(),
        Era::Stateless.version()
    );
    Ok(())
}

/// The MCP table's title lines and column heads.
fn print_mcp_head(opts: &McpBenchOptions) {
    println!("plimsoll bench mock --mcp — {}", crate::fingerprint());
    println!(
        "tools/call over Streamable HTTP at /mcp, tools answering at once; each row a fresh mock, \
         C clients each on one connection and one MCP session (closed loop); {:.1} s warm-up + {:.1} s window",
        opts.warmup.as_secs_f64(),
        opts.window.as_secs_f64()
    );
    println!(
        "{:<10}{:<6}{:<5}{:>8}{:>10}{:>8}{:>8}{:>28}{:>11}{:>13}{:>16}{:>8}",
        "era",
        "reply",
        "tool",
        "clients",
        "calls/s",
        "p50 ms",
        "p99 ms",
        "mock µs/call (user+kernel)",
        "mock cores",
        "client cores",
        "RSS KB/1k calls",
        "failed"
    );
}

/// One row of the MCP table.
fn print_mcp_row(r: &McpBenchRow) {
    let cpu = format!(
        "{} ({}+{})",
        fmt(r.mock_cpu_us_per_call),
        fmt(r.mock_user_us_per_call),
        fmt(r.mock_sys_us_per_call)
    );
    println!(
        "{:<10}{:<6}{:<5}{:>8}{:>10.0}{:>8.3}{:>8.3}{:>28}{:>11.2}{:>13.2}{:>16.1}{:>8}",
        r.era.name(),
        r.reply.name(),
        r.tool.name(),
        r.clients,
        r.calls_per_s,
        r.latency_p50_ms,
        r.latency_p99_ms,
        cpu,
        r.mock_cpu_cores,
        r.client_cpu_cores,
        r.mock_rss_kb_per_1k_calls,
        r.failed
    );
}

/// `plimsoll bench mock --audio`: a table of the rows (or JSON), with the machine.
pub fn print_audio_bench(opts: &crate::AudioBenchOptions, json: bool) -> anyhow::Result<()> {
    let most = opts.streams.iter().copied().max().unwrap_or(0);
    sockets_for("--audio-streams", most, 1, "the count")?;
    let rt = runtime()?;
    let rows = rt.block_on(crate::run_audio_bench(opts))?;
    if json {
        println!(
            "{}",
            serde_json::json!({"machine": crate::fingerprint(), "chunk_ms": opts.chunk_ms,
            "speech_s": opts.seconds, "distinct_texts": opts.distinct, "rows": rows})
        );
        return Ok(());
    }
    println!("plimsoll bench mock --audio — {}", crate::fingerprint());
    println!(
        "speech at 24 kHz (16-bit PCM) in {} ms chunks at real time, {:.0} s a request, {} text{}; the mock on core {} with one worker thread; {:.1} s warm-up + {:.1} s window",
        opts.chunk_ms,
        opts.seconds,
        if opts.distinct { "each request its own" } else { "one" },
        if opts.distinct { " (every request synthesized)" } else { " for all" },
        opts.mock_core,
        opts.warmup.as_secs_f64(),
        opts.window.as_secs_f64()
    );
    println!(
        "{:>8}{:>12}{:>10}{:>10}{:>10}{:>12}{:>14}{:>16}{:>10}{:>8}  holds",
        "streams",
        "chunks/s",
        "late p50",
        "late p99",
        "late max",
        "mock cores",
        "mock µs/chunk",
        "client p99 ms",
        "requests",
        "failed"
    );
    for r in &rows {
        println!(
            "{:>8}{:>12.0}{:>10.2}{:>10.2}{:>10.2}{:>12.2}{:>14.2}{:>16.2}{:>10}{:>8}  {}",
            r.streams,
            r.chunks_per_s,
            r.late_p50_ms,
            r.late_p99_ms,
            r.late_max_ms,
            r.mock_cpu_cores,
            r.mock_cpu_us_per_chunk,
            r.client_behind_p99_ms,
            r.requests_ok,
            r.requests_failed,
            if r.sustained { "yes" } else { "no" }
        );
    }
    println!("(late: how late the mock's audio frames left against their deadlines, from its own timing; holds: late p99 ≤ 5 ms with the mock below 95 % of its core; client: how late bytes arrived against when they play, the client's own lag included)");
    Ok(())
}

const BURST_ROWS: &[RowOf<crate::BurstResult>] = &[
    ("TTFT error p50", |r| r.errors.ttft_err_p50_ms, "ms"),
    ("TTFT error p99", |r| r.errors.ttft_err_p99_ms, "ms"),
    ("TTFT error max", |r| r.errors.ttft_err_max_ms, "ms"),
    ("interval error p50", |r| r.errors.interval_err_p50_ms, "ms"),
    ("interval error p99", |r| r.errors.interval_err_p99_ms, "ms"),
    ("  of which connect p99", |r| r.connect_p99_ms, "ms"),
    (
        "  after connect p99",
        |r| r.ttft_err_after_connect_p99_ms,
        "ms",
    ),
    (
        "  mock: accept to request p99",
        |r| r.mock_accept_wait_p99_ms,
        "ms",
    ),
    ("  mock: frames late p99", |r| r.mock_late_p99_ms, "ms"),
    (
        "client timer late p99 (not in TTFT)",
        |r| r.client_wake_late_p99_ms,
        "ms",
    ),
    ("mock CPU per chunk", |r| r.mock_cpu_us_per_chunk, "µs"),
    ("mock CPU per request", |r| r.mock_cpu_us_per_request, "µs"),
    ("mock CPU", |r| r.mock_cpu_cores, "cores"),
    ("client CPU (this process)", |r| r.client_cpu_cores, "cores"),
    ("client CPU per chunk", |r| r.client_cpu_us_per_chunk, "µs"),
    ("requests completed", |r| r.requests_ok as f64, ""),
    ("requests failed", |r| r.requests_failed as f64, ""),
];

/// `plimsoll bench mock --burst`: each burst and the median, or JSON.
pub fn print_burst_bench(
    opts: &MockBenchOptions,
    over: std::time::Duration,
    json: bool,
) -> anyhow::Result<()> {
    sockets_for("--streams", opts.streams, 1, "--streams")?;
    let rt = runtime()?;
    let runs = rt.block_on(crate::run_burst_bench(opts, over))?;
    if json {
        println!(
            "{}",
            serde_json::json!({"machine": crate::fingerprint(), "burst": true, "streams": opts.streams,
                "over_s": over.as_secs_f64(), "ttft_ms": opts.ttft_ms, "tok_ms": opts.tok_ms,
                "tokens": opts.tokens, "api": opts.api, "history": opts.history, "runs": runs})
        );
        return Ok(());
    }
    println!("plimsoll bench mock --burst — {}", crate::fingerprint());
    println!(
        "{} streams started over {:.1} s, one request each on a new connection; api {}, ttft {} ms, {} tokens at {} ms; {} bursts",
        opts.streams,
        over.as_secs_f64(),
        opts.api,
        opts.ttft_ms,
        opts.tokens,
        opts.tok_ms,
        runs.len()
    );
    println!("{}", cores_line(opts));
    print_runs(BURST_ROWS, &runs);
    println!("(TTFT error: from the connect's start to the first delta event, less the nominal TTFT; after connect: the same from the request's send; the mock's figures are its own clocks: from accepting a connection to its first request's head, and each frame's lateness against its deadline)");
    Ok(())
}

/// `plimsoll bench driver`: a row per session count, or JSON.
pub fn print_driver_bench(opts: &crate::DriverBenchOptions, json: bool) -> anyhow::Result<()> {
    let most = opts.sessions.iter().copied().max().unwrap_or(0);
    sockets_for("--sessions", most, 1, "the count")?;
    let rows = crate::run_driver_bench(opts)?;
    if json {
        println!(
            "{}",
            serde_json::json!({"machine": crate::fingerprint(), "turns": opts.turns,
                "body_bytes": opts.body_bytes, "window_s": opts.window.as_secs_f64(), "rows": rows})
        );
        return Ok(());
    }
    println!("plimsoll bench driver — {}", crate::fingerprint());
    println!(
        "HTTP sessions of {} turns, {} bytes of JSON a turn, against a null SUT that answers at once; {:.1} s a row",
        opts.turns,
        opts.body_bytes,
        opts.window.as_secs_f64()
    );
    println!(
        "{:>9}{:>10}{:>10}{:>18}{:>14}{:>19}{:>12}{:>10}",
        "sessions",
        "turns",
        "turns/s",
        "driver µs/turn",
        "driver cores",
        "null SUT µs/turn",
        "lag p99 ms",
        "failed"
    );
    for r in &rows {
        println!(
            "{:>9}{:>10}{:>10.0}{:>18.1}{:>14.2}{:>19.1}{:>12.2}{:>10}",
            r.sessions,
            r.turns,
            r.turns_per_s,
            r.driver_us_per_turn,
            r.driver_cores,
            r.sut_us_per_turn,
            r.lag_p99_ms,
            r.failed_sessions
        );
    }
    println!("(driver: the CPU of its threads, plimsoll-drive, by the kernel's count — a step's `driver` part; each turn one request and its reply, timed and recorded; lag: how late the driver's own ticker woke)");
    Ok(())
}
