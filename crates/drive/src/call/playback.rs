//! The bot's audio as a phone plays it: every frame queued behind the last and played in
//! real time from when it arrives. A reply starts with the bot's first audio that is not
//! silence; while it lasts, a frame that arrives after the queue ran dry is a stall (the
//! caller heard a gap the bot did not mean); the reply ends once the queue has played out
//! and nothing came for `reply_end`. Marks are returned when the audio before them has
//! played; `clear` drops what is queued (and returns its marks), as Twilio does. A WebRTC
//! call's player holds a jitter buffer: audio starts playing `buffer` after it arrives, so
//! a packet late by less than that is no gap (and one later rebuffers, which the caller
//! hears as the gap and the buffer both).

use std::collections::VecDeque;
use std::time::Duration;
use tokio::time::Instant;

/// RMS below this (−50 dBFS) is silence: a bot's filler frames, not speech.
const SILENT_RMS: f32 = 0.003;

/// One reply as it was heard.
#[derive(Debug, Default)]
pub(crate) struct Reply {
    /// The bot's first audio that was not silence.
    pub first: Option<Instant>,
    /// Gaps the caller heard mid-reply, their sum and the longest.
    pub stall: Duration,
    pub longest: Duration,
    /// Gaps since the reply's last sound (their sum and the longest): stalls only if more
    /// of the reply comes; silence sent late after a reply's end is not heard as one.
    pending: (Duration, Duration),
    /// What the bot sent (samples at the line's rate), silence included.
    pub audio: Vec<f32>,
    /// How much of `audio` runs to the reply's last sound (samples).
    pub spoken: usize,
    /// When the reply's last audio arrived.
    pub last: Option<Instant>,
    /// When the reply's last audio that was not silence has played out.
    pub loud_until: Option<Instant>,
}

pub(crate) struct Playback {
    rate: f64,
    /// When the audio queued so far has played out.
    until: Instant,
    /// Marks to return, each when the audio before it has played.
    marks: VecDeque<(Instant, String)>,
    pub reply: Reply,
    /// Audio the bot sent over the whole call, seconds.
    pub sent_s: f64,
    /// How long audio waits before it plays (a WebRTC jitter buffer; zero on a phone line).
    buffer: Duration,
}

/// The jitter buffer of a WebRTC call's player: browsers' adaptive buffers sit at 20 to
/// 80 ms on a quiet network.
pub(crate) const WEBRTC_BUFFER: Duration = Duration::from_millis(60);

impl Playback {
    pub fn new(rate: u32) -> Playback {
        Playback {
            rate: rate as f64,
            until: Instant::now(),
            marks: VecDeque::new(),
            reply: Reply::default(),
            sent_s: 0.0,
            buffer: Duration::ZERO,
        }
    }

    /// A player that holds `buffer` of audio before it plays (a WebRTC call's).
    pub fn buffered(rate: u32, buffer: Duration) -> Playback {
        Playback {
            buffer,
            ..Playback::new(rate)
        }
    }

    /// Audio from the bot, arrived `now`.
    pub fn audio(&mut self, samples: &[f32], now: Instant) {
        let d = Duration::from_secs_f64(samples.len() as f64 / self.rate);
        self.sent_s += d.as_secs_f64();
        let loud = rms(samples) > SILENT_RMS;
        if self.until < now {
            // The queue ran dry: mid-reply, the caller heard a gap (and the player refilling
            // its buffer).
            if self.reply.first.is_some() {
                let gap = now - self.until + self.buffer;
                let (sum, longest) = self.reply.pending;
                self.reply.pending = (sum + gap, longest.max(gap));
            }
            self.until = now + self.buffer;
        }
        self.until += d;
        if loud && self.reply.first.is_none() {
            self.reply.first = Some(now);
        }
        if loud {
            self.reply.loud_until = Some(self.until);
            let (sum, longest) = std::mem::take(&mut self.reply.pending);
            self.reply.stall += sum;
            self.reply.longest = self.reply.longest.max(longest);
        }
        if self.reply.first.is_some() {
            self.reply.audio.extend_from_slice(samples);
            self.reply.last = Some(now);
            if loud {
                self.reply.spoken = self.reply.audio.len();
            }
        }
    }

    /// A mark: returned once the audio queued before it has played.
    pub fn mark(&mut self, name: String) {
        self.marks.push_back((self.until, name));
    }

    /// Drops the queued audio; the marks of it, to return now.
    pub fn clear(&mut self, now: Instant) -> Vec<String> {
        self.until = self.until.min(now);
        self.marks.drain(..).map(|(_, n)| n).collect()
    }

