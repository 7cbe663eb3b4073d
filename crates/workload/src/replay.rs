//! Which recorded session each driven session plays, and how: **exact** — recorded
//! session `i` is driven session `i`, once, at its recorded start (time scaled by the
//! speed) — or **sampled** — any number of sessions drawn with a seed, each block of as
//! many sessions as were recorded a fresh shuffle of all of them, so every recorded
//! session (the longest too) comes once per block and the tail is kept, not averaged
//! away. The mock and the driver ask the same [`Replay`] and get the same answers.

use crate::model::Workload;
use crate::session::Session;
use crate::tokens;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// Each recorded session once, at its recorded start divided by `speed`.
    Exact { speed: f64 },
    /// Sessions drawn from the recording with the seed, at any count or rate.
    Sampled,
}

/// What the user's messages say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prompts {
    /// Deterministic filler of the recorded size: nothing recorded is sent.
    Filler,
    /// The recorded text where the recording has it, filler elsewhere.
    Recorded,
}

/// A workload ready to replay.
#[derive(Debug)]
pub struct Replay {
    pub workload: Workload,
    pub mode: Mode,
    pub prompts: Prompts,
    seed: u64,
    /// The shuffles drawn so far, by block.
    blocks: Mutex<HashMap<usize, Arc<Vec<usize>>>>,
}

impl Replay {
    pub fn new(workload: Workload, mode: Mode, prompts: Prompts, seed: u64) -> Replay {
        Replay {
            workload,
            mode,
            prompts,
            seed,
            blocks: Mutex::new(HashMap::new()),
        }
    }

    /// The sessions an exact replay drives: every recorded one.
    pub fn recorded_sessions(&self) -> usize {
        self.workload.sessions.len()
    }

    pub fn exact(&self) -> bool {
        matches!(self.mode, Mode::Exact { .. })
    }

    fn speed(&self) -> f64 {
        match self.mode {
            Mode::Exact { speed } if speed > 0.0 => speed,
            _ => 1.0,
        }
    }

    /// The recorded session driven session `i` plays (none past the end of an exact replay).
    pub fn pick(&self, i: usize) -> Option<usize> {
        let n = self.workload.sessions.len();
        match self.mode {
            Mode::Exact { .. } => (i < n).then_some(i),
            Mode::Sampled if n == 0 => None,
            Mode::Sampled => {
                let block = self.block(i / n);
                Some(block[i % n])
            }
        }
    }

    pub fn session(&self, i: usize) -> Option<&Session> {
        self.pick(i).map(|k| &self.workload.sessions[k])
    }

    fn block(&self, b: usize) -> Arc<Vec<usize>> {
        let mut blocks = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
        blocks
            .entry(b)
            .or_insert_with(|| {
                let mut order: Vec<usize> = (0..self.workload.sessions.len()).collect();
                let mut rng =
                    ChaCha8Rng::seed_from_u64(self.seed ^ (b as u64).wrapping_mul(0x9E37_79B9));
                order.shuffle(&mut rng);
                Arc::new(order)
            })
            .clone()
    }

    /// When driven session `i` starts, from the first (exact replays only).
    pub fn start_ms(&self, i: usize) -> Option<f64> {
        match self.mode {
            Mode::Exact { .. } => self.session(i).map(|s| s.start_ms / self.speed()),
            Mode::Sampled => None,
        }
    }

    /// How many turns driven session `i` runs.
    pub fn turns(&self, i: usize) -> u32 {
        self.session(i).map_or(0, |s| s.turns.len() as u32)
    }

    /// The pause before turn `turn` (1-based) of driven session `i`.
    pub fn think_ms(&self, i: usize, turn: u32) -> f64 {
        let t = self
            .session(i)
            .and_then(|s| s.turns.get(turn.max(1) as usize - 1));
        t.map_or(0.0, |t| t.think_ms / self.speed())
    }

    /// The user's words of turn `turn` (1-based) of driven session `i`: filler of the
    /// recorded size, or the recorded text when asked for and present.
    pub fn prompt(&self, i: usize, turn: u32) -> String {
        let Some(t) = self
            .session(i)
            .and_then(|s| s.turns.get(turn.max(1) as usize - 1))
        else {
            return String::new();
        };
        match (&t.user_text, self.prompts) {
            (Some(text), Prompts::Recorded) => text.clone(),
            _ => tokens::filler(t.user_tokens, self.seed ^ ((i as u64) << 20) ^ turn as u64),
        }
    }

    /// The driven index in a session's name (`s12`, `run7-s12`): what the mock sees.
    pub fn index_of(name: &str) -> Option<usize> {
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (head, tail) = name.split_at(name.len() - digits);
        (digits > 0 && head.ends_with('s'))
            .then(|| tail.parse().ok())
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Source, Turn};

    fn workload(n: usize) -> Workload {
        let sessions = (0..n)
            .map(|k| Session {
                id: format!("c{k}"),
                start_ms: k as f64 * 100.0,
                turns: (0..=k)
                    .map(|t| Turn {
                        think_ms: if t == 0 { 0.0 } else { 50.0 },
                        duration_ms: 10.0,
                        user_tokens: 5,
                        user_text: Some("hello there".into()),
                        calls: Vec::new(),
                        unasked_tools: Vec::new(),
                    })
                    .collect(),
            })
            .collect();
        Workload::new(Source::of(Vec::new()), sessions)
    }

    #[test]
    fn exact_plays_each_once_at_its_start_scaled() {
        let r = Replay::new(workload(3), Mode::Exact { speed: 2.0 }, Prompts::Filler, 1);
        assert_eq!((r.pick(2), r.pick(3)), (Some(2), None));
        assert_eq!(r.start_ms(2), Some(100.0));
        assert_eq!((r.turns(2), r.think_ms(2, 2)), (3, 25.0));
        assert_eq!(tokens::count(&r.prompt(1, 1)), 5);
    }

    #[test]
    fn sampled_blocks_hold_every_session_once_and_replay_by_seed() {
        let r = Replay::new(workload(5), Mode::Sampled, Prompts::Recorded, 7);
        for b in 0..4 {
            let mut got: Vec<usize> = (b * 5..b * 5 + 5).filter_map(|i| r.pick(i)).collect();
            got.sort();
            assert_eq!(got, [0, 1, 2, 3, 4]);
        }
        let again = Replay::new(workload(5), Mode::Sampled, Prompts::Recorded, 7);
        assert_eq!(
            (0..20).map(|i| r.pick(i)).collect::<Vec<_>>(),
            (0..20).map(|i| again.pick(i)).collect::<Vec<_>>()
        );
        assert_eq!(r.prompt(0, 1), "hello there");
        assert_eq!(r.start_ms(0), None);
    }

    #[test]
    fn reads_the_index_in_a_session_name() {
        assert_eq!(Replay::index_of("s12"), Some(12));
        assert_eq!(Replay::index_of("run7-s3"), Some(3));
        assert_eq!(Replay::index_of("-"), None);
        assert_eq!(Replay::index_of("x12"), None);
    }
}
