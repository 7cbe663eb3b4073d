//! The span of full load of a closed-model step: from the first turn done to the first
//! session's end, when every session was in flight with one turn outstanding. Its mean
//! turn time is that of the turns that *began* inside it (each timed to its end, even past
//! the span: choosing by end would keep the quick ones and drop the ones still queued); by
//! Little's law the steady rate is then sessions / (mean turn + think time) — free of the
//! start (every session waiting on its first reply), of the tail (sessions finishing, the
//! SUT idling), and of counting whole turns in a short span.

use std::sync::Mutex;
use std::time::Duration;

/// The span in which every session was in flight and turns were coming out: from the
/// first turn done to the first session's end, in ms from the start of driving.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FullLoad {
    pub from_ms: f64,
    pub to_ms: f64,
    /// Turns that began inside it, and their mean time.
    pub turns: u64,
    pub mean_turn_ms: f64,
    /// The mean turn time of the turns that began in the span's last third over that of
    /// those that began in its first third: 1 when work keeps pace, rising when it backs
    /// up through the step. None with too few turns in either third.
    pub trend: Option<f64>,
}

/// What the driver notes to find the span: times from the start of driving.
#[derive(Default)]
pub(crate) struct Load {
    first_end: Mutex<Option<Duration>>,
    /// When each turn began and was done (a few bytes a turn).
    turns: Mutex<Vec<(Duration, Duration)>>,
}

impl Load {
    pub fn session_ended(&self, at: Duration) {
        let mut f = self.first_end.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(at);
        }
    }

    pub fn turn_done(&self, began: Duration, done: Duration) {
        self.turns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((began, done));
    }

    pub fn full_load(&self) -> Option<FullLoad> {
        let end = (*self.first_end.lock().unwrap_or_else(|p| p.into_inner()))?;
        let done = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        let first = done.iter().map(|d| d.1).min()?;
        let began_inside = |(b, _): &&(Duration, Duration)| *b >= first && *b < end;
        let mut used: Vec<Duration> = done
            .iter()
            .filter(began_inside)
            .map(|(b, e)| e.saturating_sub(*b))
            .collect();
        if used.is_empty() {
            // One-turn sessions: nothing begins after the first turn ends.
            used = done.iter().map(|(b, e)| e.saturating_sub(*b)).collect();
        }
        let n = used.len() as u64;
        (end > first && n > 0).then(|| FullLoad {
            from_ms: first.as_secs_f64() * 1000.0,
            to_ms: end.as_secs_f64() * 1000.0,
            turns: n,
            mean_turn_ms: used.iter().map(|d| d.as_secs_f64()).sum::<f64>() * 1000.0 / n as f64,
            trend: trend(&done, first, end),
        })
    }
}

/// Turns a third of the span needs before its mean says anything.
const TREND_MIN_TURNS: usize = 5;

/// Mean time of the turns begun in the last third of `[from, to)` over the first third's.
fn trend(turns: &[(Duration, Duration)], from: Duration, to: Duration) -> Option<f64> {
    let third = (to.saturating_sub(from)) / 3;
    let mean_in = |a: Duration, b: Duration| {
        let d: Vec<f64> = turns
            .iter()
            .filter(|(s, _)| *s >= a && *s < b)
            .map(|(s, e)| e.saturating_sub(*s).as_secs_f64())
            .collect();
        (d.len() >= TREND_MIN_TURNS).then(|| d.iter().sum::<f64>() / d.len() as f64)
    };
    let early = mean_in(from, from + third)?;
    let late = mean_in(to - third, to)?;
    (early > 0.0).then(|| late / early)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn queued_turns_count_by_when_they_began() {
        // Two permits, turns of 600 ms, four sessions of two turns: s0 and s1 run first,
        // s2 and s3 wait 600 ms, and so on. Little's law gives 4 / mean turn time.
        let l = Load::default();
        for (b, e) in [
            (0, 600),
            (0, 600),
            (0, 1200),
            (0, 1200),
            (600, 1800),
            (600, 1800),
        ] {
            l.turn_done(ms(b), ms(e));
        }
        l.session_ended(ms(1800));
        for (b, e) in [(1200, 2400), (1200, 2400)] {
            l.turn_done(ms(b), ms(e));
        }
        let f = l.full_load().unwrap();
        assert_eq!((f.from_ms, f.to_ms, f.turns), (600.0, 1800.0, 4));
        // Turns that began in [600, 1800): two of 1200 ms, two of 1200 ms.
        assert_eq!(f.mean_turn_ms, 1200.0);
        assert!((4.0 / (f.mean_turn_ms / 1000.0) - 3.33).abs() < 0.01);
    }

    #[test]
    fn turns_that_slow_through_the_span_show_a_rising_trend() {
        let l = Load::default();
        // Turns begun every 100 ms from 1 s to 7 s; the late ones take twice as long.
        l.turn_done(ms(0), ms(1000));
        for i in 0..60 {
            let b = 1000 + i * 100;
            let took = if b >= 5000 { 800 } else { 400 };
            l.turn_done(ms(b), ms(b + took));
        }
        l.session_ended(ms(7000));
        let f = l.full_load().unwrap();
        assert_eq!(f.trend, Some(2.0));
        let steady = Load::default();
        steady.turn_done(ms(0), ms(1000));
        for i in 0..60 {
            steady.turn_done(ms(1000 + i * 100), ms(1400 + i * 100));
        }
        steady.session_ended(ms(7000));
        assert_eq!(steady.full_load().unwrap().trend, Some(1.0));
        let few = Load::default();
        few.turn_done(ms(0), ms(100));
        few.turn_done(ms(200), ms(300));
        few.session_ended(ms(1000));
        assert_eq!(few.full_load().unwrap().trend, None, "too few turns to say");
    }

    #[test]
    fn nothing_to_say_before_a_session_ends() {
        let l = Load::default();
        l.turn_done(ms(0), ms(100));
        assert_eq!(l.full_load(), None);
    }
}
