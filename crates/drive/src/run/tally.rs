//! What a step's calls add up to: response latency, setup, barge-in and frame-jitter
//! histograms, and the counts of turns, stalls, words and drops — written into RESULT's
//! `voice` at the end.

use crate::hist::hist;
use hdrhistogram::Histogram;
use std::sync::Mutex;
use std::time::Duration;

#[derive(Default)]
struct Inner {
    calls: u64,
    dropped: u64,
    turns: u64,
    stuttered: u64,
    stall: Duration,
    /// The replies' audio, from each one's first sound to its last.
    replied: Duration,
    longest: Duration,
    caller_s: f64,
    bot_s: f64,
    words_checked: u64,
    words_wrong: u64,
    words_unheard: u64,
    barge_ins: u64,
    /// Replies heard on the wrong call: (heard on, whose, over the call's own), the first
    /// few; and the calls that heard a reply of their own.
    crosstalk: Vec<(String, String, bool)>,
    heard_own: std::collections::HashSet<String>,
    /// WebRTC calls: the bot's packets received and missing, the caller's the bot lost.
    packets: u64,
    packets_lost: u64,
    lost_by_bot: u64,
}

/// Of the time callers listened to replies, the share that was silence from stalls: the
/// stalls over the replies' audio and the stalls together (at most 1, however late the
/// bot's packets came; a bot that sends silence between replies counts only its replies).
fn stall_share(stall: Duration, replied: Duration) -> f64 {
    let listened = (stall + replied).as_secs_f64();
    match listened > 0.0 {
        true => (stall.as_secs_f64() / listened * 10_000.0).round() / 10_000.0,
        false => 0.0,
    }
}

/// A WebRTC call's setup, part by part, and its receiver's jitter.
#[derive(Default)]
struct Network {
    signaling: Option<Histogram<u64>>,
    ice: Option<Histogram<u64>>,
    dtls: Option<Histogram<u64>>,
    agent: Option<Histogram<u64>>,
    agent_joined: Option<Histogram<u64>>,
    jitter: Option<Histogram<u64>>,
}

pub struct Tally {
    /// "twilio", "pcm-ws" or "webrtc".
    protocol: &'static str,
    frame_ms: u32,
    inner: Mutex<Inner>,
    response: Mutex<Histogram<u64>>,
    setup: Mutex<Histogram<u64>>,
    barge: Mutex<Histogram<u64>>,
    jitter: Mutex<Histogram<u64>>,
    network: Mutex<Network>,
    /// Where the step's calls speak and read words, off their clocks.
    pub(crate) background: super::background::Background,
    /// Which calls' audio is kept, and which were.
    pub(crate) keeper: Option<super::keeper::Keeper>,
}

/// What one answered turn measured.
pub(crate) struct TurnFigures {
    pub response: Duration,
    pub stall: Duration,
    pub longest: Duration,
    /// The reply's audio, from its first sound to its last.
    pub replied: Duration,
}

/// Where the words a caller heard came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Words {
    Own,
    Other,
    Unheard,
}

/// Replies heard on the wrong call kept by name.
const CROSSTALK_KEPT: usize = 10;

/// The replies heard on the wrong call, each said with whether its own call heard any
/// reply of its own (by the end of the step: a call that heard none may have timed out).
fn crosstalk(i: &Inner) -> Vec<result::Crosstalk> {
    i.crosstalk
        .iter()
        .map(|(on, owner, with_own)| result::Crosstalk {
            heard_on: on.clone(),
            owner: owner.clone(),
            with_own: *with_own,
            owner_heard_own: i.heard_own.contains(owner),
        })
        .collect()
}

fn rec(h: &Mutex<Histogram<u64>>, d: Duration) {
    if let Ok(mut h) = h.lock() {
        let _ = h.record((d.as_micros() as u64).max(1));
    }
}

fn q_ms(h: &Mutex<Histogram<u64>>, q: f64) -> Option<f64> {
    quantile_ms(&*h.lock().ok()?, q)
}

/// A histogram of µs at quantile `q`, in ms to two places; None when it is empty.
fn quantile_ms(h: &Histogram<u64>, q: f64) -> Option<f64> {
    (!h.is_empty()).then(|| (h.value_at_quantile(q) as f64 / 10.0).round() / 100.0)
}

