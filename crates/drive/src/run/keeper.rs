//! Which calls' audio a step keeps, and the step's account of it: the memory all its
//! calls' tapes hold at once (capped), and the calls kept (at most so many, the rest
//! counted). Each call's own tape is `tape`'s.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

pub use super::options::KeepAudio;

/// A step's keeper: the policy, the memory its tapes hold, and the calls kept.
pub(crate) struct Keeper {
    pub how: KeepAudio,
    used: AtomicUsize,
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    names: Vec<String>,
    left_out: u64,
    /// Of the kept, the calls kept only for a reply damaged past reading.
    damaged: usize,
}

impl Keeper {
    pub fn new(how: KeepAudio) -> Keeper {
        Keeper {
            how,
            used: AtomicUsize::new(0),
            kept: Mutex::default(),
        }
    }

    /// Takes room for `bytes` more of a tape; false when the step's budget is spent.
    pub(crate) fn reserve(&self, bytes: usize) -> bool {
        let before = self.used.fetch_add(bytes, Relaxed);
        if before + bytes > self.how.budget {
            self.used.fetch_sub(bytes, Relaxed);
            return false;
        }
        true
    }

    pub(crate) fn release(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Relaxed);
    }

    /// What the tapes hold now, in bytes.
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.used.load(Relaxed)
    }

    /// A call to keep: its place among the kept, or None past the cap (counted). A call
    /// kept only for a reply damaged past reading (it did not fail) gets at most half the
    /// places, so that a pipeline damaging every reply leaves room for the calls that fail.
    pub(crate) fn admit(&self, name: &str, damaged: bool) -> Option<()> {
        let mut k = self.kept.lock().ok()?;
        let room = k.names.len() < self.how.calls && (!damaged || k.damaged < self.how.calls / 2);
        match room {
            true => {
                k.names.push(name.to_string());
                k.damaged += usize::from(damaged);
                Some(())
            }
            false => {
                k.left_out += 1;
                None
            }
        }
    }

    /// What RESULT says of the kept audio; None when nothing was kept or left out.
    pub fn figures(&self) -> Option<result::KeptAudio> {
        let k = self.kept.lock().ok()?;
        (!k.names.is_empty() || k.left_out > 0).then(|| result::KeptAudio {
            dir: self.how.dir.display().to_string(),
            calls: k.names.clone(),
            left_out: k.left_out,
            cap: self.how.calls as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn keeper(budget: usize) -> Keeper {
        Keeper::new(KeepAudio {
            dir: PathBuf::from("kept"),
            all: false,
            calls: 1,
            budget,
        })
    }

    #[test]
    fn past_the_cap_a_call_is_counted_not_kept() {
        let k = keeper(1 << 20);
        assert!(k.admit("a", false).is_some());
        assert!(k.admit("b", false).is_none());
        let f = k.figures().unwrap();
        assert_eq!((f.calls, f.left_out, f.cap), (vec!["a".to_string()], 1, 1));
    }

    /// Calls kept only for a damaged reply take at most half the places: the rest stay
    /// for calls that fail.
    #[test]
    fn damaged_replies_leave_room_for_failed_calls() {
        let k = Keeper::new(KeepAudio {
            dir: PathBuf::from("kept"),
            all: false,
            calls: 4,
            budget: 1 << 20,
        });
        assert!(k.admit("d1", true).is_some());
        assert!(k.admit("d2", true).is_some());
        assert!(k.admit("d3", true).is_none(), "half the places at most");
        assert!(k.admit("f1", false).is_some());
        assert!(k.admit("f2", false).is_some());
        assert!(k.admit("f3", false).is_none(), "the cap holds for all");
        assert_eq!(k.figures().unwrap().left_out, 2);
        // With one place, it is kept for a call that fails.
        assert!(keeper(1 << 20).admit("d", true).is_none());
    }
}
