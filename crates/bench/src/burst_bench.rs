//! `plimsoll bench mock --burst`: C streams, each one request on a connection of its
//! own, started evenly over a few seconds (an open burst, not a closed loop), every one
//! measured: how late the first token and each gap came at the client, what the mock
//! spent, and what the client itself spent on the same cores (a late frame is the mock's
//! only when the client had room to read it).

use crate::mock_bench::{body_of, errors, hist, post, prepare, timing_of, MockBenchOptions};
use crate::mock_process::start_mock_on;
use crate::mock_requests::system_prompt;
use crate::procfs::cpu_seconds;
use crate::timing_errors::TimingErrors;
use bytes::Bytes;
use drive::http::Conn;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Figures of one burst.
#[derive(Clone, Debug, Serialize, Default)]
pub struct BurstResult {
    pub streams: usize,
    pub over_s: f64,
    pub requests_ok: u64,
    pub requests_failed: u64,
    #[serde(flatten)]
    pub errors: TimingErrors,
    /// The mock's own account of how late its frames left, p99.
    pub mock_late_p99_ms: f64,
    /// Where a late first token's time went, p99 of each: the client's timer waking a
    /// stream after its start time (not in the TTFT error), its connect, the mock's wait
    /// from accept to the request's head, and the first token after connect.
    pub client_wake_late_p99_ms: f64,
    pub connect_p99_ms: f64,
    pub mock_accept_wait_p99_ms: f64,
    pub ttft_err_after_connect_p99_ms: f64,
    pub chunks: u64,
    pub mock_cpu_us_per_chunk: f64,
    pub mock_cpu_us_per_request: f64,
    /// Mean cores over the burst (its first start to its last end).
    pub mock_cpu_cores: f64,
    pub client_cpu_cores: f64,
    pub client_cpu_us_per_chunk: f64,
}

/// What one stream saw: its first token's error from the connect's start and its gaps'
/// (µs), its chunks, and (µs) how late its timer woke it, its connect, and its first
/// token's error after the connect.
type Seen = Option<(Vec<u64>, Vec<u64>, u64, [u64; 3])>;

/// `opts.repeat` bursts, each against a fresh mock.
pub async fn run_burst_bench(
    opts: &MockBenchOptions,
    over: Duration,
) -> anyhow::Result<Vec<BurstResult>> {
    let prepared = prepare(opts, "burst")?;
    let mut out = Vec::new();
    for i in 0..opts.repeat.max(1) {
        eprintln!("bench mock --burst: run {}/{} …", i + 1, opts.repeat.max(1));
        out.push(one_burst(opts, over, &prepared.scenario).await?);
    }
    Ok(out)
}

async fn one_burst(
    opts: &MockBenchOptions,
    over: Duration,
    scenario: &std::path::Path,
) -> anyhow::Result<BurstResult> {
    let (mock, addr) = start_mock_on(&opts.exe, opts.mock_workers, scenario, &opts.mock_cores)?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut admin = Conn::new(addr);
    let (mock0, me0) = (cpu_seconds(mock.pid())?, cpu_seconds(std::process::id())?);
    let t0 = Instant::now() + Duration::from_millis(50);
    let opts_arc = Arc::new(opts.clone());
    let system = Arc::new(system_prompt(opts.prompt_tokens));
    let tasks: Vec<_> = (0..opts.streams)
        .map(|n| {
            let at = t0 + over.mul_f64(n as f64 / opts.streams as f64);
            let (o, sys) = (opts_arc.clone(), system.clone());
            tokio::spawn(async move { one_stream(addr, n, at, &o, &sys).await })
        })
        .collect();
    let mut seen = Vec::with_capacity(tasks.len());
    for t in tasks {
        seen.push(t.await.unwrap_or(None));
    }
    let secs = t0.elapsed().as_secs_f64();
    let (mock1, me1) = (cpu_seconds(mock.pid())?, cpu_seconds(std::process::id())?);
    let after = timing_of(&mut admin).await?;
    drop(mock);
    let cpu = |a: (f64, f64), b: (f64, f64)| (b.0 - a.0) + (b.1 - a.1);
    Ok(figures(
        opts,
        over,
        &seen,
        (cpu(mock0, mock1), cpu(me0, me1), secs),
        &after,
    ))
}

/// One request on a fresh connection at `at`.
async fn one_stream(
    addr: std::net::SocketAddr,
    n: usize,
    at: Instant,
    opts: &MockBenchOptions,
    system: &str,
) -> Seen {
    let (path, pattern, body) = body_of(opts, n, 0, system);
    tokio::time::sleep_until(at).await;
    let woke = Instant::now();
    let mut conn = Conn::new(addr);
    conn.connect().await.ok()?;
    let connect = woke.elapsed();
    let seen = match post(&mut conn, path, Bytes::from(body), pattern).await {
        Ok(s) if s.status == 200 => s,
        _ => return None,
    };
    let (mut ttft, mut gaps) = (Vec::with_capacity(1), Vec::with_capacity(64));
    let chunks = errors(opts, &seen, &mut ttft, &mut gaps);
    let us = |d: Duration| d.as_micros() as u64;
    let after_connect = ttft.first().copied().unwrap_or(0);
    let parts = [us(woke.duration_since(at)), us(connect), after_connect];
    // The TTFT error counts from the connect's start, as a client that connects per
    // request sees it.
    for t in &mut ttft {
        *t += us(connect);
    }
    Some((ttft, gaps, chunks, parts))
}

/// The burst's figures: (mock CPU s, client CPU s, wall s) in `cpu`.
fn figures(
    opts: &MockBenchOptions,
    over: Duration,
    seen: &[Seen],
    (mock_cpu, client_cpu, secs): (f64, f64, f64),
    timing: &serde_json::Value,
) -> BurstResult {
    let (mut ttft, mut gaps) = (hist(), hist());
    let mut parts = [hist(), hist(), hist()];
    let mut chunks = 0u64;
    for (t, g, c, p) in seen.iter().flatten() {
        for e in t {
            let _ = ttft.record((*e).max(1));
        }
        for e in g {
            let _ = gaps.record((*e).max(1));
        }
        for (h, v) in parts.iter_mut().zip(p) {
            let _ = h.record((*v).max(1));
        }
        chunks += c;
    }
    let ok = seen.iter().flatten().count() as u64;
    let ms = |us: u64| us as f64 / 1000.0;
    let per_chunk = |s: f64| s * 1e6 / chunks.max(1) as f64;
    BurstResult {
        streams: opts.streams,
        over_s: over.as_secs_f64(),
        requests_ok: ok,
        requests_failed: seen.len() as u64 - ok,
        errors: TimingErrors::of(&ttft, &gaps),
        mock_late_p99_ms: timing["late_p99_ms"].as_f64().unwrap_or(f64::NAN),
        client_wake_late_p99_ms: ms(parts[0].value_at_quantile(0.99)),
        connect_p99_ms: ms(parts[1].value_at_quantile(0.99)),
        mock_accept_wait_p99_ms: timing["accept_wait_p99_ms"].as_f64().unwrap_or(f64::NAN),
        ttft_err_after_connect_p99_ms: ms(parts[2].value_at_quantile(0.99)),
        chunks,
        mock_cpu_us_per_chunk: per_chunk(mock_cpu),
        mock_cpu_us_per_request: mock_cpu * 1e6 / ok.max(1) as f64,
        mock_cpu_cores: mock_cpu / secs,
        client_cpu_cores: client_cpu / secs,
        client_cpu_us_per_chunk: per_chunk(client_cpu),
    }
}
