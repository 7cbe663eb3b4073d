//! Answering a replayed session as it was recorded: call `j` of turn `t` of the recorded
//! session the driven one plays (`workload::Replay`) gets that call's output length and
//! asks for the tools it asked for, in order — by their recorded names when the request
//! offers them (else an offered tool, chosen by the name's hash), with arguments made
//! valid for the request's schema, and the recorded output length made up with text
//! before the calls. Past the recorded calls of a turn the model answers in text, so the
//! turn ends. What was played, per session, is kept for the step to compare with the
//! recording (`Played`). The turn is the marker's (`turn=K`), the call the number of
//! assistant messages since the last user message.

use crate::hash::fnv1a;
use crate::provider::invent::{arguments_for, words};
use crate::provider::reply::call_id;
use crate::provider::scenario::ModelSpec;
use crate::session::{markers, Session};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use wire::{Part, Reply, Request, Role, StopReason, ToolCall, ToolChoice};

/// One call as it was answered in a replay.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Played {
    pub turn: u32,
    pub tools: Vec<String>,
    pub output_tokens: u32,
    /// The call was in the recording (else past it: answered in text).
    pub recorded: bool,
    /// The recorded tools this call asked for that the request did not offer (another
    /// offered tool was called in their place).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unoffered: Vec<String>,
    /// The recording asked for tools here but the request offered none (or forbade them):
    /// answered in text.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_tools: bool,
}

/// What one session was answered, and which recorded session it played.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SessionPlay {
    pub recorded: usize,
    pub calls: Vec<Played>,
}

/// A workload being replayed: the plan, and what was played so far.
#[derive(Debug)]
pub struct Replaying {
    pub plan: Arc<workload::Replay>,
    played: Mutex<BTreeMap<String, SessionPlay>>,
}

/// A reply's pieces: the request it answers and where it stands in the recording.
pub struct Ask<'a> {
    pub req: &'a Request,
    pub spec: &'a ModelSpec,
    pub session: &'a Session,
    pub id: &'a str,
    pub created: u64,
}

impl Replaying {
    pub fn new(plan: Arc<workload::Replay>) -> Replaying {
        Replaying {
            plan,
            played: Mutex::new(BTreeMap::new()),
        }
    }

    /// Every replayed session's calls, by session name.
    pub fn played(&self) -> BTreeMap<String, SessionPlay> {
        self.played
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The recorded answer, or `None` when the session is not one the plan drives.
    pub fn answer(&self, a: Ask, rng: &mut ChaCha8Rng) -> Option<Reply> {
        let i = workload::Replay::index_of(a.session.id.as_deref()?)?;
        let k = self.plan.pick(i)?;
        let rec = &self.plan.workload.sessions[k];
        let (turn, j) = position(a.req);
        let call = rec
            .turns
            .get(turn.max(1) as usize - 1)
            .and_then(|t| t.calls.get(j));
        let (parts, stop) = match call {
            Some(c) if !c.tools.is_empty() && offers_tools(a.req) => tool_calls(&a, c, rng),
            Some(c) => text(&a, c.output_tokens, rng),
            None => text(&a, None, rng),
        };
        let output_tokens = parts.iter().map(Part::tokens).sum::<u32>();
        let tools = parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall(c) => Some(c.name.clone()),
                _ => None,
            })
            .collect();
        let name = a.session.key().to_string();
        let mut played = self.played.lock().unwrap_or_else(|p| p.into_inner());
        let entry = played.entry(name).or_insert_with(|| SessionPlay {
            recorded: k,
            calls: Vec::new(),
        });
        let asked: &[workload::ToolUse] = call.map_or(&[], |c| c.tools.as_slice());
        entry.calls.push(Played {
            turn,
            tools,
            output_tokens,
            recorded: call.is_some(),
            unoffered: asked
                .iter()
                .filter(|t| !a.req.tools.iter().any(|o| o.name == t.name))
                .map(|t| t.name.clone())
                .collect(),
            no_tools: !asked.is_empty() && !offers_tools(a.req),
        });
        Some(Reply {
            id: a.id.to_string(),
            model: a.req.model.clone(),
            created: a.created,
            parts,
            stop,
            prompt_tokens: a.req.prompt_tokens,
            output_tokens,
            reasoning_tokens: 0,
            cache: Default::default(),
        })
    }
}

/// The turn (the last marked user message's, else the count of user messages) and the
/// call within it (assistant messages since the last user message).
fn position(req: &Request) -> (u32, usize) {
    let last_user = req.messages.iter().rposition(|m| m.role == Role::User);
    let marked = req
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .rev()
        .find_map(|m| markers(&m.text).into_iter().find_map(|mk| mk.turn));
    let users = req.messages.iter().filter(|m| m.role == Role::User).count() as u32;
    let call = last_user.map_or(0, |u| {
        req.messages[u + 1..]
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count()
    });
    (marked.unwrap_or(users).max(1), call)
}

fn offers_tools(req: &Request) -> bool {
    !req.tools.is_empty() && req.tool_choice != ToolChoice::None
}

/// The recorded tools, each by its name when offered, with valid arguments; the recorded
/// output length made up with text before them.
fn tool_calls(a: &Ask, c: &workload::Call, rng: &mut ChaCha8Rng) -> (Vec<Part>, StopReason) {
    let base = u64::from_str_radix(a.id, 16).unwrap_or_else(|_| fnv1a(0, a.id.as_bytes()));
    let mut parts: Vec<Part> = c
        .tools
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let tool = a
                .req
                .tools
                .iter()
                .find(|o| o.name == t.name)
                .unwrap_or_else(|| {
                    let pick = fnv1a(0, t.name.as_bytes()) as usize % a.req.tools.len();
                    &a.req.tools[pick]
                });
            let suffix = match k {
                0 => a.id.to_string(),
                _ => format!("{:016x}", fnv1a(base, &(k as u64).to_le_bytes())),
            };
            Part::ToolCall(ToolCall {
                id: call_id(a.req.api, &suffix),
                name: tool.name.clone(),
                arguments: arguments_for(&tool.schema, rng).to_string(),
            })
        })
        .collect();
    let used: u32 = parts.iter().map(Part::tokens).sum();
    if let Some(pad) = c
        .output_tokens
        .map(|n| n.saturating_sub(used))
        .filter(|n| *n > 0)
    {
        parts.insert(0, Part::Text(words(pad, rng)));
    }
    (parts, StopReason::ToolUse)
}

/// A text answer of the recorded length (the model's drawn length where none was
/// recorded), cut at the request's `max_tokens`.
fn text(a: &Ask, recorded: Option<u32>, rng: &mut ChaCha8Rng) -> (Vec<Part>, StopReason) {
    let (lo, hi) = a.spec.output_tokens;
    let mut n = recorded.unwrap_or_else(|| rng.gen_range(lo..=hi)).max(1);
    let mut stop = StopReason::EndTurn;
    if let Some(max) = a.req.max_output_tokens.filter(|m| n > *m) {
        n = max;
        stop = StopReason::MaxTokens;
    }
    (vec![Part::Text(words(n, rng))], stop)
}
