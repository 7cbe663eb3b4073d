//! Spans into sessions, by the OpenTelemetry GenAI conventions: a session is a
//! `gen_ai.conversation.id` (inherited from the nearest ancestor that has one; without
//! any, the trace), a turn is a top-level `invoke_agent` span (else one trace of the
//! conversation, else a new user message in the calls' `gen_ai.input.messages`), and
//! within a turn the model calls (`chat`, `text_completion`, `generate_content`) and the
//! tool executions (`execute_tool`) in time order, each tool given to the call before it.
//! A call under a nested `invoke_agent` is a sub-agent's, kept in its turn.

use crate::read::otlp::Span;
use crate::session::{Call, Session, ToolUse, Turn};
use crate::tokens;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

const MODEL_OPS: &[&str] = &["chat", "text_completion", "generate_content"];
const OPS: &[&str] = &[
    "chat",
    "text_completion",
    "generate_content",
    "invoke_agent",
    "execute_tool",
    "embeddings",
    "create_agent",
    "invoke_workflow",
    "retrieval",
];

/// The GenAI operation of a span: `gen_ai.operation.name`, else the first word of its
/// name when that is an operation, else `chat` for a span with a model and token usage
/// (instrumentations older than the attribute).
fn op(s: &Span) -> Option<&str> {
    if let Some(o) = s.str("gen_ai.operation.name") {
        return Some(o);
    }
    let first = s.name.split_whitespace().next().unwrap_or("");
    if let Some(o) = OPS.iter().find(|o| **o == first) {
        return Some(o);
    }
    let legacy = s.attrs.contains_key("gen_ai.request.model")
        && (s.attrs.contains_key("gen_ai.usage.input_tokens")
            || s.attrs.contains_key("gen_ai.usage.prompt_tokens"));
    legacy.then_some("chat")
}

/// The spans of one file, with their parents found.
struct Forest {
    spans: Vec<Span>,
    by_id: HashMap<(String, String), usize>,
}

impl Forest {
    fn new(spans: Vec<Span>) -> Forest {
        let by_id = spans
            .iter()
            .enumerate()
            .map(|(i, s)| ((s.trace.clone(), s.id.clone()), i))
            .collect();
        Forest { spans, by_id }
    }

    /// The span's ancestors, nearest first (a broken chain or a cycle just ends).
    fn ancestors(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let mut cur = i;
        let mut left = self.spans.len();
        std::iter::from_fn(move || {
            let s = &self.spans[cur];
            let p = s.parent.as_ref()?;
            left = left.checked_sub(1)?;
            cur = *self.by_id.get(&(s.trace.clone(), p.clone()))?;
            Some(cur)
        })
    }

    fn conversation(&self, i: usize) -> Option<&str> {
        std::iter::once(i)
            .chain(self.ancestors(i))
            .find_map(|k| self.spans[k].str("gen_ai.conversation.id"))
    }

    fn is_agent(&self, i: usize) -> bool {
        matches!(op(&self.spans[i]), Some("invoke_agent" | "invoke_workflow"))
    }

    /// The outermost agent span at or above `i`, and the nearest one above it (when it
    /// is another: a sub-agent).
    fn agents(&self, i: usize) -> (Option<usize>, Option<usize>) {
        let mut chain: Vec<usize> = std::iter::once(i)
            .chain(self.ancestors(i))
            .filter(|k| self.is_agent(*k))
            .collect();
        let top = chain.pop();
        (top, chain.first().copied().filter(|_| top.is_some()))
    }
}

/// Every session in the spans: GenAI spans only (HTTP and framework spans are skipped).
pub fn sessions(spans: Vec<Span>) -> Vec<Session> {
    let f = Forest::new(spans);
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for i in 0..f.spans.len() {
        if op(&f.spans[i]).is_none() {
            continue;
        }
        let key = match f.conversation(i) {
            Some(c) => c.to_string(),
            None => format!("trace:{}", f.spans[i].trace),
        };
        groups.entry(key).or_default().push(i);
    }
    let mut out: Vec<Session> = groups
        .into_iter()
        .filter_map(|(id, members)| session(&f, id, members))
        .collect();
    estimate_user_tokens(&mut out);
    out
}

