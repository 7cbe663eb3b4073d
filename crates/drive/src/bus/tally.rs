//! Stamps and the account of a bus: what each subscriber saw, added up into lost,
//! duplicated, out-of-order and fairness. Pure: no I/O, no clock.

use hdrhistogram::Histogram;
use std::collections::{HashMap, HashSet};

/// `pst.<run tag, 8 hex>.<publisher>.<sequence>.<µs since the run's start>` — plain
/// ASCII that survives JSON, RESP, STOMP and MessagePack strings unchanged.
pub fn stamp(tag: u32, publisher: u32, seq: u32, sent_us: u64) -> String {
    format!("pst.{tag:08x}.{publisher}.{seq}.{sent_us}")
}

/// A stamp found in a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub publisher: u32,
    pub seq: u32,
    pub sent_us: u64,
}

fn digits(b: &[u8]) -> (Option<u64>, usize) {
    let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
    let v = std::str::from_utf8(&b[..n])
        .ok()
        .and_then(|s| s.parse().ok());
    (v, n)
}

/// What every stamp of run `tag` begins with.
pub fn head(tag: u32) -> Vec<u8> {
    format!("pst.{tag:08x}.").into_bytes()
}

/// Every stamp of run `tag` in `frame` (others' are not this run's messages).
pub fn scan(frame: &[u8], tag: u32) -> Vec<Stamp> {
    scan_for(frame, &head(tag))
}

/// [`scan`] with the run's [`head`] made once.
pub fn scan_for(frame: &[u8], head: &[u8]) -> Vec<Stamp> {
    let mut out = Vec::new();
    if frame.len() < head.len() {
        return out;
    }
    let mut i = 0;
    while let Some(at) = frame[i..].windows(head.len()).position(|w| w == head) {
        let mut j = i + at + head.len();
        i = j;
        let mut parts = [0u64; 3];
        let mut whole = true;
        for (k, part) in parts.iter_mut().enumerate() {
            let (v, n) = digits(&frame[j..]);
            match v {
                Some(v) => *part = v,
                None => {
                    whole = false;
                    break;
                }
            }
            j += n;
            if k < 2 {
                if frame.get(j) != Some(&b'.') {
                    whole = false;
                    break;
                }
                j += 1;
            }
        }
        if whole && parts[0] <= u32::MAX as u64 && parts[1] <= u32::MAX as u64 {
            out.push(Stamp {
                publisher: parts[0] as u32,
                seq: parts[1] as u32,
                sent_us: parts[2],
            });
            i = j;
        }
    }
    out
}

/// What one subscriber saw.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    /// (publisher, sequence) of every distinct message.
    pub distinct: HashSet<(u32, u32)>,
    pub received: u64,
    pub out_of_order: u64,
    last: HashMap<u32, u32>,
    /// When its first message arrived (µs since the run's start).
    pub first_us: Option<u64>,
}

impl Seen {
    /// Counts one delivery; returns its latency in µs when it is new (not a duplicate).
    pub fn take(&mut self, s: Stamp, now_us: u64) -> Option<u64> {
        self.received += 1;
        self.first_us.get_or_insert(now_us);
        if !self.distinct.insert((s.publisher, s.seq)) {
            return None;
        }
        match self.last.get(&s.publisher) {
            Some(&prev) if s.seq < prev => self.out_of_order += 1,
            _ => {
                self.last.insert(s.publisher, s.seq);
            }
        }
        Some(now_us.saturating_sub(s.sent_us).max(1))
    }
}

/// Everything the run measured, for the account.
pub struct Run<'a> {
    pub queue: bool,
    pub ordered: bool,
    pub transport: &'static str,
    /// Messages each publisher wrote.
    pub published: &'a [u64],
    pub seen: &'a [Seen],
    /// Delivery latency of every distinct delivery, µs.
    pub delivery_us: &'a Histogram<u64>,
    pub first_publish_us: Option<u64>,
    pub last_publish_us: Option<u64>,
    pub last_delivery_us: Option<u64>,
}

fn ms(us: u64) -> f64 {
    result::round2(us as f64 / 1000.0)
}

fn q(h: &Histogram<u64>, p: f64) -> Option<f64> {
    (!h.is_empty()).then(|| ms(h.value_at_quantile(p)))
}

