//! `plimsoll bench mock --mcp`: what the mock's MCP server serves and what a call costs
//! it. For every row (era × reply form × tool × client count) a fresh mock in its own
//! process serves tools that answer at once; C clients, each on one keep-alive
//! connection with one MCP session, call `tools/call` in a closed loop; after a warm-up
//! one window is measured: calls completed, each call's latency as its client saw it
//! (sent to last byte of the answer), the mock's CPU (utime + stime from /proc) per call,
//! the clients' own CPU, and what the mock's memory grew by. Every answer is checked
//! (not an error; a `kv_get` returns the value just put). The messages are
//! `mcp_requests`'s; printing is `report`'s.

use crate::mcp_requests::{self, Era, Reply, Tool};
use crate::mock_process::start_mock;
use crate::procfs::{cpu_seconds, rss_kb};
use anyhow::bail;
use drive::http::Conn;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

#[derive(Clone, Debug)]
pub struct McpBenchOptions {
    /// Client counts, one row each.
    pub clients: Vec<usize>,
    pub eras: Vec<Era>,
    pub replies: Vec<Reply>,
    pub tools: Vec<Tool>,
    pub warmup: Duration,
    pub window: Duration,
    /// Tokio worker threads of the mock (None: one per core).
    pub mock_workers: Option<usize>,
    /// The `plimsoll` executable that serves the mock.
    pub exe: PathBuf,
}

/// Figures of one row's measured window.
#[derive(Clone, Debug, Serialize)]
pub struct McpBenchRow {
    pub era: Era,
    pub reply: Reply,
    pub tool: Tool,
    pub clients: usize,
    pub calls: u64,
    pub failed: u64,
    pub calls_per_s: f64,
    pub latency_p50_ms: f64,
    pub latency_p99_ms: f64,
    pub latency_max_ms: f64,
    pub mock_cpu_us_per_call: f64,
    /// The part spent in the mock's own code (user mode) …
    pub mock_user_us_per_call: f64,
    /// … and in the kernel (loopback TCP, both directions).
    pub mock_sys_us_per_call: f64,
    pub mock_cpu_cores: f64,
    /// The benchmark's own CPU (its clients), sharing the same cores.
    pub client_cpu_cores: f64,
    /// What the mock's RSS grew by over the window, per 1,000 calls.
    pub mock_rss_kb_per_1k_calls: f64,
}

/// What one client counted while the window was open.
struct Tally {
    ok: u64,
    failed: u64,
    hist: Histogram<u64>,
}

/// The flags every client reads.
#[derive(Default)]
struct Flags {
    recording: AtomicBool,
    stop: AtomicBool,
}

/// Runs every row, handing each to `on_row` as it is measured.
pub async fn run_mcp_bench(
    opts: &McpBenchOptions,
    mut on_row: impl FnMut(&McpBenchRow),
) -> anyhow::Result<Vec<McpBenchRow>> {
    if opts.clients.is_empty() || opts.clients.contains(&0) {
        bail!("--clients needs client counts of at least 1, e.g. --clients 1,8,64");
    }
    if opts.eras.is_empty() || opts.replies.is_empty() || opts.tools.is_empty() {
        bail!("--era, --reply and --tool each need at least one value");
    }
    let dir = guard::Scratch::new("bench-mcp")?;
    let mut rows = Vec::new();
    for &era in &opts.eras {
        for &reply in &opts.replies {
            let scenario = dir.path().join(format!("scenario-{}.toml", reply.name()));
            std::fs::write(&scenario, mcp_requests::scenario(reply))?;
            for &tool in &opts.tools {
                for &clients in &opts.clients {
                    let row = one_row(opts, &scenario, (era, reply, tool, clients)).await?;
                    on_row(&row);
                    rows.push(row);
                }
            }
        }
    }
    Ok(rows)
}

/// What the mock and the clients used over the window.
struct Window {
    mock_user: f64,
    mock_sys: f64,
    client_cpu: f64,
    rss_growth_kb: f64,
    secs: f64,
}

