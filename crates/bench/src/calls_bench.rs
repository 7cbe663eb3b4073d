//! `plimsoll bench calls`: how many voice calls one harness core drives in real time. The
//! driver a step uses places N calls, Twilio (`echo_bot`) or WebRTC (`webrtc_bot`), every
//! frame of every call on its 20 ms deadline, each reply played as a phone or a browser
//! plays it and decoded for its words, against a bot that costs almost nothing (on a core
//! of its own). A row per call
//! count: how late the frames left (p50, p99, max), the harness's CPU (cores, and ms per
//! call-second), the replies' response time (what the harness adds to what a step
//! measures), the replies it read, the calls that failed — and whether it kept time (frame
//! lateness p99 within 5 ms, its core not full). In a step the mock's speech and
//! transcriptions share the harness's core as well: `plimsoll bench mock --audio` prices
//! those.

use crate::calls_cpu::{filled_first, on_clock_secs};
use crate::procfs::cpu_seconds;
use crate::{echo_bot, webrtc_bot};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How the calls reach the bot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Twilio Media Streams: µ-law in JSON over a WebSocket.
    Twilio,
    /// WebRTC: Opus over DTLS-SRTP, offered over Pipecat's SmallWebRTC signaling.
    WebRtc,
}

#[derive(Clone, Debug)]
pub struct CallsBenchOptions {
    /// Call counts, a row each.
    pub calls: Vec<usize>,
    pub transport: Transport,
    /// Turns a call speaks.
    pub turns: u32,
    /// The core the bot runs on (the harness on the others).
    pub bot_core: usize,
    /// The cores the harness (this process) may run on: what "kept time" is judged
    /// against, so a many-core machine is not read as one core.
    pub harness_cores: usize,
    /// Whether the harness runs apart from the bot's core (false on a 1-core box, or
    /// where pinning was refused: they share).
    pub apart: bool,
}

/// One row: a call count's figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CallsBenchRow {
    pub calls: usize,
    pub frames_per_s: f64,
    pub late_p99_ms: f64,
    pub harness_cpu_cores: f64,
    pub harness_cpu_ms_per_call_s: f64,
    pub response_p50_ms: Option<f64>,
    pub replies_read: u64,
    pub turns: u64,
    pub calls_failed: u64,
    /// Calls a harness core drives at this rate (calls over the harness's cores busy).
    pub calls_per_harness_core: f64,
    /// Frame lateness p99 ≤ 5 ms, the harness below 95 % of its cores, and no call failed.
    pub kept_time: bool,
    /// Where the CPU went: the harness on and off the clock, and the bot.
    pub cpu: crate::Split,
    /// A failed call's error (`kind: message`): the first of its kind, the kinds in
    /// alphabetical order.
    pub first_failure: Option<String>,
    /// Where the row did not keep time: which part filled first, in words.
    pub filled_first: Option<String>,
}

/// Each row as it finishes (`on_row`), with a line of progress on stderr every few
/// seconds within a row: a thousand calls take a while.
pub async fn run_calls_bench(
    opts: &CallsBenchOptions,
    on_row: &mut dyn FnMut(&CallsBenchRow),
) -> anyhow::Result<Vec<CallsBenchRow>> {
    let bot = Bot::start(opts.transport, opts.bot_core)?;
    let dir = guard::Scratch::new("bench-calls")?;
    let path = dir.path().join("session.toml");
    std::fs::write(&path, session(&bot, opts.turns))?;
    let spec = drive::SessionSpec::load(&path)?;
    drop(dir);
    let mut rows = Vec::new();
    for &n in &opts.calls {
        eprintln!("bench calls: {n} calls …");
        let row = one_row(&spec, &bot, n, opts.harness_cores).await?;
        on_row(&row);
        rows.push(row);
    }
    Ok(rows)
}

/// The bot a bench calls: where, how, and its thread (whose CPU is not the harness's).
struct Bot {
    transport: Transport,
    /// The host and port.
    origin: String,
    tid: i32,
    /// Its thread's name, as the kernel keeps it.
    name: String,
}

impl Bot {
    fn start(transport: Transport, core: usize) -> anyhow::Result<Bot> {
        let b = match transport {
            Transport::Twilio => echo_bot::start(core)?,
            Transport::WebRtc => webrtc_bot::start(core)?,
        };
        Ok(Bot {
            transport,
            origin: b.addr.to_string(),
            tid: b.tid,
            name: std::fs::read_to_string(format!("/proc/self/task/{}/comm", b.tid))?
                .trim_end()
                .to_string(),
        })
    }
}

