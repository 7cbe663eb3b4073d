//! `plimsoll bench mock --audio`: how many concurrent real-time audio streams the mock
//! sustains on one core, and how late its audio frames leave. The mock runs as its own
//! process with one worker thread pinned to one core (the bench's client on the others);
//! each stream asks for speech (24 kHz PCM, or MP3 with `mp3`, streamed in `chunk_ms`
//! chunks at real time) over and over, its texts the same or each its own (then every
//! request is synthesized and, for MP3, encoded).
//! A row per stream count: the mock's frame lateness (p50, p99, max, from its own
//! timing), the chunks a second it sent, its CPU (cores, µs per chunk), and the client's
//! check that every stream kept real time (bytes arriving no later than they play).

use crate::mock_process::start_mock_on;
use crate::procfs::cpu_seconds;
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
pub struct AudioBenchOptions {
    /// Stream counts, a row each.
    pub streams: Vec<usize>,
    pub chunk_ms: f64,
    /// Seconds of speech a request asks for (its text's length at 15 characters a second).
    pub seconds: f64,
    /// Every request its own text (each synthesized); else one text for all.
    pub distinct: bool,
    /// MP3 (the speech API's default) instead of 16-bit PCM.
    pub mp3: bool,
    pub warmup: Duration,
    pub window: Duration,
    /// The core the mock runs on.
    pub mock_core: usize,
    pub exe: PathBuf,
}

/// One row: a stream count's figures over the measured window.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AudioBenchRow {
    pub streams: usize,
    pub chunks_per_s: f64,
    pub late_p50_ms: f64,
    pub late_p99_ms: f64,
    pub late_max_ms: f64,
    pub mock_cpu_cores: f64,
    pub mock_cpu_us_per_chunk: f64,
    /// The client's view: how late bytes arrived against when they play, p99.
    pub client_behind_p99_ms: f64,
    pub requests_ok: u64,
    pub requests_failed: u64,
    /// Frame lateness p99 ≤ 5 ms and the mock below 95 % of its core.
    pub sustained: bool,
}

struct Shared {
    behind: Mutex<Histogram<u64>>,
    chunks: AtomicU64,
    ok: AtomicU64,
    failed: AtomicU64,
    recording: AtomicBool,
    next_text: AtomicU64,
}

/// The scenario's speech: `chunk_ms` chunks at real time after 100 ms.
fn scenario(chunk_ms: f64) -> String {
    format!("[audio]\nchars_per_s = 15\ntts_first_byte_ms = 100\ntts_speed = 1\nchunk_ms = {chunk_ms}\n")
}

/// A text of about `seconds` of speech; its number makes it its own when asked to.
fn text(seconds: f64, n: u64) -> String {
    const WORDS: &[&str] = &[
        "the", "agent", "plans", "a", "careful", "answer", "with", "tools", "and", "memory",
        "under", "load", "today",
    ];
    let mut s = format!("Reply {n}:");
    let mut i = n as usize;
    while (s.len() as f64) < seconds * 15.0 {
        s.push(' ');
        s.push_str(WORDS[i % WORDS.len()]);
        i = i.wrapping_mul(7).wrapping_add(3);
    }
    s.push('.');
    s
}

pub async fn run_audio_bench(opts: &AudioBenchOptions) -> anyhow::Result<Vec<AudioBenchRow>> {
    let dir = guard::Scratch::new("bench-audio")?;
    let path = dir.path().join("scenario.toml");
    std::fs::write(&path, scenario(opts.chunk_ms))?;
    let mut rows = Vec::new();
    for &n in &opts.streams {
        eprintln!("bench mock --audio: {n} streams …");
        rows.push(one_row(opts, n, &path).await?);
    }
    Ok(rows)
}

/// Every stream's task, its first request spread evenly over the warm-up (over one
/// request's length when that is shorter): the window then sees every stream speaking.
/// Capping a longer spread at the warm-up instead started most streams at once, at the
/// window's first instant, and measured their synthesis queue as lateness.
fn start_streams(
    opts: &AudioBenchOptions,
    streams: usize,
    addr: SocketAddr,
    shared: &Arc<Shared>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let opts_arc = Arc::new(opts.clone());
    let spread = opts.seconds.min(opts.warmup.as_secs_f64());
    (0..streams)
        .map(|i| {
            let delay = Duration::from_secs_f64(spread * i as f64 / streams as f64);
            tokio::spawn(stream(
                addr,
                i as u64,
                delay,
                opts_arc.clone(),
                shared.clone(),
            ))
        })
        .collect()
}

