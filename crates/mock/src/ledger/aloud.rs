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

    /// The replies spoken between `since` and `until` ago (`since` the longer), by session
    /// (the first spoken first) with its texts in the order spoken, at most `most` sessions.
    pub fn between(
        &self,
        since: Duration,
        until: Duration,
        most: usize,
    ) -> Vec<(String, Vec<String>)> {
        let now = Instant::now();
        let (from, to) = (now.checked_sub(since), now.checked_sub(until));
        let q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        let inside = q
            .iter()
            .filter(|(at, _, _)| from.is_none_or(|f| *at >= f) && to.is_none_or(|t| *at <= t));
        for (_, session, text) in inside {
            match out.iter().position(|(s, _)| s == session) {
                Some(i) => out[i].1.push(text.clone()),
                None if out.len() < most => out.push((session.clone(), vec![text.clone()])),
                None => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_windows_replies_by_session_their_texts_in_order() {
        let a = Aloud::default();
        a.said("s0", "old");
        std::thread::sleep(Duration::from_millis(60));
        a.said("s0", "one");
        a.said("s1", "two");
        a.said("s0", "three");
        let secs = Duration::from_secs;
        let got = a.between(Duration::from_millis(40), Duration::ZERO, 8);
        let want = [("s0", vec!["one", "three"]), ("s1", vec!["two"])];
        let want: Vec<(String, Vec<String>)> = want
            .map(|(s, t)| (s.into(), t.into_iter().map(String::from).collect()))
            .into();
        assert_eq!(got, want);
        assert_eq!(
            a.between(secs(60), Duration::ZERO, 1).len(),
            1,
            "at most one session"
        );
        assert!(
            a.between(secs(60), secs(30), 8).is_empty(),
            "none that long ago"
        );
        for i in 0..KEPT + 5 {
            a.said("s", &i.to_string());
        }
        assert_eq!(a.0.lock().unwrap().len(), KEPT);
    }
}
