//! The runners of request/reply sessions: C concurrent sessions of K turns against the
//! SUT (closed model: every session runs its turns back to back, with think time between
//! them; open model: sessions arrive at a rate), resident sessions, or a soak's churn.
//!
//! `drive` checks the target once and picks how sessions start: `arrivals` (closed, open,
//! churn) or `resident`. `session` runs one session by its protocol: `sequence` for HTTP
//! and SSE (setup, turn and teardown requests, each sent by `http_turn`), `talk` for the
//! sessions that keep one link — `ws`, `chat` (an OpenAI or Anthropic chat client) and
//! `raw` (a TCP or Unix socket) — each behind the `talk::Link` trait. `vars` is a
//! session's values (a replayed turn's words among them), `pace` its turns and pauses. What they record goes into `run::Recorder`; a bus step goes to
//! `crate::bus`. Reading session files is `spec`'s business.

mod arrivals;
mod chat;
mod http_turn;
mod pace;
mod raw;
mod resident;
mod sequence;
mod session;
mod talk;
pub(crate) mod vars;
mod ws;

use crate::address::{self, port_of, ws_base};
use crate::run::{DriveOptions, DriveReport, Lag, Progress, Recorder};
use crate::spec::{Protocol, SessionSpec};
use crate::template::render;
use anyhow::bail;
use std::sync::Arc;
use std::time::Duration;

/// Drives `spec`'s sessions as `opts` asks, counting into `progress` as they go.
pub async fn drive(
    spec: &SessionSpec,
    opts: &DriveOptions,
    progress: Arc<Progress>,
) -> anyhow::Result<DriveReport> {
    if opts.concurrency == 0 {
        bail!("concurrency must be at least 1");
    }
    if let Some(bus) = &spec.bus {
        return crate::bus::drive(bus, opts, progress).await;
    }
    let port = port_of(&opts.base);
    check_target(spec, opts, &port)?;
    if opts.shard.is_some() && (opts.resident.is_some() || opts.churn.is_some()) {
        bail!("a shard drives a slice of one step's sessions; resident sessions and a soak's churn are not sharded");
    }
    let late_start_ms = wait_for_start(opts.start_at).await;
    let mut recorder = Recorder::new(progress, opts.churn.is_some());
    if spec.protocol.is_voice() {
        let name = spec.protocol.voice_name();
        let frame_ms = spec.voice.as_ref().map_or(20, |v| v.frame_ms);
        recorder.voice =
            Some(crate::run::VoiceTally::new(name, frame_ms).keeping(opts.keep_audio.clone()));
    }
    let recorder = Arc::new(recorder);
    let lag = Lag::start();
    let spec = Arc::new(spec.clone());
    let interval = opts
        .arrival_rate
        .filter(|r| *r > 0.0)
        .map(|r| Duration::from_secs_f64(1.0 / r));
    if let (Some(n), Protocol::Http | Protocol::Sse) = (opts.resident, spec.protocol) {
        let timed_out = resident::drive(spec, opts, port, recorder.clone(), n).await;
        return Ok(recorder.report(lag, timed_out).await);
    }
    let planned = (0..opts.concurrency)
        .filter(|i| address::in_shard(*i, opts.shard))
        .count() as u64;
    if let (Some(for_how_long), None) = (opts.churn, interval) {
        let timed_out = arrivals::churn(spec, opts, port, recorder.clone(), for_how_long).await;
        return Ok(recorder.report(lag, timed_out).await);
    }
    let timed_out = arrivals::arrive(spec, opts, port, recorder.clone(), interval).await?;
    let mut r = recorder.report(lag, timed_out).await;
    r.late_start_ms = late_start_ms;
    r.sessions_planned = planned;
    Ok(r)
}

/// The first session's URL checked once, before thousands of sessions start.
fn check_target(spec: &SessionSpec, opts: &DriveOptions, port: &str) -> anyhow::Result<()> {
    let services = vars::service_vars(opts);
    let ws = ws_base(&opts.base);
    let mut vars = vec![
        ("base", opts.base.as_str()),
        ("ws_base", &ws),
        ("port", port),
        ("session", "s0"),
        ("turn", "1"),
    ];
    vars.extend(services.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let probe_url = render(&spec.turn[0].url, &vars);
    match spec.protocol {
        Protocol::Raw => {
            let (transport, address) = address::socket(&probe_url)?;
            address::check(transport, address, opts.allow_remote)?;
        }
        _ => {
            address::target(&probe_url, opts.allow_remote)?;
        }
    }
    Ok(())
}

/// Waits for the shared start; returns how late it began, in ms.
async fn wait_for_start(at: Option<std::time::SystemTime>) -> f64 {
    let Some(at) = at else { return 0.0 };
    if let Ok(ahead) = at.duration_since(std::time::SystemTime::now()) {
        tokio::time::sleep(ahead).await;
    }
    std::time::SystemTime::now()
        .duration_since(at)
        .map_or(0.0, |late| late.as_secs_f64() * 1000.0)
}
