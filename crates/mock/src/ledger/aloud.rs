//! The replies the mock spoke aloud lately (speech and Realtime audio): which session's,
//! and their text. The words check compares a reply a caller could not read with these by
//! its sound (two replies interleaved on one call's output read as neither).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The most kept: past it the oldest go (a check asks for the last seconds only).
const KEPT: usize = 4096;

#[derive(Default)]
pub struct Aloud(Mutex<VecDeque<(Instant, String, String)>>);

impl Aloud {
    /// `session`'s reply `text` was spoken now.
    pub fn said(&self, session: &str, text: &str) {
        let mut q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if q.len() >= KEPT {
            q.pop_front();
        }
        q.push_back((Instant::now(), session.to_string(), text.to_string()));
    }

    /// The replies spoken within the last `d`, newest first, each text once: (session,
    /// text).
    pub fn within(&self, d: Duration) -> Vec<(String, String)> {
        let q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let since = Instant::now().checked_sub(d);
        let mut out: Vec<(String, String)> = Vec::new();
        for (at, session, text) in q.iter().rev() {
            if since.is_some_and(|s| *at < s) {
                break;
            }
            if !out.iter().any(|(_, t)| t == text) {
                out.push((session.clone(), text.clone()));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_seconds_replies_newest_first_each_text_once() {
        let a = Aloud::default();
        a.said("s0", "one");
        a.said("s1", "two");
        a.said("s0", "one");
        assert_eq!(
            a.within(Duration::from_secs(60)),
            vec![("s0".into(), "one".into()), ("s1".into(), "two".into())]
        );
        std::thread::sleep(Duration::from_millis(30));
        a.said("s2", "three");
        assert_eq!(
            a.within(Duration::from_millis(20)),
            vec![("s2".into(), "three".into())]
        );
        for i in 0..KEPT + 5 {
            a.said("s", &i.to_string());
        }
        assert_eq!(a.0.lock().unwrap().len(), KEPT);
    }
}