async fn one_row(
    opts: &AudioBenchOptions,
    streams: usize,
    scenario: &std::path::Path,
) -> anyhow::Result<AudioBenchRow> {
    let (mock, addr) = start_mock_on(&opts.exe, Some(1), scenario, &[opts.mock_core])?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let shared = Arc::new(Shared {
        behind: Mutex::new(Histogram::new_with_bounds(1, 600_000_000, 3)?),
        chunks: AtomicU64::new(0),
        ok: AtomicU64::new(0),
        failed: AtomicU64::new(0),
        recording: AtomicBool::new(false),
        next_text: AtomicU64::new(0),
    });
    let tasks = start_streams(opts, streams, addr, &shared);
    tokio::time::sleep(opts.warmup).await;
    let mut admin = Conn::new(addr);
    admin
        .simple("POST", "/plimsoll/timing/reset", Bytes::new())
        .await?;
    let cpu0 = cpu_seconds(mock.pid())?;
    let t0 = Instant::now();
    shared.recording.store(true, Relaxed);
    tokio::time::sleep(opts.window).await;
    shared.recording.store(false, Relaxed);
    let cpu1 = cpu_seconds(mock.pid())?;
    let secs = t0.elapsed().as_secs_f64();
    let timing: serde_json::Value = serde_json::from_slice(
        &admin
            .simple("GET", "/plimsoll/timing", Bytes::new())
            .await?
            .1,
    )?;
    for t in tasks {
        t.abort();
    }
    drop(mock);
    let cpu = (cpu1.0 - cpu0.0) + (cpu1.1 - cpu0.1);
    let chunks = timing["audio_frames"].as_f64().unwrap_or(0.0);
    let behind = shared
        .behind
        .lock()
        .map(|h| h.value_at_quantile(0.99))
        .unwrap_or(0) as f64
        / 1000.0;
    let late_p99 = timing["audio_late_p99_ms"].as_f64().unwrap_or(f64::NAN);
    Ok(AudioBenchRow {
        streams,
        chunks_per_s: chunks / secs,
        late_p50_ms: timing["audio_late_p50_ms"].as_f64().unwrap_or(f64::NAN),
        late_p99_ms: late_p99,
        late_max_ms: timing["audio_late_max_ms"].as_f64().unwrap_or(f64::NAN),
        mock_cpu_cores: cpu / secs,
        mock_cpu_us_per_chunk: if chunks > 0.0 {
            cpu * 1e6 / chunks
        } else {
            0.0
        },
        client_behind_p99_ms: behind,
        requests_ok: shared.ok.load(Relaxed),
        requests_failed: shared.failed.load(Relaxed),
        sustained: late_p99 <= 5.0 && cpu / secs < 0.95,
    })
}

/// When the byte before `got` plays, from the request: after the mock's 100 ms first
/// byte, at the start of the chunk that carries it (whole frames of MP3 a chunk).
fn plays_at(opts: &AudioBenchOptions, got: usize) -> f64 {
    let (audio_s, chunk_s) = if opts.mp3 {
        let mp3 = mock::serve::audio::mp3::seconds_of;
        (
            mp3(got),
            mp3(mock::serve::audio::mp3::chunk_bytes(opts.chunk_ms)),
        )
    } else {
        (got as f64 / 48000.0, opts.chunk_ms / 1000.0)
    };
    0.1 + ((audio_s / chunk_s).ceil().max(1.0) - 1.0) * chunk_s
}

/// One stream: speech asked for over and over, each read checked against when its
/// bytes play.
async fn stream(
    addr: SocketAddr,
    i: u64,
    delay: Duration,
    opts: Arc<AudioBenchOptions>,
    shared: Arc<Shared>,
) {
    tokio::time::sleep(delay).await;
    let mut conn = Conn::new(addr);
    let same = text(opts.seconds, 0);
    let headers = vec![("content-type".to_string(), "application/json".to_string())];
    loop {
        let input = match opts.distinct {
            true => text(
                opts.seconds,
                shared.next_text.fetch_add(1, Relaxed) + 1 + i * 1_000_000,
            ),
            false => same.clone(),
        };
        let format = if opts.mp3 { "mp3" } else { "pcm" };
        let body = serde_json::json!({"model": "tts", "voice": "alloy", "input": input, "response_format": format}).to_string();
        let sent = Instant::now();
        let mut got = 0usize;
        let r = conn
            .request(
                "POST",
                "/v1/audio/speech",
                &headers,
                Bytes::from(body),
                |at, data| {
                    got += data.len();
                    if shared.recording.load(Relaxed) {
                        // The byte before `got` plays at sent + 100 ms + its time in the audio;
                        // it should have arrived by the start of the chunk that carries it.
                        let plays = plays_at(&opts, got);
                        let behind = at.duration_since(sent).as_secs_f64() - plays;
                        if let Ok(mut h) = shared.behind.lock() {
                            let _ = h.record((behind.max(0.0) * 1e6) as u64 + 1);
                        }
                        shared.chunks.fetch_add(1, Relaxed);
                    }
                    true
                },
            )
            .await;
        match r {
            Ok((200, _)) => shared.ok.fetch_add(1, Relaxed),
            _ => shared.failed.fetch_add(1, Relaxed),
        };
    }
}
