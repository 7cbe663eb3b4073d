//! What a step's calls add up to: response latency, setup, barge-in and frame-jitter
//! histograms, and the counts of turns, stalls, words and drops — written into RESULT's
//! `voice` at the end.

use super::sums::{self, VoiceCounts, VoiceParts, CROSSTALK_KEPT};
use crate::hist::hist;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

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
    inner: Mutex<VoiceCounts>,
    response: Mutex<Histogram<u64>>,
    setup: Mutex<Histogram<u64>>,
    barge: Mutex<Histogram<u64>>,
    jitter: Mutex<Histogram<u64>>,
    network: Mutex<Network>,
    /// Where the step's calls speak and read words, off their clocks.
    pub(crate) background: super::background::Background,
    /// Where the step's WebRTC calls decode the bot's Opus, off their clocks: a lane a core
    /// (started at the first call).
    pub(crate) opus: rtc::Decoding,
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
    /// Silence the bot's audio carried inside the reply (stalls its packets' timing does
    /// not show: a transport padding a dry queue).
    pub holes: voice::holes::Holes,
}

/// Where the words a caller heard came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Words {
    Own,
    /// This call's own, found by its sound where no words could be read.
    OwnSounded,
    Other,
    Unheard,
}

fn rec(h: &Mutex<Histogram<u64>>, d: Duration) {
    if let Ok(mut h) = h.lock() {
        let _ = h.record((d.as_micros() as u64).max(1));
    }
}