    /// The marks whose audio has played by `now`.
    pub fn played_marks(&mut self, now: Instant) -> Vec<String> {
        let mut out = Vec::new();
        while self.marks.front().is_some_and(|(t, _)| *t <= now) {
            out.extend(self.marks.pop_front().map(|(_, n)| n));
        }
        out
    }

    /// Whether the reply has ended: started, its speech played out, and `quiet` since
    /// (silence the bot sends to keep the line open does not hold a reply open).
    pub fn ended(&self, now: Instant, quiet: Duration) -> bool {
        match self.reply.loud_until {
            Some(end) => now >= end + quiet,
            None => false,
        }
    }

    /// Whether the bot is silent now: nothing queued, nothing for `quiet`.
    pub fn silent_since(&self, now: Instant, quiet: Duration) -> bool {
        now >= self.until + quiet
    }

    /// The reply heard so far, taken (the next starts empty).
    pub fn take_reply(&mut self) -> Reply {
        std::mem::take(&mut self.reply)
    }
}

fn rms(x: &[f32]) -> f32 {
    if x.is_empty() {
        return 0.0;
    }
    (x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jitter_buffer_absorbs_a_packet_late_by_less_than_it() {
        let t0 = Instant::now();
        let loud: Vec<f32> = (0..480).map(|i| (i as f32 * 0.3).sin() * 0.3).collect(); // 20 ms
        let mut p = Playback::buffered(24000, Duration::from_millis(60));
        p.audio(&loud, t0 + Duration::from_millis(1));
        // Each frame due every 20 ms; one 50 ms late: still within the 60 ms buffer.
        p.audio(&loud, t0 + Duration::from_millis(21));
        p.audio(&loud, t0 + Duration::from_millis(91));
        assert_eq!(p.reply.stall, Duration::ZERO);
        // 200 ms late: played out at 1 + 60 + 60 = 121 ms, the frame comes at 291: a gap
        // of 170 ms and the 60 ms the buffer refills.
        p.audio(&loud, t0 + Duration::from_millis(291));
        assert_eq!(p.reply.stall, Duration::from_millis(230));
        // Without a buffer the 50 ms late frame was already a gap.
        let mut q = Playback::new(24000);
        q.audio(&loud, t0 + Duration::from_millis(1));
        q.audio(&loud, t0 + Duration::from_millis(71));
        assert_eq!(q.reply.stall, Duration::from_millis(50));
    }

    #[test]
    fn a_gap_mid_reply_is_a_stall_and_the_end_is_not() {
        let mut p = Playback::new(8000);
        let t0 = Instant::now(); // after the playback's own clock starts
        let tone: Vec<f32> = (0..1600).map(|i| (i as f32 * 0.3).sin() * 0.3).collect(); // 200 ms
        p.audio(&[0.0; 160], t0); // silence first: not the reply's start
        assert!(p.reply.first.is_none());
        p.audio(&tone, t0 + Duration::from_millis(20));
        p.audio(&tone, t0 + Duration::from_millis(120)); // ahead of playback: no stall
        assert_eq!(p.reply.stall, Duration::ZERO);
        // Queued until 20 + 400 = 420 ms; the next frame comes at 500: an 80 ms stall.
        p.audio(&tone, t0 + Duration::from_millis(500));
        assert_eq!(p.reply.stall, Duration::from_millis(80));
        assert_eq!(p.reply.first, Some(t0 + Duration::from_millis(20)));
        assert!(!p.ended(t0 + Duration::from_millis(800), Duration::from_millis(500)));
        // Silence the bot keeps sending does not hold the reply open.
        p.audio(&[0.0; 1600], t0 + Duration::from_millis(700));
        assert!(p.ended(t0 + Duration::from_millis(1200), Duration::from_millis(500)));
        p.mark("m1".into());
        // Played until 500 + 200 + 200 (the silence) = 900 ms: the mark comes back then.
        assert!(p.played_marks(t0 + Duration::from_millis(850)).is_empty());
        assert_eq!(p.played_marks(t0 + Duration::from_millis(901)), ["m1"]);
        // Silence sent late after the reply's last sound (all played out at 900 ms, this
        // comes at 950) is no stall: nothing of the reply was held back.
        p.audio(&[0.0; 160], t0 + Duration::from_millis(950));
        assert_eq!(p.reply.stall, Duration::from_millis(80));
        // Unless more of the reply follows it: then the 50 ms gap and the 20 ms dry after
        // the silence (played out at 970, the sound comes at 990) were heard as stalls.
        p.audio(&tone, t0 + Duration::from_millis(990));
        assert_eq!(p.reply.stall, Duration::from_millis(80 + 50 + 20));
        assert_eq!(p.reply.longest, Duration::from_millis(80));
    }
}