/// One row: a fresh mock, its clients started and warmed up, one window measured.
async fn one_row(
    opts: &McpBenchOptions,
    scenario: &Path,
    (era, reply, tool, clients): (Era, Reply, Tool, usize),
) -> anyhow::Result<McpBenchRow> {
    let (mock, addr) = start_mock(&opts.exe, opts.mock_workers, scenario)?;
    let pid = mock.pid();
    let flags = Arc::new(Flags::default());
    let tasks: Vec<_> = (0..clients)
        .map(|n| tokio::spawn(client(addr, n, era, tool, flags.clone())))
        .collect();
    tokio::time::sleep(opts.warmup).await;
    let me = std::process::id();
    let (mock0, me0, rss0) = (cpu_seconds(pid)?, cpu_seconds(me)?, rss_kb(pid)?);
    let t0 = Instant::now();
    flags.recording.store(true, Relaxed);
    tokio::time::sleep(opts.window).await;
    flags.recording.store(false, Relaxed);
    let (mock1, me1, rss1) = (cpu_seconds(pid)?, cpu_seconds(me)?, rss_kb(pid)?);
    let w = Window {
        mock_user: mock1.0 - mock0.0,
        mock_sys: mock1.1 - mock0.1,
        client_cpu: (me1.0 + me1.1) - (me0.0 + me0.1),
        rss_growth_kb: rss1 as f64 - rss0 as f64,
        secs: t0.elapsed().as_secs_f64(),
    };
    flags.stop.store(true, Relaxed);
    let mut tally = Tally {
        ok: 0,
        failed: 0,
        hist: hist(),
    };
    for t in tasks {
        let abort = t.abort_handle();
        match tokio::time::timeout(Duration::from_secs(5), t).await {
            Ok(Ok(c)) => {
                tally.ok += c.ok;
                tally.failed += c.failed;
                tally.hist.add(&c.hist)?;
            }
            // A client that could not open its session, or never came back.
            _ => {
                abort.abort();
                tally.failed += 1;
            }
        }
    }
    drop(mock);
    Ok(row((era, reply, tool, clients), &tally, &w))
}

fn row(
    (era, reply, tool, clients): (Era, Reply, Tool, usize),
    t: &Tally,
    w: &Window,
) -> McpBenchRow {
    let calls = t.ok.max(1) as f64;
    let ms = |us: u64| us as f64 / 1000.0;
    McpBenchRow {
        era,
        reply,
        tool,
        clients,
        calls: t.ok,
        failed: t.failed,
        calls_per_s: t.ok as f64 / w.secs,
        latency_p50_ms: ms(t.hist.value_at_quantile(0.5)),
        latency_p99_ms: ms(t.hist.value_at_quantile(0.99)),
        latency_max_ms: ms(t.hist.max()),
        mock_cpu_us_per_call: (w.mock_user + w.mock_sys) * 1e6 / calls,
        mock_user_us_per_call: w.mock_user * 1e6 / calls,
        mock_sys_us_per_call: w.mock_sys * 1e6 / calls,
        mock_cpu_cores: (w.mock_user + w.mock_sys) / w.secs,
        client_cpu_cores: w.client_cpu / w.secs,
        mock_rss_kb_per_1k_calls: w.rss_growth_kb * 1000.0 / calls,
    }
}

fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("static bounds")
}

/// One client: its session opened, then `tools/call` after `tools/call` until told to
/// stop; calls completed while the window is open are counted, and those also sent in
/// it timed (µs).
async fn client(addr: SocketAddr, n: usize, era: Era, tool: Tool, flags: Arc<Flags>) -> Tally {
    let mut t = Tally {
        ok: 0,
        failed: 0,
        hist: hist(),
    };
    let mut conn = Conn::new(addr);
    let base = match mcp_requests::open(&mut conn, era).await {
        Ok(h) => h,
        Err(e) => {
            eprintln!("bench mock --mcp: client {n} could not open its session: {e:#}");
            t.failed += 1;
            return t;
        }
    };
    let mut body = Vec::with_capacity(512);
    let mut seq = 0u64;
    while !flags.stop.load(Relaxed) {
        let c = mcp_requests::call(era, tool, n, seq, &base);
        seq += 1;
        body.clear();
        let in_window_at_send = flags.recording.load(Relaxed);
        let sent = Instant::now();
        let res = conn
            .request("POST", "/mcp", &c.headers, c.body, |_, d| {
                body.extend_from_slice(d);
                true
            })
            .await;
        let took_us = sent.elapsed().as_micros() as u64;
        let good =
            matches!(res, Ok((200, _))) && mcp_requests::answered(&body, c.expect.as_deref());
        if flags.recording.load(Relaxed) {
            if !good {
                t.failed += 1;
            } else {
                t.ok += 1;
                if in_window_at_send {
                    let _ = t.hist.record(took_us.max(1));
                }
            }
        }
        if !good {
            // A kv pair out of step starts again with a put; a broken connection is
            // not hammered.
            seq += seq % 2;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    t
}
