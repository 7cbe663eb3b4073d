//! A costly reading taken at most a share of a core: each reading's own time sets the pause
//! before the next (a reading that took 2 ms, at 1/250 of a core, waits 500 ms). The
//! sampler paces its connection counts and its PSS readings this way.

use std::time::{Duration, Instant};

/// When the next reading is due.
pub struct Paced {
    due: Instant,
    inverse: u32,
    floor: Duration,
}

impl Paced {
    /// Readings at most 1 / `inverse` of a core, and at least `floor` apart.
    pub fn new(inverse: u32, floor: Duration) -> Paced {
        Paced {
            due: Instant::now(),
            inverse,
            floor,
        }
    }

    /// `read()`'s value when a reading is due (timed, to set the next), else None.
    pub fn run<T>(&mut self, read: impl FnOnce() -> T) -> Option<T> {
        let t = Instant::now();
        if t < self.due {
            return None;
        }
        let v = read();
        self.due = t + (t.elapsed() * self.inverse).max(self.floor);
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_waits_its_own_cost_times_the_inverse() {
        let mut p = Paced::new(100, Duration::ZERO);
        let t0 = Instant::now();
        let slow = || std::thread::sleep(Duration::from_millis(2));
        assert!(p.run(slow).is_some());
        // However long the machine took over the 2 ms reading, the next is 100 times that
        // later: at least 200 ms, and not before.
        let wait = p.due - t0;
        assert!(wait >= Duration::from_millis(200), "{wait:?}");
        let due = p.due;
        let early = p.run(|| ());
        assert!(
            early.is_none() || Instant::now() >= due,
            "read before it was due"
        );
        std::thread::sleep(p.due.saturating_duration_since(Instant::now()));
        assert!(p.run(|| ()).is_some());
    }

    #[test]
    fn a_cheap_reading_waits_the_floor() {
        let mut p = Paced::new(100, Duration::from_secs(3600));
        let t0 = Instant::now();
        assert!(p.run(|| ()).is_some());
        assert!(p.due - t0 >= Duration::from_secs(3600));
        assert!(p.run(|| ()).is_none());
    }
}
