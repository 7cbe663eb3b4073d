//! `plimsoll bench mock`: C concurrent streams against a mock in its own process.

use crate::mock_process::start_mock_on;
use crate::mock_requests::{agent_body, api_parts, system_prompt};
use crate::procfs::{cpu_seconds, rss_kb};
use crate::timing_errors::TimingErrors;
use anyhow::bail;
use bytes::Bytes;
use drive::http::Conn;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

#[derive(Clone, Debug)]
pub struct MockBenchOptions {
    pub streams: usize,
    pub ttft_ms: f64,
    pub tok_ms: f64,
    pub tokens: u32,
    pub tokens_per_chunk: u32,
    /// chat | responses | messages
    pub api: String,
    pub warmup: Duration,
    pub window: Duration,
    pub repeat: usize,
    /// Tokio worker threads of the mock (None: one per core).
    pub mock_workers: Option<usize>,
    /// A provider quota and slots that never bind, to measure what checking them costs.
    pub limits: bool,
    /// Reasoning tokens per reply (0: none): Anthropic thinking streamed before the
    /// text, OpenAI reasoning hidden before it (with encrypted content in Responses).
    pub reasoning: u32,
    /// A system prompt of this many tokens in every request, the same for all (0: none):
    /// what the provider's prompt cache serves.
    pub prompt_tokens: u32,
    /// The mock's prompt cache on (as in every scenario by default) or off.
    pub cache: bool,
    /// Turns of an agent's tool-calling history in every request (0: a bare question).
    pub history: usize,
    /// The `plimsoll` executable that serves the mock.
    pub exe: PathBuf,
    /// The cores the mock runs on, apart from the client's (empty: they share every core).
    pub mock_cores: Vec<usize>,
    /// The cores the client (this process) runs on, when apart from the mock's.
    pub client_cores: Vec<usize>,
}

/// Figures of one measured window.
#[derive(Clone, Debug, Serialize, Default)]
pub struct MockBenchResult {
    pub streams: usize,
    pub requests_ok: u64,
    pub requests_failed: u64,
    #[serde(flatten)]
    pub errors: TimingErrors,
    pub chunks_per_s: f64,
    pub mock_cpu_us_per_chunk: f64,
    /// The mock's CPU per completed request (what a request's parsing, prompt cache and
    /// oracle cost beside its chunks).
    pub mock_cpu_us_per_request: f64,
    /// The part spent in the mock's own code (user mode).
    pub mock_user_us_per_chunk: f64,
    /// The part spent in the kernel, mostly the loopback TCP send path.
    pub mock_sys_us_per_chunk: f64,
    pub mock_cpu_cores: f64,
    pub mock_rss_kb_per_stream: f64,
    pub mock_idle_rss_mb: f64,
    pub mock_peak_rss_mb: f64,
    pub mock_late_p99_ms: f64,
    pub mock_late_max_ms: f64,
    /// The mock's own account of its integrity oracle and prompt cache, CPU µs per
    /// request it took over the window.
    pub oracle_us_per_request: f64,
    pub cache_us_per_request: f64,
    /// The size of one request's body.
    pub request_bytes: usize,
}

struct Shared {
    ttft: Mutex<Histogram<u64>>,
    interval: Mutex<Histogram<u64>>,
    chunks: AtomicU64,
    ok: AtomicU64,
    failed: AtomicU64,
    recording: AtomicBool,
    stop: AtomicBool,
}

pub(crate) fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("static bounds")
}

pub async fn run_mock_bench(opts: &MockBenchOptions) -> anyhow::Result<Vec<MockBenchResult>> {
    let prepared = prepare(opts, "bench")?;
    let mut out = Vec::new();
    for i in 0..opts.repeat.max(1) {
        eprintln!("bench mock: run {}/{} …", i + 1, opts.repeat.max(1));
        out.push(one_run(opts, &prepared.scenario).await?);
    }
    Ok(out)
}

/// A bench's scratch directory with its scenario, removed when dropped: after the
/// runs, or when one of them fails.
pub(crate) struct Prepared {
    _dir: guard::Scratch,
    pub scenario: PathBuf,
}

