//! The cache's entries: a prefix's key (its scope and hash) with when it expires, a
//! lifetime renewed by every use, and a capacity beyond which the least recently used
//! entry is evicted — so a busy provider forgets prefixes, as real ones do under load.
//!
//! Time comes in as milliseconds since the mock started (no clock of its own), so the
//! tests can walk it. Sharded by key so concurrent requests rarely share a lock; each
//! shard evicts on its own.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

const SHARDS: usize = 16;

struct Slot {
    expires_ms: u64,
    ttl_ms: u64,
    /// When it was last used, in the shard's order of uses.
    used: u64,
}

#[derive(Default)]
struct Shard {
    slots: HashMap<u64, Slot>,
    /// Use order → key: the least recently used first.
    order: BTreeMap<u64, u64>,
    uses: u64,
}

impl Shard {
    fn touch(&mut self, key: u64) {
        self.uses += 1;
        let now = self.uses;
        if let Some(s) = self.slots.get_mut(&key) {
            self.order.remove(&s.used);
            s.used = now;
            self.order.insert(now, key);
        }
    }

    fn remove(&mut self, key: u64) {
        if let Some(s) = self.slots.remove(&key) {
            self.order.remove(&s.used);
        }
    }
}

/// The provider's cache entries.
pub struct Store {
    shards: Vec<Mutex<Shard>>,
    per_shard: usize,
    /// Entries dropped to make room, and entries found expired.
    pub evicted: AtomicU64,
    pub expired: AtomicU64,
}

impl Store {
    /// A store of at most `capacity` entries (at least one a shard).
    pub fn new(capacity: usize) -> Store {
        let n = SHARDS.min(capacity.max(1));
        Store {
            shards: (0..n).map(|_| Mutex::new(Shard::default())).collect(),
            per_shard: capacity.max(1).div_ceil(n),
            evicted: AtomicU64::new(0),
            expired: AtomicU64::new(0),
        }
    }

    fn shard(&self, key: u64) -> std::sync::MutexGuard<'_, Shard> {
        self.shards[(key % self.shards.len() as u64) as usize]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `key` is cached at `now_ms`; a hit renews its lifetime.
    pub fn hit(&self, key: u64, now_ms: u64) -> bool {
        let mut s = self.shard(key);
        let Some(slot) = s.slots.get_mut(&key) else {
            return false;
        };
        if slot.expires_ms <= now_ms {
            s.remove(key);
            self.expired.fetch_add(1, Relaxed);
            return false;
        }
        slot.expires_ms = now_ms + slot.ttl_ms;
        s.touch(key);
        true
    }

    /// Caches `key` for `ttl_ms` from `now_ms` (an entry already there keeps the longer
    /// of its lifetimes), evicting the least recently used entry when full.
    pub fn write(&self, key: u64, ttl_ms: u64, now_ms: u64) {
        let mut s = self.shard(key);
        if let Some(slot) = s.slots.get_mut(&key) {
            slot.ttl_ms = slot.ttl_ms.max(ttl_ms);
            slot.expires_ms = slot.expires_ms.max(now_ms + ttl_ms);
            s.touch(key);
            return;
        }
        while s.slots.len() >= self.per_shard {
            let Some((_, oldest)) = s.order.pop_first() else {
                break;
            };
            s.slots.remove(&oldest);
            self.evicted.fetch_add(1, Relaxed);
        }
        s.uses += 1;
        let used = s.uses;
        s.slots.insert(
            key,
            Slot {
                expires_ms: now_ms + ttl_ms,
                ttl_ms,
                used,
            },
        );
        s.order.insert(used, key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_unless_used_and_a_use_renews_them() {
        let s = Store::new(100);
        s.write(7, 1000, 0);
        assert!(s.hit(7, 999), "alive just before its ttl");
        // The hit at 999 renewed it to 1999.
        assert!(s.hit(7, 1998));
        assert!(!s.hit(7, 2998 + 1), "expired after a ttl without use");
        assert_eq!(s.expired.load(Relaxed), 1);
        assert!(!s.hit(7, 3000), "and gone");
        // A rewrite keeps the longer lifetime (a 1 h entry is not shortened by a 5 m one).
        s.write(8, 3_600_000, 0);
        s.write(8, 300_000, 10);
        assert!(s.hit(8, 1_000_000));
    }

    #[test]
    fn the_least_recently_used_entry_is_evicted_when_full() {
        // Capacity 2: two shards of one entry each; a and b fall in the same one.
        let s = Store::new(2);
        let shards = s.shards.len() as u64;
        let (a, b) = (0, shards);
        s.write(a, 1000, 0);
        assert!(s.hit(a, 1));
        s.write(b, 1000, 2);
        assert!(!s.hit(a, 3), "one entry per shard: b evicted a");
        assert_eq!(s.evicted.load(Relaxed), 1);
        let s = Store::new(1000);
        let keys: Vec<u64> = (0..64).map(|i| i * 16).collect(); // all in shard 0
        for (t, k) in keys.iter().enumerate() {
            s.write(*k, 10_000, t as u64);
        }
        // 63 entries a shard (1000 / 16 rounded up): the first written went first.
        assert!(!s.hit(keys[0], 100));
        assert!(s.hit(keys[1], 100) && s.hit(keys[63], 100));
        s.write(64 * 16, 10_000, 101);
        assert!(!s.hit(keys[2], 102), "the least recently used went next");
        assert!(s.hit(keys[1], 102), "a hit had made it recent");
    }
}
