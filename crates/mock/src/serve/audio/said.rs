//! Speech already made, kept for the next request that asks for the same: a voice agent
//! greets every caller with one sentence, and a bench's streams all say one text. The
//! voice is deterministic (the same text at the same length gives the same samples), so
//! a kept copy is exactly what synthesis would make again, without the milliseconds of
//! CPU that, queued behind each other on a busy core, made every stream's first frame
//! late. The few latest are kept (10 s of speech is ~1 MB).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// How many of the latest speeches are kept.
const KEEP: usize = 8;

type Key = (String, u64);

#[derive(Default)]
pub struct Said {
    kept: Mutex<VecDeque<(Key, Arc<Vec<f32>>)>>,
}

impl Said {
    /// The speech of `text` lasting `seconds`, when it was made lately.
    pub fn get(&self, text: &str, seconds: f64) -> Option<Arc<Vec<f32>>> {
        let kept = self.kept.lock().ok()?;
        kept.iter()
            .find(|((t, s), _)| t == text && *s == seconds.to_bits())
            .map(|(_, a)| a.clone())
    }

    /// Keeps `audio`, the speech of `text` lasting `seconds`, dropping the oldest kept
    /// (streams that asked at once and all made it keep one copy).
    pub fn put(&self, text: &str, seconds: f64, audio: Arc<Vec<f32>>) {
        if let Ok(mut kept) = self.kept.lock() {
            if kept
                .iter()
                .any(|((t, s), _)| t == text && *s == seconds.to_bits())
            {
                return;
            }
            if kept.len() >= KEEP {
                kept.pop_front();
            }
            kept.push_back(((text.to_string(), seconds.to_bits()), audio));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_latest_and_tells_lengths_apart() {
        let said = Said::default();
        said.put("hello", 1.0, Arc::new(vec![0.5; 4]));
        said.put("hello", 1.0, Arc::new(vec![0.5; 4]));
        assert_eq!(said.kept.lock().unwrap().len(), 1, "one copy of one speech");
        assert_eq!(said.get("hello", 1.0).unwrap().len(), 4);
        assert!(said.get("hello", 2.0).is_none());
        for i in 0..KEEP {
            said.put(&format!("t{i}"), 1.0, Arc::new(Vec::new()));
        }
        assert!(said.get("hello", 1.0).is_none(), "the oldest goes");
        assert!(said.get(&format!("t{}", KEEP - 1), 1.0).is_some());
    }
}