/// One turn's spans before they become a [`Turn`].
struct Draft {
    start: u64,
    end: u64,
    /// The top-level agent span, when turns are agents.
    agent: Option<usize>,
    members: Vec<usize>,
}

fn session(f: &Forest, id: String, mut members: Vec<usize>) -> Option<Session> {
    members.sort_by_key(|i| (f.spans[*i].start_ns, f.spans[*i].end_ns));
    let mut drafts = turn_drafts(f, &members);
    drafts.retain(|d| !d.members.is_empty() || d.agent.is_some());
    let first = drafts.first()?.start;
    let mut turns = Vec::new();
    let mut last_end = None;
    for d in &drafts {
        let mut t = turn(f, d);
        t.think_ms = last_end.map_or(0.0, |e: u64| ms(d.start.saturating_sub(e)));
        last_end = Some(d.end);
        turns.push(t);
    }
    Some(Session {
        id,
        start_ms: first as f64 / 1e6,
        turns,
    })
}

fn ms(ns: u64) -> f64 {
    ((ns as f64 / 1e6) * 1000.0).round() / 1000.0
}

/// The turns of a session's spans: its top-level agent spans; else one per trace when
/// the conversation spans several; else a new turn at each new user message.
fn turn_drafts(f: &Forest, members: &[usize]) -> Vec<Draft> {
    let tops: Vec<usize> = members
        .iter()
        .copied()
        .filter(|i| f.is_agent(*i) && f.agents(*i).0 == Some(*i))
        .collect();
    if !tops.is_empty() {
        let mut drafts: Vec<Draft> = tops
            .iter()
            .map(|&a| Draft {
                start: f.spans[a].start_ns,
                end: f.spans[a].end_ns,
                agent: Some(a),
                members: Vec::new(),
            })
            .collect();
        for &i in members.iter().filter(|i| !tops.contains(i)) {
            let k = match f.agents(i).0 {
                Some(top) => tops.iter().position(|t| *t == top),
                None => by_time(&drafts, f.spans[i].start_ns),
            };
            if let Some(k) = k {
                drafts[k].members.push(i);
            }
        }
        return drafts;
    }
    let traces: Vec<&str> = members.iter().map(|i| f.spans[*i].trace.as_str()).collect();
    let many_traces = traces.iter().any(|t| *t != traces[0]);
    let mut drafts: Vec<Draft> = Vec::new();
    let mut users_seen = 0;
    for (n, &i) in members.iter().enumerate() {
        let s = &f.spans[i];
        let users = user_messages(s).map_or(0, |m| m.len());
        let new_turn = match many_traces {
            true => n == 0 || traces[n] != traces[n - 1],
            false => n == 0 || users > users_seen,
        };
        users_seen = users_seen.max(users);
        if new_turn {
            drafts.push(Draft {
                start: s.start_ns,
                end: s.end_ns,
                agent: None,
                members: Vec::new(),
            });
        }
        let d = drafts
            .last_mut()
            .expect("a turn was opened at the first span");
        d.end = d.end.max(s.end_ns);
        d.members.push(i);
    }
    drafts
}

/// The turn running at `t`, else the last one begun before it.
fn by_time(drafts: &[Draft], t: u64) -> Option<usize> {
    drafts.iter().rposition(|d| d.start <= t).or(Some(0))
}