/// Checks the options (a clear error before any mock starts: a stream's requests are
/// built from them) and writes the bench's scenario into a scratch directory.
pub(crate) fn prepare(opts: &MockBenchOptions, name: &str) -> anyhow::Result<Prepared> {
    if opts.streams == 0 || opts.tokens == 0 || opts.tokens_per_chunk == 0 {
        bail!("--streams, --tokens and --tokens-per-chunk must be at least 1");
    }
    api_parts(&opts.api, 0, false, "")?;
    if opts.history > 0 {
        agent_body(&opts.api, 0, opts.history, "")?;
    }
    let dir = guard::Scratch::new(name)?;
    let prepared = Prepared {
        scenario: dir.path().join("scenario.toml"),
        _dir: dir,
    };
    std::fs::write(&prepared.scenario, scenario_text(opts))?;
    Ok(prepared)
}

/// The bench's scenario: the timing asked for, and the options that add to it.
fn scenario_text(opts: &MockBenchOptions) -> String {
    format!(
            "[defaults]\nttft_ms = {}\ntok_ms = {}\noutput_tokens = {}\ntokens_per_chunk = {}\njitter = \"fixed\"\n",
            opts.ttft_ms, opts.tok_ms, opts.tokens, opts.tokens_per_chunk
        ) + &if opts.reasoning > 0 {
            format!("reasoning = {{ tokens = {} }}\n", opts.reasoning)
        } else {
            String::new()
        } + if opts.limits {
            // Every bucket and a slot gate on the path of every request, never full.
            "[provider]\nquota = { rpm = 1e9, tpm = 1e11, itpm = 1e11, otpm = 1e11 }\ncapacity = { max_in_flight = 1000000 }\n"
        } else {
            ""
        } + if opts.cache {
            ""
        } else {
            "[cache]\nenabled = false\n"
        }
}

/// Nominal arrival of delta event `j` after the request was sent. Anthropic thinking
/// streams its deltas before the text's (a multiple of the chunk size keeps them in
/// step); OpenAI reasoning is a silence of its tokens' time before the first one.
fn due_ms(opts: &MockBenchOptions, j: u32) -> f64 {
    let r = opts.reasoning;
    let per = opts.tokens_per_chunk;
    match (r, opts.api.as_str()) {
        (0, _) | (_, "messages") => {
            let through = ((j + 1) * per).min(opts.tokens + r);
            opts.ttft_ms + (through - 1) as f64 * opts.tok_ms
        }
        _ => {
            let through = ((j + 1) * per).min(opts.tokens);
            opts.ttft_ms + (r + through) as f64 * opts.tok_ms
        }
    }
}

/// One measured run: a fresh mock, the streams started and warmed up, then one window
/// in which the mock's CPU, memory and lateness and the streams' timing are read.
async fn one_run(
    opts: &MockBenchOptions,
    scenario: &std::path::Path,
) -> anyhow::Result<MockBenchResult> {
    let (mock, addr) = start_mock_on(&opts.exe, opts.mock_workers, scenario, &opts.mock_cores)?;
    let pid = mock.pid();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let idle_rss = rss_kb(pid)?;
    let shared = Arc::new(Shared {
        ttft: Mutex::new(hist()),
        interval: Mutex::new(hist()),
        chunks: AtomicU64::new(0),
        ok: AtomicU64::new(0),
        failed: AtomicU64::new(0),
        recording: AtomicBool::new(false),
        stop: AtomicBool::new(false),
    });
    let tasks = start_streams(addr, opts, &shared);
    tokio::time::sleep(opts.warmup).await;
    let mut admin = Conn::new(addr);
    admin
        .simple("POST", "/plimsoll/timing/reset", Bytes::new())
        .await?;
    let before = timing_of(&mut admin).await?;
    let w = window(pid, opts, &shared, idle_rss).await?;
    let after = timing_of(&mut admin).await?;
    shared.stop.store(true, Relaxed);
    for t in tasks {
        t.abort();
    }
    drop(mock);
    Ok(result(opts, &shared, &w, (&before, &after)))
}

/// The mock's own figures (`GET /plimsoll/timing`).
pub(crate) async fn timing_of(admin: &mut Conn) -> anyhow::Result<serde_json::Value> {
    let (_, body) = admin
        .simple("GET", "/plimsoll/timing", Bytes::new())
        .await?;
    Ok(serde_json::from_slice(&body)?)
}

/// The CPU µs per request a counter of the mock's timing figures (`oracle_cpu_us`,
/// `cache_cpu_us`) grew by between `before` and `after`; NaN where the mock has none.
pub(crate) fn per_request(before: &serde_json::Value, after: &serde_json::Value, key: &str) -> f64 {
    let spent = after[key].as_f64().unwrap_or(f64::NAN) - before[key].as_f64().unwrap_or(f64::NAN);
    let n = after["requests"].as_f64().unwrap_or(0.0) - before["requests"].as_f64().unwrap_or(0.0);
    spent / n.max(1.0)
}