/// A message counts only if some publisher wrote it (a stamp past what was written is
/// not this run's).
fn written(published: &[u64], s: &(u32, u32)) -> bool {
    published
        .get(s.0 as usize)
        .is_some_and(|&n| (s.1 as u64) < n)
}

/// The account of a bus run.
pub fn account(r: &Run) -> result::Bus {
    let published: u64 = r.published.iter().sum();
    let per_sub: Vec<u64> = r
        .seen
        .iter()
        .map(|s| {
            s.distinct
                .iter()
                .filter(|m| written(r.published, m))
                .count() as u64
        })
        .collect();
    let c = counts(r, published, &per_sub);
    let span_s = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) if b > a => (b - a) as f64 / 1e6,
        _ => 0.0,
    };
    let rate = |n: u64, s: f64| {
        if s > 0.0 {
            result::round2(n as f64 / s)
        } else {
            0.0
        }
    };
    let first = first_messages(r);
    result::Bus {
        mode: if r.queue { "queue" } else { "fanout" }.into(),
        transport: r.transport.to_string(),
        ordered: r.ordered,
        publishers: r.published.len(),
        subscribers: r.seen.len(),
        published,
        expected: c.expected,
        delivered: c.delivered,
        lost: c.lost,
        duplicated: c.duplicated,
        out_of_order: r.seen.iter().map(|s| s.out_of_order).sum(),
        subscribers_with_loss: c.with_loss,
        publish_per_s: rate(published, span_s(r.first_publish_us, r.last_publish_us)),
        deliver_per_s: rate(c.delivered, span_s(r.first_publish_us, r.last_delivery_us)),
        p50_delivery_ms: q(r.delivery_us, 0.5),
        p99_delivery_ms: q(r.delivery_us, 0.99),
        max_delivery_ms: (!r.delivery_us.is_empty()).then(|| ms(r.delivery_us.max())),
        p50_first_message_ms: q(&first, 0.5),
        max_first_message_ms: (!first.is_empty()).then(|| ms(first.max())),
        fairness: r.queue.then(|| fairness(&per_sub)),
    }
}

/// Messages expected, delivered, lost and duplicated, and the subscribers that lost some.
struct Counts {
    expected: u64,
    delivered: u64,
    lost: u64,
    duplicated: u64,
    with_loss: usize,
}

/// A queue owes each message once to any consumer; a fanout owes it to every subscriber.
fn counts(r: &Run, published: u64, per_sub: &[u64]) -> Counts {
    let received: u64 = r.seen.iter().map(|s| s.received).sum();
    if r.queue {
        let union: HashSet<&(u32, u32)> = r
            .seen
            .iter()
            .flat_map(|s| s.distinct.iter())
            .filter(|m| written(r.published, m))
            .collect();
        let got = union.len() as u64;
        let lost = published.saturating_sub(got);
        return Counts {
            expected: published,
            delivered: got,
            lost,
            duplicated: received.saturating_sub(got),
            with_loss: usize::from(lost > 0),
        };
    }
    let expected = published * r.seen.len() as u64;
    let delivered: u64 = per_sub.iter().sum();
    Counts {
        expected,
        delivered,
        lost: expected.saturating_sub(delivered),
        duplicated: r
            .seen
            .iter()
            .map(|s| s.received - s.distinct.len() as u64)
            .sum(),
        with_loss: per_sub.iter().filter(|&&n| n < published).count(),
    }
}

/// Each subscriber's first message, timed from the first publish.
fn first_messages(r: &Run) -> Histogram<u64> {
    let mut first = Histogram::<u64>::new(3).expect("static");
    if let Some(p0) = r.first_publish_us {
        for f in r.seen.iter().filter_map(|s| s.first_us) {
            let _ = first.record(f.saturating_sub(p0).max(1));
        }
    }
    first
}

/// The fewest messages a consumer got over the most (1: perfectly fair).
fn fairness(per_sub: &[u64]) -> f64 {
    let max = per_sub.iter().copied().max().unwrap_or(0);
    let min = per_sub.iter().copied().min().unwrap_or(0);
    if max == 0 {
        0.0
    } else {
        (min as f64 / max as f64 * 1000.0).round() / 1000.0
    }
}
