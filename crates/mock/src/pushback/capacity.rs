//! Generation slots: at most `max_in_flight` replies at once, the rest waiting first in,
//! first out in a queue that may be bounded, and how busy the slots were.
//!
//! A [`Slot`] is held for as long as its reply is being sent (a stream's whole body) and
//! frees its place when dropped; a request that stops waiting (its client went away)
//! leaves the queue.

use crate::pushback::limits::Capacity;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::{Arc, RwLock};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// One scope's slots (the provider's, or one model's).
pub struct Gate {
    cap: RwLock<Capacity>,
    /// Whose slots: `*` (the provider's) or a model's name.
    pub scope: String,
    sem: Arc<Semaphore>,
    /// Slots to take away when replies free them (a live change made them fewer).
    debt: AtomicU32,
    queued: AtomicU32,
    in_flight: AtomicU32,
    pub peak_queued: AtomicU32,
}

/// A reply's place in a gate.
pub struct Slot {
    gate: Arc<Gate>,
    permit: Option<OwnedSemaphorePermit>,
    /// Slots busy when this one was taken, this one included.
    pub occupied: u32,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.gate.in_flight.fetch_sub(1, Relaxed);
        let owed = self
            .gate
            .debt
            .fetch_update(Relaxed, Relaxed, |d| d.checked_sub(1))
            .is_ok();
        if let (true, Some(p)) = (owed, self.permit.take()) {
            p.forget();
        }
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
    pub fn new(cap: Capacity, scope: String) -> Gate {
        Gate {
            cap: RwLock::new(cap),
            scope,
            sem: Arc::new(Semaphore::new(cap.max_in_flight as usize)),
            debt: AtomicU32::new(0),
            queued: AtomicU32::new(0),
            in_flight: AtomicU32::new(0),
            peak_queued: AtomicU32::new(0),
        }
    }

    pub fn cap(&self) -> Capacity {
        *self.cap.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a live change: more slots are free at once (the queue moves on in order),
    /// fewer are taken back as replies free them; the queue's bound and the slowdown
    /// follow the new capacity.
    pub fn resize(&self, new: Capacity) {
        if self.cap() == new {
            return; // the common case, every request: no write lock
        }
        let mut cap = self.cap.write().unwrap_or_else(|p| p.into_inner());
        if *cap == new {
            return;
        }
        let (old, want) = (cap.max_in_flight, new.max_in_flight);
        if want > old {
            let mut more = want - old;
            // Pay back what is still owed first.
            while more > 0
                && self
                    .debt
                    .fetch_update(Relaxed, Relaxed, |d| d.checked_sub(1))
                    .is_ok()
            {
                more -= 1;
            }
            self.sem.add_permits(more as usize);
        } else if want < old {
            let fewer = (old - want) as usize;
            let now = self.sem.forget_permits(fewer);
            self.debt.fetch_add((fewer - now) as u32, Relaxed);
        }
        *cap = new;
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
                let cap = self.cap();
                if let Some(max) = cap.max_queue {
                    if ahead >= max {
                        return Err(Full {
                            retry_after_ms: cap.retry_after_ms,
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
            permit: Some(permit),
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
        let g = Arc::new(Gate::new(cap(2, Some(1)), "*".into()));
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
        let g = Arc::new(Gate::new(cap(1, None), "*".into()));
        let _a = g.enter().await.unwrap();
        let gone = tokio::time::timeout(std::time::Duration::from_millis(20), g.enter()).await;
        assert!(gone.is_err());
        assert_eq!(g.queued(), 0);
    }

    #[tokio::test]
    async fn a_live_resize_keeps_the_queue_in_order() {
        let g = Arc::new(Gate::new(cap(1, None), "*".into()));
        let a = g.enter().await.unwrap();
        let mut waiters = Vec::new();
        for _ in 0..3 {
            let g2 = g.clone();
            waiters.push(tokio::spawn(async move { g2.enter().await.ok() }));
            while g.queued() < waiters.len() as u32 {
                tokio::task::yield_now().await;
            }
        }
        // Three slots now: the first two waiters go at once, on the same gate, in order.
        g.resize(cap(3, None));
        let first: Vec<Slot> = vec![
            waiters.remove(0).await.unwrap().unwrap(),
            waiters.remove(0).await.unwrap().unwrap(),
        ];
        assert_eq!((g.queued(), g.in_flight()), (1, 3));
        // Back to one slot: taken back as replies end. With `a` and one more gone, two are
        // owed; the third waiter gets the slot the last reply frees.
        g.resize(cap(1, None));
        drop(a);
        let mut first = first.into_iter();
        drop(first.next());
        tokio::task::yield_now().await;
        assert_eq!(g.queued(), 1);
        drop(first.next());
        let last = waiters.remove(0).await.unwrap().unwrap();
        assert_eq!((last.occupied, g.cap().max_in_flight), (1, 1));
    }
}
