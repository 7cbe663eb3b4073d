//! One session from its start to its end: counted in flight, given its values (and a
//! slow consumer's pace when it is one of the slow share), run by its protocol — a
//! sequence of HTTP or SSE requests, or turns over one link — and recorded as gone
//! through or failed. When sessions start is `arrivals`' business.

use super::chat::ChatLink;
use super::raw::RawLink;
use super::sequence;
use super::talk::talk;
use super::vars::{fixed_vars, Vars};
use super::ws::WsLink;
use crate::run::Ctx;
use crate::run::Failure;
use crate::run::{DriveOptions, InFlight, Recorder};
use crate::spec::{Protocol, SessionSpec};
use std::sync::atomic::Ordering::Relaxed;
use tokio::time::Instant;

/// `start` is when the session was meant to begin: its latency counts from there.
/// Whether the session went through.
pub(super) async fn run_session(
    i: usize,
    start: Instant,
    spec: &SessionSpec,
    opts: &DriveOptions,
    port: &str,
    recorder: &Recorder,
) -> bool {
    let _flight = InFlight::new(&recorder.progress);
    let session = format!("{}s{i}", opts.name_prefix);
    let mut vars = Vars::new(opts.seed, &opts.name_prefix, i, fixed_vars(i, opts, port));
    let slow = opts.slow.filter(|(share, _)| is_slow(i, *share));
    vars.pace_bps = slow.map(|(_, bps)| bps);
    vars.replay = opts.replay.clone().map(|r| (r, i));
    let ctx = Ctx {
        recorder,
        allow_remote: opts.allow_remote,
        timeout_ms: spec.turn_timeout_ms,
        voice_owner: opts.voice_owner.as_ref(),
    };
    let outcome = match (spec.protocol, spec.wire, &spec.chat) {
        (Protocol::Http | Protocol::Sse, ..) => sequence::run(spec, &mut vars, ctx).await,
        (Protocol::Twilio | Protocol::PcmWs | Protocol::WebRtc, ..) => {
            call_session(spec, &vars, &ctx, &session).await
        }
        (_, Some(wire), _) => talk(spec, &mut vars, &ctx, RawLink::new(wire)).await,
        (_, None, Some(chat)) => talk(spec, &mut vars, &ctx, ChatLink::new(chat)).await,
        (_, None, None) => talk(spec, &mut vars, &ctx, WsLink::default()).await,
    };
    if let Err(f) = outcome {
        recorder.error(f.said(|m| format!("session {session} {m}")));
        recorder.session_failed(session);
        recorder.progress.sessions_failed.fetch_add(1, Relaxed);
        // A failed session does not end full load for the others: the rate counts it out
        // instead (see step's rates).
        return false;
    }
    recorder.session_ok(start, slow.is_some());
    if opts.replay.is_some() {
        recorder.session_time(&session, start.elapsed());
    }
    recorder.session_ended();
    true
}

/// A voice call: its turns' templates filled from the session's values.
async fn call_session(
    spec: &SessionSpec,
    vars: &Vars,
    ctx: &Ctx<'_>,
    name: &str,
) -> Result<(), crate::run::Failure> {
    let fill = |t: &str, turn: u32| -> Result<String, crate::run::Failure> {
        let values = vars.filler(turn);
        let refs: Vec<(&str, &str)> = values
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        crate::template::fill(t, &refs).map_err(|n| {
            Failure::new(
                "config",
                format!("{{{{{n}}}}} in the voice call's template has no value"),
            )
        })
    };
    crate::call::run(spec, ctx, name, super::pace::turns(spec, vars), &fill).await
}

/// Whether session `i` is one of the slow share: spread evenly, exactly that share.
fn is_slow(i: usize, share: f64) -> bool {
    ((i + 1) as f64 * share).floor() > (i as f64 * share).floor()
}
