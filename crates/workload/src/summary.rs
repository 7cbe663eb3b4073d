//! The shape of a workload, for a person and for the tests of a replay: each distribution
//! (turns per session, calls per turn, tokens, tool time, think time, session length) with
//! its p50/p90/p99, its largest values (the tail a mean hides), the recorded peak of
//! sessions at once, and what the recording lacked.

use crate::session::Session;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    pub n: usize,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
    /// The largest values, largest first (at most 5): the tail.
    pub tail: Vec<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub sessions: usize,
    pub turns_per_session: Distribution,
    pub calls_per_turn: Distribution,
    pub input_tokens: Distribution,
    pub output_tokens: Distribution,
    pub tools_per_call: Distribution,
    pub tool_ms: Distribution,
    pub think_ms: Distribution,
    pub session_ms: Distribution,
    /// The most sessions in flight at once in the recording.
    pub peak_concurrency: usize,
    /// Calls with no input or no output count (replayed from the model's defaults).
    pub calls_without_tokens: usize,
    /// Tools run before any model call of their turn (the system's own doing).
    pub unasked_tools: usize,
    /// Model calls made by a sub-agent inside a turn.
    pub sub_agent_calls: usize,
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

impl Distribution {
    pub fn of(values: impl IntoIterator<Item = f64>) -> Distribution {
        let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return Distribution::default();
        }
        v.sort_by(f64::total_cmp);
        let at = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Distribution {
            n: v.len(),
            mean: round2(v.iter().sum::<f64>() / v.len() as f64),
            p50: round2(at(0.5)),
            p90: round2(at(0.9)),
            p99: round2(at(0.99)),
            max: round2(v[v.len() - 1]),
            tail: v.iter().rev().take(5).map(|x| round2(*x)).collect(),
        }
    }

    /// `p50 12 · p90 30 · p99 41 · max 44 (tail 44, 41, 40)`.
    pub fn line(&self) -> String {
        if self.n == 0 {
            return "none recorded".into();
        }
        let tail: Vec<String> = self.tail.iter().map(|x| num(*x)).collect();
        format!(
            "p50 {} · p90 {} · p99 {} · max {} · mean {} (n {}; largest {})",
            num(self.p50),
            num(self.p90),
            num(self.p99),
            num(self.max),
            num(self.mean),
            self.n,
            tail.join(", ")
        )
    }
}

fn num(x: f64) -> String {
    match x.fract() == 0.0 && x.abs() < 1e12 {
        true => format!("{}", x as i64),
        false => format!("{x:.1}"),
    }
}

impl Summary {
    pub fn of(sessions: &[Session]) -> Summary {
        let turns = || sessions.iter().flat_map(|s| &s.turns);
        let calls = || turns().flat_map(|t| &t.calls);
        Summary {
            sessions: sessions.len(),
            turns_per_session: Distribution::of(sessions.iter().map(|s| s.turns.len() as f64)),
            calls_per_turn: Distribution::of(turns().map(|t| t.calls.len() as f64)),
            input_tokens: Distribution::of(calls().filter_map(|c| c.input_tokens.map(f64::from))),
            output_tokens: Distribution::of(calls().filter_map(|c| c.output_tokens.map(f64::from))),
            tools_per_call: Distribution::of(calls().map(|c| c.tools.len() as f64)),
            tool_ms: Distribution::of(
                calls()
                    .flat_map(|c| &c.tools)
                    .chain(turns().flat_map(|t| &t.unasked_tools))
                    .map(|t| t.ms),
            ),
            think_ms: Distribution::of(turns().filter(|t| t.think_ms > 0.0).map(|t| t.think_ms)),
            session_ms: Distribution::of(sessions.iter().map(Session::duration_ms)),
            peak_concurrency: peak(sessions),
            calls_without_tokens: calls()
                .filter(|c| c.input_tokens.is_none() || c.output_tokens.is_none())
                .count(),
            unasked_tools: turns().map(|t| t.unasked_tools.len()).sum(),
            sub_agent_calls: calls().filter(|c| c.agent.is_some()).count(),
        }
    }

    /// The summary as a person reads it.
    pub fn text(&self) -> String {
        let mut out = format!(
            "{} sessions, at most {} at once\n",
            self.sessions, self.peak_concurrency
        );
        let rows = [
            ("turns per session", &self.turns_per_session),
            ("calls per turn", &self.calls_per_turn),
            ("tools per call", &self.tools_per_call),
            ("input tokens/call", &self.input_tokens),
            ("output tokens/call", &self.output_tokens),
            ("tool time, ms", &self.tool_ms),
            ("think time, ms", &self.think_ms),
            ("session time, ms", &self.session_ms),
        ];
        for (name, d) in rows {
            out.push_str(&format!("  {name:<19} {}\n", d.line()));
        }
        if self.calls_without_tokens > 0 {
            out.push_str(&format!(
                "  {} no token count: replayed with the scenario's output length\n",
                match self.calls_without_tokens {
                    1 => "1 call had".to_string(),
                    n => format!("{n} calls had"),
                }
            ));
        }
        if self.unasked_tools > 0 {
            out.push_str(&format!(
                "  {} before any model call of their turn: the system's own, not replayed\n",
                match self.unasked_tools {
                    1 => "1 tool run came".to_string(),
                    n => format!("{n} tool runs came"),
                }
            ));
        }
        if self.sub_agent_calls > 0 {
            out.push_str(&format!(
                "  {} by sub-agents inside a turn (kept in the turn, in order)\n",
                match self.sub_agent_calls {
                    1 => "1 call was made".to_string(),
                    n => format!("{n} calls were made"),
                }
            ));
        }
        out
    }
}

/// The most sessions in flight at once: a sweep over starts and ends.
fn peak(sessions: &[Session]) -> usize {
    let mut edges: Vec<(f64, i32)> = Vec::new();
    for s in sessions {
        edges.push((s.start_ms, 1));
        edges.push((s.start_ms + s.duration_ms().max(0.001), -1));
    }
    // An end before a start at the same instant: back-to-back sessions are not overlapping.
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    most as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank_and_the_tail() {
        let d = Distribution::of((1..=100).map(f64::from));
        assert_eq!((d.p50, d.p90, d.p99, d.max), (50.0, 90.0, 99.0, 100.0));
        assert_eq!(d.tail, [100.0, 99.0, 98.0, 97.0, 96.0]);
        assert_eq!(Distribution::of([]).n, 0);
        assert!(
            d.line().starts_with("p50 50 · p90 90 · p99 99 · max 100"),
            "{}",
            d.line()
        );
    }
}