impl Tally {
    pub fn new(protocol: &'static str, frame_ms: u32) -> Self {
        Tally {
            inner: Mutex::new(VoiceCounts {
                protocol: protocol.into(),
                frame_ms,
                ..Default::default()
            }),
            response: Mutex::new(hist()),
            setup: Mutex::new(hist()),
            barge: Mutex::new(hist()),
            jitter: Mutex::new(hist()),
            network: Mutex::default(),
            background: super::background::Background::start(),
            opus: rtc::Decoding::new(
                &format!("{}-opus", super::THREAD_NAME),
                voice::pool::cores(),
            ),
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
    fn with(&self, f: impl FnOnce(&mut VoiceCounts)) {
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
            let holes = Duration::from_secs_f64(t.holes.ms / 1000.0);
            let longest = t
                .longest
                .max(Duration::from_secs_f64(t.holes.longest_ms / 1000.0));
            i.stall_ns += (t.stall + holes).as_nanos() as u64;
            i.holes += u64::from(t.holes.count);
            i.holes_ns += holes.as_nanos() as u64;
            i.replied_ns += t.replied.as_nanos() as u64;
            i.longest_gap_ns = i.longest_gap_ns.max(longest.as_nanos() as u64);
            i.stuttered += u64::from(t.stall + holes >= Duration::from_millis(20));
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
            Words::OwnSounded => {
                i.words_checked += 1;
                i.words_by_sound += 1;
            }
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

    /// Call `heard_on` heard call `owner`'s reply (with its own, or not; read, or found
    /// by its sound).
    pub(crate) fn crosstalk(&self, heard_on: &str, owner: &str, with_own: bool, by_sound: bool) {
        self.with(|i| {
            if i.crosstalk.len() < CROSSTALK_KEPT {
                i.crosstalk.push(result::Crosstalk {
                    heard_on: heard_on.to_string(),
                    owner: owner.to_string(),
                    with_own,
                    owner_heard_own: false,
                    by_sound,
                });
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
        self.figures_and_parts().0
    }

    /// The same, and what it was made from, for a shard to write and a merge to add.
    pub fn figures_and_parts(&self) -> (result::VoiceCalls, VoiceParts) {
        let parts = self.parts();
        let mut v = sums::figures(&parts.counts, &parts.hists);
        v.kept_audio = self.keeper.as_ref().and_then(|k| k.figures());
        (v, parts)
    }

    /// What the calls counted and their histograms by name: the counts are taken (they
    /// start again), the histograms copied. Read once, as a run ends (`Recorder::report`);
    /// a second read would give percentiles over no calls.
    fn parts(&self) -> VoiceParts {
        let counts = self
            .inner
            .lock()
            .map(|mut i| {
                let fresh = VoiceCounts {
                    protocol: i.protocol.clone(),
                    frame_ms: i.frame_ms,
                    ..Default::default()
                };
                std::mem::replace(&mut *i, fresh)
            })
            .unwrap_or_default();
        let mut hists = BTreeMap::new();
        for (name, h) in [
            (sums::RESPONSE, &self.response),
            (sums::SETUP, &self.setup),
            (sums::BARGE, &self.barge),
            (sums::FRAME_LATE, &self.jitter),
        ] {
            if let Ok(h) = h.lock() {
                hists.insert(name.to_string(), h.clone());
            }
        }
        if let Ok(n) = self.network.lock() {
            for (name, h) in [
                (sums::SIGNALING, &n.signaling),
                (sums::ICE, &n.ice),
                (sums::DTLS, &n.dtls),
                (sums::AGENT, &n.agent),
                (sums::AGENT_JOINED, &n.agent_joined),
                (sums::NET_JITTER, &n.jitter),
            ] {
                if let Some(h) = h {
                    hists.insert(name.to_string(), h.clone());
                }
            }
        }
        VoiceParts { counts, hists }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 64: a step's calls placed from two processes, their counts and histograms
    /// added, say word for word what one process that placed every call says.
    #[test]
    fn two_tallies_added_say_what_one_that_saw_every_call_says() {
        let ms = Duration::from_millis;
        let one = Tally::new("twilio", 20);
        let halves = [Tally::new("twilio", 20), Tally::new("twilio", 20)];
        for (i, r) in [420u64, 515, 610, 1880, 733, 905].into_iter().enumerate() {
            for t in [&one, &halves[i % 2]] {
                t.call(Some(ms(30 + r / 100)));
                t.turn(&TurnFigures {
                    response: ms(r),
                    stall: ms(r / 40),
                    longest: ms(r / 20),
                    replied: ms(r * 3),
                    holes: voice::holes::Holes::default(),
                });
                t.jitter(Duration::from_micros(r * 3));
                t.words(if i == 3 { Words::Other } else { Words::Own });
                t.audio(1.25, 2.5 + i as f64);
                if i == 4 {
                    t.barge(ms(r / 3));
                    t.dropped();
                }
            }
        }
        for t in [&one, &halves[0]] {
            t.crosstalk("s2", "s3", false, false);
        }
        for t in [&one, &halves[1]] {
            t.heard_own("s3");
        }
        let [a, b] = halves.map(|t| t.figures_and_parts().1);
        let mut counts = a.counts.clone();
        counts.add(&b.counts);
        let mut hists = a.hists.clone();
        for (name, h) in &b.hists {
            hists.get_mut(name).unwrap().add(h).unwrap();
        }
        let whole = one.figures();
        assert_eq!(sums::figures(&counts, &hists), whole);
        assert_eq!((whole.calls, whole.turns, whole.words_wrong), (6, 6, 1));
        assert!(whole.crosstalk[0].owner_heard_own, "{:?}", whole.crosstalk);
    }

    /// Silence inside a reply is a stall the caller heard, though every packet came on
    /// time: it counts with the stalls, and is named as holes.
    #[test]
    fn holes_in_a_replys_audio_are_stalls_and_counted_as_holes() {
        let ms = Duration::from_millis;
        let t = Tally::new("webrtc", 20);
        for (stall, holes) in [(0, 0), (0, 3), (30, 1)] {
            t.turn(&TurnFigures {
                response: ms(800),
                stall: ms(stall),
                longest: ms(stall),
                replied: ms(2000),
                holes: voice::holes::Holes {
                    count: holes,
                    ms: holes as f64 * 20.0,
                    longest_ms: if holes > 0 { 25.0 } else { 0.0 },
                },
            });
        }
        let v = t.figures();
        assert_eq!((v.holes, v.holes_ms), (4, 80.0));
        assert_eq!(
            v.stall_ms_per_turn, 36.67,
            "30 ms of stalls and 80 of holes"
        );
        assert_eq!(v.longest_gap_ms, 30.0);
        assert_eq!(v.stuttered_share, 0.67);
    }

    #[test]
    fn crosstalk_says_whether_the_owner_heard_a_reply_of_its_own() {
        let t = Tally::new("twilio", 20);
        t.heard_own("s0");
        t.crosstalk("s0", "s1", true, false);
        t.crosstalk("s1", "s0", false, true);
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
                    c.by_sound,
                )
            })
            .collect();
        let want = [
            ("s0", "s1", true, false, false),
            ("s1", "s0", false, true, true),
        ];
        assert_eq!(said, want);
    }
}