impl Tally {
    pub fn new(protocol: &'static str, frame_ms: u32) -> Self {
        Tally {
            protocol,
            frame_ms,
            inner: Mutex::default(),
            response: Mutex::new(hist()),
            setup: Mutex::new(hist()),
            barge: Mutex::new(hist()),
            jitter: Mutex::new(hist()),
            network: Mutex::default(),
            background: super::background::Background::start(),
            keeper: None,
        }
    }

    /// The same, keeping the audio of calls as `keep` says.
    pub fn keeping(self, keep: Option<super::options::KeepAudio>) -> Self {
        Tally {
            keeper: keep.map(super::keeper::Keeper::new),
            ..self
        }
    }
}

impl Tally {
    fn with(&self, f: impl FnOnce(&mut Inner)) {
        if let Ok(mut i) = self.inner.lock() {
            f(&mut i);
        }
    }

    pub(crate) fn call(&self, setup: Option<Duration>) {
        self.with(|i| i.calls += 1);
        if let Some(d) = setup {
            rec(&self.setup, d);
        }
    }

    /// A WebRTC call placed: how long each part of its setup took.
    pub(crate) fn rtc_setup(&self, s: &rtc::Setup) {
        if let Ok(mut guard) = self.network.lock() {
            let n = &mut *guard;
            for (h, d) in [
                (&mut n.signaling, Some(s.signaling)),
                (&mut n.ice, Some(s.ice)),
                (&mut n.dtls, Some(s.dtls)),
                (&mut n.agent, s.agent),
                (&mut n.agent_joined, s.agent_joined),
            ] {
                if let Some(d) = d {
                    let _ = h
                        .get_or_insert_with(hist)
                        .record((d.as_micros() as u64).max(1));
                }
            }
        }
    }

    /// A WebRTC call over: what the network did to its audio.
    pub(crate) fn rtc_net(&self, s: &rtc::NetStats) {
        if let Ok(mut n) = self.network.lock() {
            let h = n.jitter.get_or_insert_with(hist);
            let _ = h.record(((s.jitter_ms * 1000.0) as u64).max(1));
        }
        self.with(|i| {
            i.packets += s.packets;
            i.packets_lost += s.lost;
            i.lost_by_bot += s.lost_by_bot;
        });
    }

    pub(crate) fn dropped(&self) {
        self.with(|i| i.dropped += 1);
    }

    pub(crate) fn turn(&self, t: &TurnFigures) {
        rec(&self.response, t.response);
        self.with(|i| {
            i.turns += 1;
            i.stall += t.stall;
            i.replied += t.replied;
            i.longest = i.longest.max(t.longest);
            i.stuttered += u64::from(t.stall >= Duration::from_millis(20));
        });
    }

    pub(crate) fn audio(&self, caller_s: f64, bot_s: f64) {
        self.with(|i| {
            i.caller_s += caller_s;
            i.bot_s += bot_s;
        });
    }

    pub(crate) fn words(&self, w: Words) {
        self.with(|i| match w {
            Words::Own => i.words_checked += 1,
            Words::Other => {
                i.words_checked += 1;
                i.words_wrong += 1;
            }
            Words::Unheard => i.words_unheard += 1,
        });
    }

    /// Call `name` heard a reply of its own.
    pub(crate) fn heard_own(&self, name: &str) {
        self.with(|i| {
            i.heard_own.insert(name.to_string());
        });
    }

    /// Call `heard_on` heard call `owner`'s reply (with its own, or not).
    pub(crate) fn crosstalk(&self, heard_on: &str, owner: &str, with_own: bool) {
        self.with(|i| {
            if i.crosstalk.len() < CROSSTALK_KEPT {
                i.crosstalk
                    .push((heard_on.to_string(), owner.to_string(), with_own));
            }
        });
    }

    pub(crate) fn barge(&self, stop: Duration) {
        rec(&self.barge, stop);
        self.with(|i| i.barge_ins += 1);
    }

    pub(crate) fn jitter(&self, late: Duration) {
        rec(&self.jitter, late);
    }