/// A turn's calls, each with the tools run after it; tools before any call are unasked.
fn turn(f: &Forest, d: &Draft) -> Turn {
    let mut calls: Vec<Call> = Vec::new();
    let mut unasked = Vec::new();
    let mut user = None;
    for &i in &d.members {
        let s = &f.spans[i];
        match op(s) {
            Some(o) if MODEL_OPS.contains(&o) => {
                if user.is_none() {
                    user = user_messages(s).and_then(|m| m.last().cloned());
                }
                let sub = f.agents(i).1.map(|a| agent_name(&f.spans[a]));
                calls.push(call(s, sub));
            }
            Some("execute_tool") => {
                let t = ToolUse {
                    name: tool_name(s),
                    ms: ms(s.end_ns - s.start_ns),
                };
                match calls.last_mut() {
                    Some(c) => c.tools.push(t),
                    None => unasked.push(t),
                }
            }
            _ => {}
        }
    }
    if let Some(a) = d.agent {
        user = user.or_else(|| user_messages(&f.spans[a]).and_then(|m| m.last().cloned()));
    }
    Turn {
        think_ms: 0.0,
        duration_ms: ms(d.end - d.start),
        user_tokens: user.as_deref().map_or(0, tokens::count),
        user_text: user,
        calls,
        unasked_tools: unasked,
    }
}

fn call(s: &Span, agent: Option<String>) -> Call {
    let model = s
        .str("gen_ai.request.model")
        .or(s.str("gen_ai.response.model"))
        .map(str::to_string)
        .or_else(|| s.name.split_once(' ').map(|(_, m)| m.to_string()))
        .unwrap_or_else(|| "unknown".into());
    let tok = |a: &str, b: &str| s.int(a).or(s.int(b)).map(|n| n.min(u32::MAX as u64) as u32);
    Call {
        model,
        input_tokens: tok("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
        output_tokens: tok(
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
        ),
        tools: Vec::new(),
        agent,
    }
}

fn tool_name(s: &Span) -> String {
    s.str("gen_ai.tool.name")
        .map(str::to_string)
        .or_else(|| s.name.strip_prefix("execute_tool ").map(str::to_string))
        .unwrap_or_else(|| "tool".into())
}

fn agent_name(s: &Span) -> String {
    s.str("gen_ai.agent.name")
        .map(str::to_string)
        .or_else(|| s.name.strip_prefix("invoke_agent ").map(str::to_string))
        .unwrap_or_else(|| "sub-agent".into())
}

/// The user messages' texts in `gen_ai.input.messages` (recorded only when the
/// instrumentation captures content): `[{role, parts: [{type: "text", content}]}]`, or
/// the older `{role, content}`; the attribute may be a JSON string.
fn user_messages(s: &Span) -> Option<Vec<String>> {
    let v = s.attrs.get("gen_ai.input.messages")?;
    let parsed;
    let list = match v {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text).ok()?;
            parsed.as_array()?
        }
        Value::Array(a) => a,
        _ => return None,
    };
    let text_of = |m: &Value| -> String {
        if let Some(c) = m.get("content").and_then(Value::as_str) {
            return c.to_string();
        }
        let parts = m.get("parts").and_then(Value::as_array);
        parts
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("content").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Some(
        list.iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .map(text_of)
            .collect(),
    )
}

/// A user message's size where the recording has no text: the growth of the first
/// call's input over the last turn's context (its last call's input and output); for
/// the first turn, the first call's input less what every session's first call shares
/// (the system prompt and tool definitions, which the system adds itself).
fn estimate_user_tokens(sessions: &mut [Session]) {
    let first_input = |s: &Session| s.turns.first()?.calls.first()?.input_tokens;
    let shared = sessions.iter().filter_map(first_input).min().unwrap_or(0);
    for s in sessions.iter_mut() {
        let mut context = None;
        for t in &mut s.turns {
            let input = t.calls.first().and_then(|c| c.input_tokens);
            if t.user_text.is_none() {
                let base = context.unwrap_or(shared.saturating_sub(16));
                t.user_tokens = input.map_or(16, |i| i.saturating_sub(base).max(1));
            }
            context = t
                .calls
                .last()
                .and_then(|c| Some(c.input_tokens? + c.output_tokens.unwrap_or(0)));
        }
    }
}