/// The body of stream `n`'s request `seq`: a bare question, or an agent's history.
pub(crate) fn body_of(
    opts: &MockBenchOptions,
    n: usize,
    seq: usize,
    system: &str,
) -> (&'static str, &'static [u8], String) {
    let id = n * 1_000_000 + seq;
    match opts.history {
        0 => api_parts(&opts.api, id, opts.reasoning > 0, system),
        h => agent_body(&opts.api, id, h, system),
    }
    .expect("checked before")
}

/// C streams, their first requests spread over one nominal stream length, as a steady
/// load would be.
fn start_streams(
    addr: SocketAddr,
    opts: &MockBenchOptions,
    shared: &Arc<Shared>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let opts_arc = Arc::new(opts.clone());
    let ramp = Duration::from_secs_f64(due_ms(opts, u32::MAX / 2) / 1000.0).min(opts.warmup);
    let mut tasks = Vec::with_capacity(opts.streams);
    for n in 0..opts.streams {
        let delay = ramp.mul_f64(n as f64 / opts.streams as f64);
        tasks.push(tokio::spawn(stream_loop(
            addr,
            n,
            delay,
            opts_arc.clone(),
            shared.clone(),
        )));
    }
    tasks
}

/// What the mock used over the measured window.
struct Window {
    user: f64,
    sys: f64,
    secs: f64,
    idle_rss: u64,
    peak_rss: u64,
}

/// The measured window: the streams record, the mock's CPU time is read at both ends
/// and its memory every 100 ms.
async fn window(
    pid: u32,
    opts: &MockBenchOptions,
    shared: &Shared,
    idle_rss: u64,
) -> anyhow::Result<Window> {
    let cpu0 = cpu_seconds(pid)?;
    let t0 = Instant::now();
    shared.recording.store(true, Relaxed);
    let mut peak_rss = idle_rss;
    while t0.elapsed() < opts.window {
        tokio::time::sleep(Duration::from_millis(100)).await;
        peak_rss = peak_rss.max(rss_kb(pid)?);
    }
    shared.recording.store(false, Relaxed);
    let cpu1 = cpu_seconds(pid)?;
    Ok(Window {
        user: cpu1.0 - cpu0.0,
        sys: cpu1.1 - cpu0.1,
        secs: t0.elapsed().as_secs_f64(),
        idle_rss,
        peak_rss,
    })
}

/// The run's figures from what the streams recorded, the window and the mock's timing.
fn result(
    opts: &MockBenchOptions,
    shared: &Shared,
    w: &Window,
    (before, timing): (&serde_json::Value, &serde_json::Value),
) -> MockBenchResult {
    let (user, sys, secs) = (w.user, w.sys, w.secs);
    let cpu = user + sys;
    let chunks = shared.chunks.load(Relaxed) as f64;
    let ttft = shared.ttft.lock().expect("no panics while held").clone();
    let interval = shared
        .interval
        .lock()
        .expect("no panics while held")
        .clone();
    let per_chunk = |secs: f64| {
        if chunks > 0.0 {
            secs * 1e6 / chunks
        } else {
            0.0
        }
    };
    MockBenchResult {
        streams: opts.streams,
        requests_ok: shared.ok.load(Relaxed),
        requests_failed: shared.failed.load(Relaxed),
        errors: TimingErrors::of(&ttft, &interval),
        chunks_per_s: chunks / secs,
        mock_cpu_us_per_chunk: per_chunk(cpu),
        mock_cpu_us_per_request: cpu * 1e6 / (shared.ok.load(Relaxed).max(1) as f64),
        mock_user_us_per_chunk: per_chunk(user),
        mock_sys_us_per_chunk: per_chunk(sys),
        mock_cpu_cores: cpu / secs,
        mock_rss_kb_per_stream: w.peak_rss.saturating_sub(w.idle_rss) as f64 / opts.streams as f64,
        mock_idle_rss_mb: w.idle_rss as f64 / 1024.0,
        mock_peak_rss_mb: w.peak_rss as f64 / 1024.0,
        mock_late_p99_ms: timing["late_p99_ms"].as_f64().unwrap_or(f64::NAN),
        mock_late_max_ms: timing["late_max_ms"].as_f64().unwrap_or(f64::NAN),
        oracle_us_per_request: per_request(before, timing, "oracle_cpu_us"),
        cache_us_per_request: per_request(before, timing, "cache_cpu_us"),
        request_bytes: body_of(opts, 0, 0, &system_prompt(opts.prompt_tokens))
            .2
            .len(),
    }
}

