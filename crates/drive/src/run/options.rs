//! What a run is asked to do: how many sessions, against which base URL or replicas,
//! arriving how (closed, open, resident, churn), sharded or not. Reading them from flags
//! is the CLI's business; acting on them is the runners'.

use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct DriveOptions {
    pub concurrency: usize,
    /// The SUT's base URL, `http://127.0.0.1:PORT`.
    pub base: String,
    /// Replicas of the SUT: session `i` goes to `replicas[i % n]` for all its turns
    /// (sticky by session); empty: every session to `base`.
    pub replicas: Vec<String>,
    pub seed: u64,
    /// The whole step's limit; sessions still running then fail with `timeout`.
    pub step_timeout: Duration,
    /// Allow a URL that is not loopback.
    pub allow_remote: bool,
    /// Open model: sessions arrive at this rate (per second) instead of all at once;
    /// `concurrency` is then the number of sessions. Latency is counted from each
    /// session's intended start, so a late start is not hidden (coordinated omission).
    pub arrival_rate: Option<f64>,
    /// Resident sessions: this many open first (setup run), `concurrency` of them active
    /// at a time (see `driver::resident`).
    pub resident: Option<usize>,
    /// Called once the residents are open, before any turn.
    pub on_resident: Option<Hook>,
    /// Slow consumers: this share of the sessions (spread evenly by index) read their
    /// replies at most this many bytes a second.
    pub slow: Option<(f64, f64)>,
    /// Churn (a soak): each of the `concurrency` slots runs session after session, a new
    /// one (new name, nonce, ids) as soon as the last ends, until this long after the start.
    pub churn: Option<Duration>,
    /// One shard of a step driven from several processes: (index, count). This driver
    /// runs the sessions `i` with `i % count == index`, each at the time the whole
    /// schedule gives it, under its whole-run name `s{i}`.
    pub shard: Option<(usize, usize)>,
    /// When the whole schedule starts (every shard shares it): the driver waits for it.
    pub start_at: Option<std::time::SystemTime>,
    /// Put before every session's name (`{prefix}s{i}`): a SUT and a mock that outlive
    /// one run see new sessions in the next, not the last run's continued.
    pub name_prefix: String,
    /// A recorded workload replayed: session `i` runs the turns, think times and prompt
    /// sizes of the recorded session the replay gives it (and, exact, starts when it did).
    pub replay: Option<Arc<workload::Replay>>,
    /// Who said a text (the mock's ledger): a voice call's words are checked against it.
    pub voice_owner: Option<Owner>,
    /// Which calls' audio to keep as WAV files, and where (None: none).
    pub keep_audio: Option<KeepAudio>,
    /// The `[[service]]`s the step started, by name and port: a session's
    /// `{{NAME.port}}` (a LiveKit server's, say, that calls join rooms on).
    pub services: Vec<(String, u16)>,
}

/// Called once every resident is open, before any turn (the step reads the SUT's memory).
#[derive(Clone)]
pub struct Hook(pub Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hook")
    }
}

/// Who said a text, by the mock's ledger: the session whose reply holds it; and the
/// replies the mock spoke lately, where the ledger can list them.
#[derive(Clone)]
pub struct Owner {
    pub who: std::sync::Arc<WhoSaid>,
    spoken: Option<std::sync::Arc<Spoken>>,
    /// How many more unread replies may be compared by their sound this step.
    sound_checks: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

/// The most unread replies a step compares by their sound (each up to about a second of a
/// low-priority thread, twice where it had holes to take out): enough to name a bot that
/// mixes its calls' outputs or to hear a damaged reply as its call's, not a cost that grows
/// with a run whose every reply is other audio. Past it, an unread reply is unheard.
pub const SOUND_CHECKS: usize = 32;

impl Owner {
    /// The ledger's lookup, and its list of replies spoken lately where it has one.
    pub fn new(who: std::sync::Arc<WhoSaid>, spoken: Option<std::sync::Arc<Spoken>>) -> Owner {
        Owner {
            who,
            spoken,
            sound_checks: std::sync::Arc::new(SOUND_CHECKS.into()),
        }
    }

    /// The replies spoken between `since` and `until` ago, by session (at most `most`);
    /// none once the step has compared [`SOUND_CHECKS`] replies, or where the ledger
    /// cannot list them.
    pub fn spoken_lately(&self, since: Duration, until: Duration, most: usize) -> Vec<Said> {
        use std::sync::atomic::Ordering::Relaxed;
        let list = self.spoken.as_ref();
        let left = self
            .sound_checks
            .fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1));
        match (list, left) {
            (Some(list), Ok(_)) => list(since, until, most),
            _ => Vec::new(),
        }
    }
}

/// The replies the mock spoke aloud between two times ago (the first the longer), by
/// session, at most so many: [`Said`].
pub type Spoken = dyn Fn(Duration, Duration, usize) -> Vec<Said> + Send + Sync;

/// A session's reply as the mock spoke it: whose ([`NO_CALL`] for words that named no
/// session), and its texts in the order spoken.
pub type Said = (String, Vec<String>);

/// The ledger's lookup: the session whose reply holds a text; [`NO_CALL`] for a reply the
/// mock gave to words that named no session.
pub type WhoSaid = dyn Fn(&str) -> Option<String> + Send + Sync;

/// Whose a reply was when the words it answered named no session (the mock's anonymous
/// session: its marker lost before the LLM call).
pub const NO_CALL: &str = "-";

impl std::fmt::Debug for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Owner")
    }
}

/// Which calls' audio a step keeps, where, and how much of it.
#[derive(Clone, Debug)]
pub struct KeepAudio {
    pub dir: std::path::PathBuf,
    /// Every call's, not only the calls with a failed, wrong, unheard or sound-only reply.
    pub all: bool,
    /// At most this many calls' files a step.
    pub calls: usize,
    /// What the calls' tapes may hold at once, in bytes.
    pub budget: usize,
}

impl KeepAudio {
    /// What tapes may hold at once by default: 256 MB, about 90 minutes of 24 kHz audio.
    pub const BUDGET: usize = 256 << 20;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_step_compares_so_many_replies_by_their_sound_and_no_more() {
        let list: Arc<Spoken> = Arc::new(|_, _, _| vec![("s1".into(), vec!["hello".into()])]);
        let owner = Owner::new(Arc::new(|_| None), Some(list));
        let d = Duration::from_secs(1);
        for _ in 0..SOUND_CHECKS {
            assert_eq!(owner.clone().spoken_lately(d, d, 8).len(), 1);
        }
        assert!(owner.spoken_lately(d, d, 8).is_empty());
        let none = Owner::new(Arc::new(|_| None), None);
        assert!(none.spoken_lately(d, d, 8).is_empty());
    }
}
