//! What a step's calls add up to, however many processes placed them: the counts (a shard
//! writes them beside its histograms), the names of the histograms, and RESULT's `voice`
//! made from both — the one place it is made, so shards merged say what one process says.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The histograms of a step's calls (µs), by the tag a shard's interval log gives each.
pub const RESPONSE: &str = "voice.response";
pub const SETUP: &str = "voice.setup";
pub const BARGE: &str = "voice.barge";
pub const FRAME_LATE: &str = "voice.frame_late";
pub const SIGNALING: &str = "voice.signaling";
pub const ICE: &str = "voice.ice";
pub const DTLS: &str = "voice.dtls";
pub const AGENT: &str = "voice.agent";
pub const AGENT_JOINED: &str = "voice.agent_joined";
pub const NET_JITTER: &str = "voice.net_jitter";

/// Replies heard on the wrong call kept by name.
pub const CROSSTALK_KEPT: usize = 10;

/// What a step's calls counted and measured, as a shard writes it: the counts, and the
/// histograms by name.
#[derive(Clone, Debug, Default)]
pub struct VoiceParts {
    pub counts: VoiceCounts,
    pub hists: BTreeMap<String, Histogram<u64>>,
}

/// What a step's calls counted (times in ns, summed exactly).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct VoiceCounts {
    /// "twilio", "pcm-ws" or "webrtc", and the frames' length.
    pub protocol: String,
    pub frame_ms: u32,
    pub calls: u64,
    pub dropped: u64,
    pub turns: u64,
    /// Turns with 20 ms or more of stalls.
    pub stuttered: u64,
    pub stall_ns: u64,
    /// Of the stalls, the holes of silence inside the replies' audio: how many, how long.
    #[serde(default)]
    pub holes: u64,
    #[serde(default)]
    pub holes_ns: u64,
    /// The replies' audio, from each one's first sound to its last.
    pub replied_ns: u64,
    pub longest_gap_ns: u64,
    pub caller_s: f64,
    pub bot_s: f64,
    pub words_checked: u64,
    pub words_wrong: u64,
    pub words_unheard: u64,
    /// Of the replies checked, those found by their sound alone (too damaged to read).
    #[serde(default)]
    pub words_by_sound: u64,
    pub barge_ins: u64,
    /// Replies heard on the wrong call, the first few (whether the owner heard its own is
    /// filled in when the figures are made); and the calls that heard a reply of their own.
    pub crosstalk: Vec<result::Crosstalk>,
    pub heard_own: BTreeSet<String>,
    /// WebRTC calls: the bot's packets received and missing, the caller's the bot lost.
    pub packets: u64,
    pub packets_lost: u64,
    pub lost_by_bot: u64,
}

impl VoiceCounts {
    /// Another process's counts of the same step added: sums, the longer of the longest
    /// gaps, the replies heard on the wrong call up to `CROSSTALK_KEPT`, and the calls that
    /// heard their own together (a reply heard on another shard's call is named all the
    /// same: the words are attributed by the one shared mock).
    pub fn add(&mut self, o: &VoiceCounts) {
        if self.protocol.is_empty() {
            self.protocol.clone_from(&o.protocol);
            self.frame_ms = o.frame_ms;
        }
        for (mine, theirs) in [
            (&mut self.calls, o.calls),
            (&mut self.dropped, o.dropped),
            (&mut self.turns, o.turns),
            (&mut self.stuttered, o.stuttered),
            (&mut self.stall_ns, o.stall_ns),
            (&mut self.holes, o.holes),
            (&mut self.holes_ns, o.holes_ns),
            (&mut self.replied_ns, o.replied_ns),
            (&mut self.words_checked, o.words_checked),
            (&mut self.words_wrong, o.words_wrong),
            (&mut self.words_unheard, o.words_unheard),
            (&mut self.words_by_sound, o.words_by_sound),
            (&mut self.barge_ins, o.barge_ins),
            (&mut self.packets, o.packets),
            (&mut self.packets_lost, o.packets_lost),
            (&mut self.lost_by_bot, o.lost_by_bot),
        ] {
            *mine += theirs;
        }
        self.longest_gap_ns = self.longest_gap_ns.max(o.longest_gap_ns);
        self.caller_s += o.caller_s;
        self.bot_s += o.bot_s;
        let room = CROSSTALK_KEPT.saturating_sub(self.crosstalk.len());
        self.crosstalk
            .extend(o.crosstalk.iter().take(room).cloned());
        self.heard_own.extend(o.heard_own.iter().cloned());
    }
}

