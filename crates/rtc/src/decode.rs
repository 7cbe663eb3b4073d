//! The bot's Opus decoded off the call's clock. The peer that writes the caller's frames on
//! the RTP clock only notes when each of the bot's packets arrived and hands it over; a
//! few threads of their own (lanes) decode them, a call's packets in order on one lane,
//! and send the samples on with the arrival time. Decoding may lag a packet and catch up:
//! what times a reply, a stall and the playback clock is when the packets came, and the
//! call judges a reply's end on what it has heard (`Backlog`). A busy lane wakes once a
//! tick ([`TICK`]) and decodes what gathered, not once a packet: on a VM a thread woken
//! 5,000 times a second cost more than the decoding. The lanes run at the normal priority:
//! at the voice's lowest (nice 19), a machine busy with a LiveKit worker starved them, and
//! calls waited on audio that had long arrived.

use crate::error::CallError;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

/// What the bot's side of the call gave: audio at the call's rate with when its packet
/// arrived (it is decoded after), or the call's end.
#[derive(Debug)]
pub enum Audio {
    Samples(Vec<f32>, Instant),
    Ended(CallError),
}

type Job = Box<dyn FnOnce() + Send>;

/// How long a lane that has decoded waits before it decodes what gathered meanwhile: half a
/// packet of 20 ms, well inside the player's 60 ms jitter buffer.
const TICK: Duration = Duration::from_millis(10);

/// The lanes a process's calls decode on: started at the first call, a thread each, ended
/// when the last handle is dropped.
#[derive(Clone)]
pub struct Decoding(Arc<Lanes>);

struct Lanes {
    name: String,
    count: usize,
    lanes: OnceLock<Vec<mpsc::Sender<Job>>>,
    next: AtomicUsize,
}

impl Decoding {
    /// `lanes` threads named `name-0`, `name-1`, … (a thread's name is how its CPU is
    /// counted as the caller's).
    pub fn new(name: &str, lanes: usize) -> Decoding {
        Decoding(Arc::new(Lanes {
            name: name.to_string(),
            count: lanes.max(1),
            lanes: OnceLock::new(),
            next: AtomicUsize::new(0),
        }))
    }

    /// A call's decoder at `rate`, on the next lane, its packets waiting kept in `backlog`.
    pub(crate) fn lane(&self, rate: u32, backlog: Backlog) -> Result<Lane, CallError> {
        let l = &self.0;
        let lanes = l.lanes.get_or_init(|| {
            (0..l.count)
                .filter_map(|i| start(&format!("{}-{i}", l.name)))
                .collect()
        });
        let tx = match lanes.len() {
            0 => return Err(gone()),
            n => lanes[l.next.fetch_add(1, Ordering::Relaxed) % n].clone(),
        };
        Ok(Lane {
            tx,
            dec: Arc::new(Mutex::new(Decoder::new(rate)?)),
            backlog,
        })
    }
}

/// A lane's thread: it sleeps until a packet comes, decodes every packet queued, then
/// waits a tick; it ends once every handle on it is dropped. None if it could not start.
fn start(name: &str) -> Option<mpsc::Sender<Job>> {
    let (tx, rx) = mpsc::channel::<Job>();
    let started = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            while let Ok(job) = rx.recv() {
                job();
                while let Ok(job) = rx.try_recv() {
                    job();
                }
                std::thread::sleep(TICK);
            }
        });
    started.ok().map(|_| tx)
}

/// When a call's packets that still wait to be decoded arrived, oldest first. Until they
/// are decoded, what the call has heard is complete only up to the oldest: a reply's end,
/// a silence or a deadline is judged on that clock, so a lane that lags (its core busy)
/// delays the call's decisions rather than making them wrong.
#[derive(Clone, Default)]
pub struct Backlog(Arc<Mutex<VecDeque<Instant>>>);

impl Backlog {
    /// When the oldest packet still waiting arrived; None when every packet is decoded.
    pub fn oldest(&self) -> Option<Instant> {
        self.0.lock().ok()?.front().copied()
    }

    fn push(&self, at: Instant) {
        if let Ok(mut q) = self.0.lock() {
            q.push_back(at);
        }
    }

    fn pop(&self) {
        if let Ok(mut q) = self.0.lock() {
            q.pop_front();
        }
    }
}