fn session(bot: &Bot, turns: u32) -> String {
    let (protocol, url, signaling) = match bot.transport {
        Transport::Twilio => ("twilio", format!("ws://{}/ws", bot.origin), ""),
        Transport::WebRtc => (
            "webrtc",
            format!("http://{}/api/offer", bot.origin),
            "signaling = \"pipecat\"\n",
        ),
    };
    format!(
        "protocol = \"{protocol}\"\nurl = \"{url}\"\nturns = {turns}\nthink_ms = 300\nturn_timeout_ms = 30000\n[voice]\n{signaling}answer_timeout_ms = 5000\nreply_end_ms = 400\n"
    )
}

/// The driver's options for a row of `calls`: every reply decoded as a step decodes it,
/// and counted in `read` (no owner: words are not checked).
fn drive_options(bot: &Bot, calls: usize, read: Arc<AtomicU64>) -> drive::DriveOptions {
    drive::DriveOptions {
        concurrency: calls,
        base: format!("http://{}", bot.origin),
        replicas: Vec::new(),
        seed: 1,
        step_timeout: Duration::from_secs(600),
        allow_remote: false,
        arrival_rate: None,
        resident: None,
        on_resident: None,
        slow: None,
        churn: None,
        shard: None,
        start_at: None,
        name_prefix: format!("b{calls}-"),
        replay: None,
        services: Vec::new(),
        voice_owner: Some(drive::call::Owner::new(
            Arc::new(move |_| {
                read.fetch_add(1, Relaxed);
                None
            }),
            None,
        )),
        keep_audio: None,
    }
}

async fn one_row(
    spec: &drive::SessionSpec,
    bot: &Bot,
    calls: usize,
    harness_cores: usize,
) -> anyhow::Result<CallsBenchRow> {
    let read = Arc::new(AtomicU64::new(0));
    let opts = drive_options(bot, calls, read.clone());
    let ((cpu0, bot0), on0) = (harness_and_bot_cpu(bot.tid)?, on_clock_secs(&bot.name));
    let t0 = Instant::now();
    let progress = Arc::new(drive::Progress::default());
    let ticker = tokio::spawn(tell_progress(progress.clone(), calls, spec.turns as u64));
    let report = drive::drive(spec, &opts, progress).await;
    ticker.abort();
    let report = report?;
    let secs = t0.elapsed().as_secs_f64();
    let (cpu1, bot1) = harness_and_bot_cpu(bot.tid)?;
    let cpu = cpu1 - cpu0;
    let on = (on_clock_secs(&bot.name) - on0).clamp(0.0, cpu);
    let split = crate::Split {
        on_clock_cores: on / secs,
        off_clock_cores: (cpu - on) / secs,
        bot_cores: (bot1 - bot0) / secs,
    };
    let v = report.voice.unwrap_or_default();
    let call_s = calls as f64 * secs;
    let cores = cpu / secs;
    let first_failure = report
        .first_errors
        .iter()
        .next()
        .map(|(kind, msg)| format!("{kind}: {msg}"));
    let filled = filled_first(
        &split,
        harness_cores,
        v.frame_jitter_p99_ms,
        first_failure.as_deref(),
    );
    Ok(CallsBenchRow {
        calls,
        frames_per_s: calls as f64 * 1000.0 / v.frame_ms.max(1) as f64,
        late_p99_ms: v.frame_jitter_p99_ms,
        harness_cpu_cores: cores,
        harness_cpu_ms_per_call_s: cpu * 1000.0 / call_s.max(1e-9),
        response_p50_ms: v.response_p50_ms,
        replies_read: read.load(Relaxed),
        turns: v.turns,
        calls_failed: report.sessions_failed,
        calls_per_harness_core: calls as f64 / cores.max(1e-9),
        kept_time: filled.is_none(),
        cpu: split,
        first_failure,
        filled_first: filled,
    })
}

/// Every 5 s on stderr: the calls done and in flight, and the turns of all spoken.
async fn tell_progress(p: Arc<drive::Progress>, calls: usize, turns: u64) {
    let t0 = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_secs(5)).await;
        let done = p.sessions_ok.load(Relaxed) + p.sessions_failed.load(Relaxed);
        eprintln!(
            "  {calls} calls, {:.0} s: {done} done, {} in flight, {} of {} turns spoken",
            t0.elapsed().as_secs_f64(),
            p.in_flight.load(Relaxed),
            p.turns.load(Relaxed),
            calls as u64 * turns
        );
    }
}

/// The harness's CPU seconds (this process's, less the bot thread's) and the bot thread's.
fn harness_and_bot_cpu(bot_tid: i32) -> anyhow::Result<(f64, f64)> {
    let (u, s) = cpu_seconds(std::process::id())?;
    let bot = bot_cpu(bot_tid)?;
    Ok((u + s - bot, bot))
}

/// The bot thread's CPU seconds.
fn bot_cpu(bot_tid: i32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{bot_tid}/stat"))?;
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    let hz = probe::tree::clock_ticks_per_sec().max(1.0);
    Ok((ticks(11) + ticks(12)) / hz)
}