/// Of the time callers listened to replies, the share that was silence from stalls: the
/// stalls over the replies' audio and the stalls together (at most 1, however late the
/// bot's packets came; a bot that sends silence between replies counts only its replies).
pub(crate) fn stall_share(stall: Duration, replied: Duration) -> f64 {
    let listened = (stall + replied).as_secs_f64();
    match listened > 0.0 {
        true => (stall.as_secs_f64() / listened * 10_000.0).round() / 10_000.0,
        false => 0.0,
    }
}

/// A histogram of µs at quantile `q`, in ms to two places; None when it is empty.
fn quantile_ms(h: &Histogram<u64>, q: f64) -> Option<f64> {
    (!h.is_empty()).then(|| (h.value_at_quantile(q) as f64 / 10.0).round() / 100.0)
}

/// The calls as RESULT's `voice` says them, from their counts and histograms (the mock's
/// stages and the audio kept are the step's to add).
pub fn figures(c: &VoiceCounts, h: &BTreeMap<String, Histogram<u64>>) -> result::VoiceCalls {
    let q = |name: &str, q: f64| quantile_ms(h.get(name)?, q);
    let r2 = |x: f64| (x * 100.0).round() / 100.0;
    let ns = Duration::from_nanos;
    let turns = c.turns.max(1) as f64;
    result::VoiceCalls {
        protocol: c.protocol.clone(),
        calls: c.calls,
        dropped: c.dropped,
        turns: c.turns,
        response_p50_ms: q(RESPONSE, 0.5),
        response_p95_ms: q(RESPONSE, 0.95),
        response_p99_ms: q(RESPONSE, 0.99),
        stall_ms_per_turn: r2(ns(c.stall_ns).as_secs_f64() * 1000.0 / turns),
        stall_share: stall_share(ns(c.stall_ns), ns(c.replied_ns)),
        longest_gap_ms: r2(ns(c.longest_gap_ns).as_secs_f64() * 1000.0),
        holes: c.holes,
        holes_ms: r2(ns(c.holes_ns).as_secs_f64() * 1000.0),
        stuttered_share: r2(c.stuttered as f64 / turns),
        caller_audio_s: r2(c.caller_s),
        bot_audio_s: r2(c.bot_s),
        setup_p50_ms: q(SETUP, 0.5),
        words_checked: c.words_checked,
        words_wrong: c.words_wrong,
        words_unheard: c.words_unheard,
        words_by_sound: c.words_by_sound,
        barge_ins: c.barge_ins,
        barge_stop_p50_ms: q(BARGE, 0.5),
        frame_jitter_p99_ms: q(FRAME_LATE, 0.99).unwrap_or(0.0),
        frame_ms: c.frame_ms,
        stages: None,
        network: network(c, h),
        kept_audio: None,
        crosstalk: crosstalk(c),
    }
}

/// The network's part, when the calls were WebRTC's.
fn network(c: &VoiceCounts, h: &BTreeMap<String, Histogram<u64>>) -> Option<result::VoiceNetwork> {
    let q = |name: &str, q: f64| quantile_ms(h.get(name)?, q);
    // From the counts too: shards that are not one run give no histograms, but their
    // packets still add up.
    let webrtc = c.protocol == "webrtc" || h.contains_key(SIGNALING) || h.contains_key(NET_JITTER);
    webrtc.then(|| result::VoiceNetwork {
        signaling_p50_ms: q(SIGNALING, 0.5),
        ice_p50_ms: q(ICE, 0.5),
        dtls_p50_ms: q(DTLS, 0.5),
        agent_p50_ms: q(AGENT, 0.5),
        agent_p99_ms: q(AGENT, 0.99),
        agent_max_ms: q(AGENT, 1.0),
        agent_joined_p50_ms: q(AGENT_JOINED, 0.5),
        packets: c.packets,
        packets_lost: c.packets_lost,
        jitter_p95_ms: q(NET_JITTER, 0.95),
        lost_by_bot: c.lost_by_bot,
    })
}

/// The replies heard on the wrong call, each said with whether its own call heard any
/// reply of its own (by the end of the step: a call that heard none may have timed out).
fn crosstalk(c: &VoiceCounts) -> Vec<result::Crosstalk> {
    c.crosstalk
        .iter()
        .map(|x| result::Crosstalk {
            owner_heard_own: c.heard_own.contains(&x.owner),
            ..x.clone()
        })
        .collect()
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
}
