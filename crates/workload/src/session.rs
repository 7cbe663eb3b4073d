//! One recorded session: its start, its turns (the think time before each, the user's
//! message size, the model calls with their tokens and model, the tools each call asked
//! for with their time), and what a replay compares with it.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// `gen_ai.conversation.id`, `trace:<id>` without one, or the JSONL `session`.
    pub id: String,
    /// When it started, from the first session's start.
    pub start_ms: f64,
    pub turns: Vec<Turn>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// The user's pause before this turn: from the last turn's end (0 for the first).
    pub think_ms: f64,
    /// How long the turn took when it was recorded.
    pub duration_ms: f64,
    /// The user's message, in tokens (measured from its text, else estimated from the
    /// growth of the first call's input).
    pub user_tokens: u32,
    /// The user's text, when the recording has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_text: Option<String>,
    /// The model calls, in order.
    pub calls: Vec<Call>,
    /// Tools the system ran before any model call of the turn asked for one: its own
    /// doing, which a replay cannot ask it to do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unasked_tools: Vec<ToolUse>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    pub model: String,
    /// `None` where the recording has no count.
    pub input_tokens: Option<u32>,
    pub output_tokens: Option<u32>,
    /// The tools run after this call (the ones it asked for), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolUse>,
    /// The agent that made the call when it is a sub-agent of the turn's agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolUse {
    pub name: String,
    pub ms: f64,
}

impl Session {
    pub fn calls(&self) -> usize {
        self.turns.iter().map(|t| t.calls.len()).sum()
    }

    /// The tools the session's calls asked for, in order.
    pub fn tool_order(&self) -> Vec<&str> {
        self.turns
            .iter()
            .flat_map(|t| &t.calls)
            .flat_map(|c| &c.tools)
            .map(|t| t.name.as_str())
            .collect()
    }

    /// Output tokens of every call that has a count.
    pub fn output_tokens(&self) -> u64 {
        self.turns
            .iter()
            .flat_map(|t| &t.calls)
            .filter_map(|c| c.output_tokens)
            .map(u64::from)
            .sum()
    }

    /// How long it ran when recorded: its turns and the pauses between them.
    pub fn duration_ms(&self) -> f64 {
        self.turns.iter().map(|t| t.think_ms + t.duration_ms).sum()
    }
}
