//! Generation slots: at most `max_in_flight` replies at once, the rest waiting first in,
//! first out in a queue that may be bounded, and how busy the slots were.
//!
//! A [`Slot`] is held for as long as its reply is being sent (a stream's whole body) and
//! frees its place when dropped; a request that stops waiting (its client went away)
//! leaves the queue.

use crate::limits::Capacity;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// One scope's slots (the provider's, or one model's).
pub struct Gate {
    pub cap: Capacity,
    sem: Arc<Semaphore>,
    queued: AtomicU32,
    in_flight: AtomicU32,
    pub peak_queued: AtomicU32,
}

/// A reply's place in a gate.
pub struct Slot {
    gate: Arc<Gate>,
    _permit: OwnedSemaphorePermit,
    /// Slots busy when this one was taken, this one included.
    pub occupied: u32,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.gate.in_flight.fetch_sub(1, Relaxed);
    }
}

/// Leaves the queue when the wait ends, however it ends.
struct Waiting<'a>(&'a AtomicU32);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Relaxed);
    }
}

/// The queue was full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full {
    pub retry_after_ms: u64,
    pub max_queue: u32,
}

impl Gate {
    pub fn new(cap: Capacity) -> Gate {
        Gate {
            cap,
            sem: Arc::new(Semaphore::new(cap.max_in_flight as usize)),
            queued: AtomicU32::new(0),
            in_flight: AtomicU32::new(0),
            peak_queued: AtomicU32::new(0),
        }
    }

    #[cfg(test)]
    fn in_flight(&self) -> u32 {
        self.in_flight.load(Relaxed)
    }

    pub fn queued(&self) -> u32 {
        self.queued.load(Relaxed)
    }

    /// Takes a slot, waiting in line for one; refuses when the bounded queue is full.
    pub async fn enter(self: &Arc<Self>) -> Result<Slot, Full> {
        let permit = match self.sem.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                let ahead = self.queued.fetch_add(1, Relaxed);
                let waiting = Waiting(&self.queued);
                if let Some(max) = self.cap.max_queue {
                    if ahead >= max {
                        return Err(Full {
                            retry_after_ms: self.cap.retry_after_ms,
                            max_queue: max,
                        });
                    }
                }
                self.peak_queued.fetch_max(ahead + 1, Relaxed);
                let p = self
                    .sem
                    .clone()
                    .acquire_owned()
                    .await
                    .expect("the gate's semaphore is never closed");
                drop(waiting);
                p
            }
        };
        let occupied = self.in_flight.fetch_add(1, Relaxed) + 1;
        Ok(Slot {
            gate: self.clone(),
            _permit: permit,
            occupied,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(n: u32, q: Option<u32>) -> Capacity {
        Capacity {
            max_in_flight: n,
            max_queue: q,
            slowdown_at_full: 1.0,
            retry_after_ms: 250,
        }
    }

    #[tokio::test]
    async fn slots_queue_in_order_and_a_full_queue_refuses() {
        let g = Arc::new(Gate::new(cap(2, Some(1))));
        let a = g.enter().await.unwrap();
        let b = g.enter().await.unwrap();
        assert_eq!((a.occupied, b.occupied, g.in_flight()), (1, 2, 2));
        let g2 = g.clone();
        let waiter = tokio::spawn(async move { g2.enter().await.map(|s| s.occupied) });
        while g.queued() == 0 {
            tokio::task::yield_now().await;
        }
        // The queue holds one: the next is refused with the configured retry-after.
        let full = g.enter().await.err().unwrap();
        assert_eq!(full.retry_after_ms, 250);
        drop(a);
        assert_eq!(waiter.await.unwrap(), Ok(2));
        drop(b);
        assert_eq!((g.in_flight(), g.queued()), (0, 0));
        assert_eq!(g.peak_queued.load(Relaxed), 1);
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_leaves_the_queue() {
        let g = Arc::new(Gate::new(cap(1, None)));
        let _a = g.enter().await.unwrap();
        let gone = tokio::time::timeout(std::time::Duration::from_millis(20), g.enter()).await;
        assert!(gone.is_err());
        assert_eq!(g.queued(), 0);
    }
}