    /// The calls as RESULT's `voice` says them (the mock's stages are the step's to add).
    pub fn figures(&self) -> result::VoiceCalls {
        let protocol = self.protocol;
        let i = self
            .inner
            .lock()
            .map(|mut i| std::mem::take(&mut *i))
            .unwrap_or_default();
        let r2 = |x: f64| (x * 100.0).round() / 100.0;
        result::VoiceCalls {
            protocol: protocol.into(),
            calls: i.calls,
            dropped: i.dropped,
            turns: i.turns,
            response_p50_ms: q_ms(&self.response, 0.5),
            response_p95_ms: q_ms(&self.response, 0.95),
            response_p99_ms: q_ms(&self.response, 0.99),
            stall_ms_per_turn: r2(i.stall.as_secs_f64() * 1000.0 / i.turns.max(1) as f64),
            stall_share: stall_share(i.stall, i.replied),
            longest_gap_ms: r2(i.longest.as_secs_f64() * 1000.0),
            stuttered_share: r2(i.stuttered as f64 / i.turns.max(1) as f64),
            caller_audio_s: r2(i.caller_s),
            bot_audio_s: r2(i.bot_s),
            setup_p50_ms: q_ms(&self.setup, 0.5),
            words_checked: i.words_checked,
            words_wrong: i.words_wrong,
            words_unheard: i.words_unheard,
            barge_ins: i.barge_ins,
            barge_stop_p50_ms: q_ms(&self.barge, 0.5),
            frame_jitter_p99_ms: q_ms(&self.jitter, 0.99).unwrap_or(0.0),
            frame_ms: self.frame_ms,
            stages: None,
            network: self.network(&i),
            kept_audio: self.keeper.as_ref().and_then(|k| k.figures()),
            crosstalk: crosstalk(&i),
        }
    }

    /// The network's part, when the calls were WebRTC's.
    fn network(&self, i: &Inner) -> Option<result::VoiceNetwork> {
        let n = self.network.lock().ok()?;
        let q = |h: &Option<Histogram<u64>>, q: f64| quantile_ms(h.as_ref()?, q);
        (n.signaling.is_some() || n.jitter.is_some()).then(|| result::VoiceNetwork {
            signaling_p50_ms: q(&n.signaling, 0.5),
            ice_p50_ms: q(&n.ice, 0.5),
            dtls_p50_ms: q(&n.dtls, 0.5),
            agent_p50_ms: q(&n.agent, 0.5),
            agent_p99_ms: q(&n.agent, 0.99),
            agent_max_ms: q(&n.agent, 1.0),
            agent_joined_p50_ms: q(&n.agent_joined, 0.5),
            packets: i.packets,
            packets_lost: i.packets_lost,
            jitter_p95_ms: q(&n.jitter, 0.95),
            lost_by_bot: i.lost_by_bot,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stall_share_is_of_the_time_the_replies_played_and_at_most_one() {
        let ms = Duration::from_millis;
        // 30 ms of stalls in 3 s of replies: about 1 %.
        assert_eq!(stall_share(ms(30), ms(2970)), 0.01);
        // A bot so late that each 20 ms packet came after an 80 ms gap: the caller heard
        // silence four fifths of the time, never more than all of it.
        assert_eq!(stall_share(ms(4000), ms(1000)), 0.8);
        assert_eq!(stall_share(ms(500), Duration::ZERO), 1.0);
        assert_eq!(stall_share(Duration::ZERO, Duration::ZERO), 0.0);
    }

    #[test]
    fn crosstalk_says_whether_the_owner_heard_a_reply_of_its_own() {
        let t = Tally::new("twilio", 20);
        t.heard_own("s0");
        t.crosstalk("s0", "s1", true);
        t.crosstalk("s1", "s0", false);
        let v = t.figures();
        let said: Vec<_> = v
            .crosstalk
            .iter()
            .map(|c| {
                (
                    c.heard_on.as_str(),
                    c.owner.as_str(),
                    c.with_own,
                    c.owner_heard_own,
                )
            })
            .collect();
        assert_eq!(said, [("s0", "s1", true, false), ("s1", "s0", false, true)]);
    }
}