/// What one request saw: when it was sent, and when each read arrived with how
/// many delta events it held.
pub(crate) struct Seen {
    sent: Instant,
    pub(crate) status: u16,
    reads: Vec<(Instant, u32)>,
}

pub(crate) const HEADERS: [(&str, &str); 4] = [
    ("content-type", "application/json"),
    ("authorization", "Bearer bench"),
    ("x-api-key", "bench"),
    ("anthropic-version", "2023-06-01"),
];

/// POSTs `body` and counts occurrences of `pattern` (the API's delta-event marker) in
/// each read as it arrives.
pub(crate) async fn post(
    conn: &mut Conn,
    path: &str,
    body: Bytes,
    pattern: &[u8],
) -> anyhow::Result<Seen> {
    let headers: Vec<(String, String)> = HEADERS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let sent = Instant::now();
    let mut reads = Vec::with_capacity(64);
    let (status, _) = conn
        .request("POST", path, &headers, body, |at, data| {
            reads.push((at, count(data, pattern)));
            true
        })
        .await?;
    Ok(Seen {
        sent,
        status,
        reads,
    })
}

fn count(hay: &[u8], needle: &[u8]) -> u32 {
    if needle.is_empty() || hay.len() < needle.len() {
        return 0;
    }
    hay.windows(needle.len()).filter(|w| *w == needle).count() as u32
}

/// How late the first delta event came and how far each gap strayed from its nominal
/// one, µs, into `ttft` and `gaps`; returns the delta events seen.
pub(crate) fn errors(
    opts: &MockBenchOptions,
    seen: &Seen,
    ttft: &mut Vec<u64>,
    gaps: &mut Vec<u64>,
) -> u64 {
    let mut j = 0u32;
    let mut prev: Option<Instant> = None;
    for (at, count) in &seen.reads {
        for _ in 0..*count {
            let since = at.duration_since(seen.sent).as_secs_f64() * 1000.0;
            let err = since - due_ms(opts, j);
            if j == 0 {
                ttft.push((err.max(0.0) * 1000.0) as u64);
            } else if let Some(p) = prev {
                let gap = at.duration_since(p).as_secs_f64() * 1000.0;
                let nominal = due_ms(opts, j) - due_ms(opts, j - 1);
                gaps.push(((gap - nominal).abs() * 1000.0) as u64);
            }
            prev = Some(*at);
            j += 1;
        }
    }
    j as u64
}

async fn stream_loop(
    addr: SocketAddr,
    n: usize,
    delay: Duration,
    opts: Arc<MockBenchOptions>,
    shared: Arc<Shared>,
) {
    tokio::time::sleep(delay).await;
    let mut conn = Conn::new(addr);
    let mut seq = 0usize;
    let mut ttft_errs = Vec::with_capacity(4);
    let mut gap_errs = Vec::with_capacity(64);
    let system = system_prompt(opts.prompt_tokens);
    while !shared.stop.load(Relaxed) {
        let (path, pattern, body) = body_of(&opts, n, seq, &system);
        seq += 1;
        let recording_at_send = shared.recording.load(Relaxed);
        let seen = match post(&mut conn, path, Bytes::from(body), pattern).await {
            Ok(s) if s.status == 200 => s,
            _ => {
                if shared.recording.load(Relaxed) {
                    shared.failed.fetch_add(1, Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let recording = shared.recording.load(Relaxed);
        let in_window = errors(&opts, &seen, &mut ttft_errs, &mut gap_errs);
        if recording {
            shared.chunks.fetch_add(in_window, Relaxed);
            shared.ok.fetch_add(1, Relaxed);
        }
        if recording_at_send && recording {
            if let Ok(mut h) = shared.ttft.lock() {
                for e in ttft_errs.drain(..) {
                    let _ = h.record(e.max(1));
                }
            }
            if let Ok(mut h) = shared.interval.lock() {
                for e in gap_errs.drain(..) {
                    let _ = h.record(e.max(1));
                }
            }
        }
        ttft_errs.clear();
        gap_errs.clear();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_non_overlapping_markers() {
        assert_eq!(super::count(b"xabyabab", b"ab"), 3);
        assert_eq!(super::count(b"a", b"ab"), 0);
    }
}