/// One call's decoder, on its lane.
pub(crate) struct Lane {
    tx: mpsc::Sender<Job>,
    dec: Arc<Mutex<Decoder>>,
    backlog: Backlog,
}

impl Lane {
    /// `packet`, arrived `at`, decoded on the lane; its samples (or why the call cannot go
    /// on) go to `heard`.
    pub(crate) fn decode(&self, packet: Arc<[u8]>, at: Instant, heard: &UnboundedSender<Audio>) {
        let (dec, tx, backlog) = (self.dec.clone(), heard.clone(), self.backlog.clone());
        self.backlog.push(at);
        let queued = self.tx.send(Box::new(move || {
            let got = match dec.lock() {
                Ok(mut d) => d.decode(&packet),
                Err(_) => Err(gone()),
            };
            let _ = tx.send(match got {
                Ok(samples) => Audio::Samples(samples, at),
                Err(e) => Audio::Ended(e),
            });
            // After the samples are on their way: a call that finds its backlog empty has
            // them to read.
            backlog.pop();
        }));
        if queued.is_err() {
            self.backlog.pop();
            let _ = heard.send(Audio::Ended(gone()));
        }
    }
}

fn gone() -> CallError {
    CallError::new(
        "media",
        "the bot's audio could not be decoded: the decoding thread is gone",
    )
}

/// The bot's packets decoded at the call's rate (libopus).
pub(crate) struct Decoder {
    dec: opus::Decoder,
    pcm: Vec<i16>,
}

impl Decoder {
    pub(crate) fn new(rate: u32) -> Result<Decoder, CallError> {
        let dec = opus::Decoder::new(rate, opus::Channels::Mono)
            .map_err(|e| CallError::new("media", format!("Opus at {rate} Hz: {e}")))?;
        Ok(Decoder {
            dec,
            pcm: vec![0; 5760],
        })
    }

    /// The bot's packet as samples at the call's rate.
    pub(crate) fn decode(&mut self, packet: &[u8]) -> Result<Vec<f32>, CallError> {
        let n = self.dec.decode(packet, &mut self.pcm, false).map_err(|e| {
            CallError::new(
                "media",
                format!("the bot sent an Opus payload that does not decode ({e})"),
            )
        })?;
        Ok(self.pcm[..n].iter().map(|&s| s as f32 / 32768.0).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_calls_packets_come_back_decoded_in_order_with_their_arrival() {
        let rate = 16000;
        let frame = Duration::from_millis(20);
        // Five loud frames, then five quiet: the order shows in the samples.
        let tone: Vec<f32> = (0..1600).map(|i| (i as f32 * 0.05).sin() * 0.5).collect();
        let mut packets = crate::codec::encode(&tone, rate, frame).unwrap();
        packets.extend(std::iter::repeat_n(
            crate::codec::silence(rate, frame).unwrap(),
            5,
        ));
        let decoding = Decoding::new("t-opus", 2);
        let backlog = Backlog::default();
        let lane = decoding.lane(rate, backlog.clone()).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let t0 = Instant::now();
        let at: Vec<Instant> = (0..10).map(|i| t0 + frame * i).collect();
        for (p, &a) in packets.iter().zip(&at) {
            lane.decode(p.as_slice().into(), a, &tx);
        }
        lane.decode(Arc::from(&[0xffu8, 0xff, 0xff][..]), t0, &tx);
        // Nothing is decoded until the lane runs; what waits is known by when it arrived.
        let oldest = backlog.oldest();
        assert!(oldest.is_none() || oldest >= Some(t0), "{oldest:?}");
        let mut loud = Vec::new();
        for want in &at {
            match rx.blocking_recv() {
                Some(Audio::Samples(s, got)) => {
                    assert_eq!((s.len(), got), (320, *want), "a frame, stamped as it came");
                    loud.push(s.iter().fold(0.0f32, |m, x| m.max(x.abs())) > 0.05);
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(loud[..4], [true; 4], "{loud:?}");
        assert_eq!(loud[7..], [false; 3], "{loud:?}");
        assert!(
            matches!(rx.blocking_recv(), Some(Audio::Ended(e)) if e.message.contains("does not decode"))
        );
        // Every packet handed over was decoded: the call's clock is the wall clock again.
        let waited = Instant::now() + Duration::from_secs(10);
        while backlog.oldest().is_some() && Instant::now() < waited {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(backlog.oldest(), None);
    }
}
