//! Deciding what the model answers: text of a drawn length, or a tool call.
//!
//! The default policy (until a scenario scripts the choreography): when the client
//! offers tools and allows calling them, and no tool result has come back since the
//! last user message, call a tool — the named one, else the first — with arguments
//! made up from its JSON Schema; otherwise answer in text. Everything is drawn from
//! the per-request RNG, so the same seed and request give the same answer.
//!
//! A model that reasons (see [`crate::provider::model::Reasoning`]) first thinks, in the
//! shape its API shows reasoning (a signed Anthropic `thinking` block, an OpenAI
//! reasoning item …: the dialect's); its tokens count in the output and in the
//! `max_tokens` budget.

use crate::provider::invent::{arguments_for, words};
use crate::provider::model::ReasoningMode;
use crate::provider::scenario::ModelSpec;
use crate::provider::script::{render, render_value, Scope, Step, Vars};
use crate::provider::thoughts;
use crate::session::Session;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use wire::{Api, Part, Reply, Request, Role, StopReason, ThoughtMint, Tool, ToolCall, ToolChoice};

/// Builds the reply for `req` under `spec`: the model's reasoning when it reasons,
/// then the script's step when the model has a script, else the default policy.
/// `key` seals the reasoning (see `thoughts.rs`).
pub fn decide(
    req: &Request,
    spec: &ModelSpec,
    session: &Session,
    id: String,
    created: u64,
    key: u64,
    rng: &mut ChaCha8Rng,
) -> Reply {
    let thought = think(req, spec, session.key(), &id, key, rng);
    let thought_tokens = thought.as_ref().map_or(0, Part::tokens);
    let mut parts;
    let mut stop;
    let scripted = if spec.script.is_empty() {
        None
    } else {
        scripted(req, spec, session, &id)
    };
    if let Some((part, s)) = scripted {
        parts = vec![part];
        stop = s;
    } else if let Some(tool) = tool_to_call(req).filter(|_| spec.script.is_empty()) {
        let arguments = arguments_for(&tool.schema, rng).to_string();
        parts = vec![Part::ToolCall(ToolCall {
            id: call_id(req.api, &id),
            name: tool.name.clone(),
            arguments,
        })];
        stop = StopReason::ToolUse;
    } else {
        let (lo, hi) = spec.output_tokens;
        let mut n = rng.gen_range(lo..=hi);
        stop = StopReason::EndTurn;
        if let Some(max) = req
            .max_output_tokens
            .map(|m| m.saturating_sub(thought_tokens))
        {
            if n > max {
                n = max;
                stop = StopReason::MaxTokens;
            }
        }
        parts = vec![Part::Text(words(n, rng))];
    }
    if let Some(t) = thought {
        parts.insert(0, t);
    }
    let output_tokens = parts.iter().map(Part::tokens).sum::<u32>();
    if output_tokens == 0 {
        stop = StopReason::EndTurn;
    }
    Reply {
        id,
        model: req.model.clone(),
        created,
        parts,
        stop,
        prompt_tokens: req.prompt_tokens,
        output_tokens,
        reasoning_tokens: thought_tokens,
        cache: Default::default(),
    }
}

/// How many tokens the model reasons for this request, if it does: drawn from the
/// model's range, scaled by the OpenAI effort, capped by the Anthropic budget.
fn reasoning_tokens(req: &Request, spec: &ModelSpec, rng: &mut ChaCha8Rng) -> Option<u32> {
    let r = spec.reasoning;
    let asked = req.reasoning.as_ref();
    let on = match r.mode {
        ReasoningMode::Off => false,
        ReasoningMode::Always if req.api.dialect().reasons_unasked() => true,
        _ => asked.is_some(),
    };
    if !on {
        return None;
    }
    let mut n = rng.gen_range(r.tokens.0..=r.tokens.1) as f64;
    n *= match asked.and_then(|a| a.effort.as_deref()) {
        Some("none") => 0.0,
        Some("minimal") => 0.25,
        Some("low") => 0.5,
        Some("high") => 2.0,
        Some("xhigh") => 3.0,
        Some("max") => 4.0,
        _ => 1.0,
    };
    if let Some(b) = asked.and_then(|a| a.budget) {
        n = n.min(b as f64);
    }
    let n = (n.round() as u32).min(60_000);
    (n > 0).then_some(n)
}

/// The model's reasoning as the API shows it (its dialect's shape): its text drawn
/// from the reply's RNG, sealed for the session with the run's key.
fn think(
    req: &Request,
    spec: &ModelSpec,
    session: &str,
    id: &str,
    key: u64,
    rng: &mut ChaCha8Rng,
) -> Option<Part> {
    let tokens = reasoning_tokens(req, spec, rng)?;
    let mut mint = Mint {
        share: spec.reasoning.redacted_share,
        rng,
        key,
        session,
    };
    Some(req.api.dialect().thought(req, id, tokens, &mut mint))
}

/// The reply's draws and the run's seals, as a dialect asks for them.
struct Mint<'a> {
    /// The share of replies whose reasoning comes redacted.
    share: f64,
    rng: &'a mut ChaCha8Rng,
    key: u64,
    session: &'a str,
}

impl ThoughtMint for Mint<'_> {
    fn redacted(&mut self) -> bool {
        self.share > 0.0 && self.rng.gen_bool(self.share)
    }

    fn text(&mut self, tokens: u32) -> String {
        words(tokens, self.rng)
    }

    fn sign(&self, text: &str) -> String {
        thoughts::signature(self.key, self.session, text)
    }

    fn seal(&self, nonce: &str) -> String {
        thoughts::seal(self.key, self.session, nonce)
    }
}

/// The script's answer for this request, or `None` past its end (or when the step's
/// tool is not offered, or tools are switched off): then the model answers in text.
fn scripted(
    req: &Request,
    spec: &ModelSpec,
    session: &Session,
    id: &str,
) -> Option<(Part, StopReason)> {
    let turn = req.messages.iter().filter(|m| m.role == Role::User).count() as u32;
    let scope = match spec.scope {
        Scope::Turn => {
            let last_user = req
                .messages
                .iter()
                .rposition(|m| m.role == Role::User)
                .map_or(0, |i| i + 1);
            &req.messages[last_user..]
        }
        Scope::Conversation => &req.messages[..],
    };
    let results: Vec<&str> = scope
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.text.as_str())
        .collect();
    let step = results.len();
    let vars = Vars {
        session: session.key(),
        nonce: &session.nonce,
        turn,
        step,
        results: &results,
    };
    match spec.script.get(step)? {
        Step::Call { tool, args, .. } => {
            let offered =
                req.tools.iter().any(|t| &t.name == tool) && req.tool_choice != ToolChoice::None;
            offered.then(|| {
                let call = ToolCall {
                    id: call_id(req.api, id),
                    name: tool.clone(),
                    arguments: render_value(args, &vars).to_string(),
                };
                (Part::ToolCall(call), StopReason::ToolUse)
            })
        }
        Step::Say { text } => Some((Part::Text(render(text, &vars)), StopReason::EndTurn)),
    }
}

/// A tool call's id as the API names the mock's (`call_…`, `toolu_…`).
pub(crate) fn call_id(api: Api, id: &str) -> String {
    format!("{}{id}", api.dialect().tool_call_prefix())
}

fn tool_to_call(req: &Request) -> Option<&Tool> {
    if req.tools.is_empty() || req.tool_choice == ToolChoice::None {
        return None;
    }
    let answered = req
        .messages
        .iter()
        .rev()
        .take_while(|m| m.role != Role::User)
        .any(|m| m.role == Role::Tool);
    match &req.tool_choice {
        ToolChoice::Named(name) => req.tools.iter().find(|t| &t.name == name),
        ToolChoice::Required => req.tools.first(),
        _ if answered => None,
        _ => req.tools.first(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use serde_json::{json, Value};

    fn req(api: Api, body: Value) -> Request {
        api.parse(body.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn calls_the_tool_then_answers_after_its_result() {
        let tools = json!([{"type": "function", "function": {"name": "lookup",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}, "required": ["q"]}}}]);
        let spec = ModelSpec::default();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let first = req(
            Api::ChatCompletions,
            json!({"model": "m", "tools": tools,
            "messages": [{"role": "user", "content": "hi"}]}),
        );
        let anon = Session {
            id: None,
            nonce: String::new(),
        };
        let r = decide(&first, &spec, &anon, "a".into(), 0, 1, &mut rng);
        assert_eq!(r.stop, StopReason::ToolUse);
        let Part::ToolCall(call) = &r.parts[0] else {
            panic!("expected a tool call")
        };
        let args: Value = serde_json::from_str(&call.arguments).unwrap();
        assert!(args["q"].is_string() && args["n"].is_i64(), "{args}");
        let second = req(
            Api::ChatCompletions,
            json!({"model": "m", "tools": tools, "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": call.id, "type": "function",
                "function": {"name": "lookup", "arguments": call.arguments}}]},
            {"role": "tool", "tool_call_id": call.id, "content": "42"}]}),
        );
        let r = decide(&second, &spec, &anon, "b".into(), 0, 1, &mut rng);
        assert_eq!(r.stop, StopReason::EndTurn);
        assert_eq!(r.output_tokens, 50);
    }

    #[test]
    fn max_tokens_truncates_with_its_stop_reason() {
        let r = req(
            Api::Messages,
            json!({"model": "m", "max_tokens": 7,
            "messages": [{"role": "user", "content": "hi"}]}),
        );
        let anon = Session {
            id: None,
            nonce: String::new(),
        };
        let reply = decide(
            &r,
            &ModelSpec::default(),
            &anon,
            "x".into(),
            0,
            1,
            &mut ChaCha8Rng::seed_from_u64(2),
        );
        assert_eq!(
            (reply.output_tokens, reply.stop),
            (7, StopReason::MaxTokens)
        );
    }

    fn answer(api: Api, body: Value, spec: &ModelSpec) -> Reply {
        let s = Session {
            id: Some("s1".into()),
            nonce: String::new(),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        decide(
            &req(api, body),
            spec,
            &s,
            "0123456789abcdef".into(),
            0,
            9,
            &mut rng,
        )
    }

    #[test]
    fn a_model_reasons_when_asked_within_its_budget_and_says_so_in_its_usage() {
        let spec = ModelSpec::default(); // reasoning: auto, 200 tokens
        let hi = json!([{"role": "user", "content": "hi"}]);
        let plain = answer(
            Api::Messages,
            json!({"model": "m", "max_tokens": 100, "messages": hi}),
            &spec,
        );
        assert_eq!((plain.parts.len(), plain.reasoning_tokens), (1, 0));
        let r = answer(
            Api::Messages,
            json!({"model": "m", "max_tokens": 1100, "messages": hi,
                   "thinking": {"type": "enabled", "budget_tokens": 1024}}),
            &spec,
        );
        let Part::Thinking { text, signature } = &r.parts[0] else {
            panic!("expected thinking first: {:?}", r.parts)
        };
        assert_eq!(r.reasoning_tokens, 200);
        assert_eq!(
            *signature,
            crate::provider::thoughts::signature(9, "s1", text)
        );
        assert_eq!(r.output_tokens, 250);
        // max_tokens counts the thinking: 1100 − 200 leaves room for the 50-token answer;
        // 230 would not.
        let tight = answer(
            Api::Messages,
            json!({"model": "m", "max_tokens": 1100, "messages": hi,
                   "thinking": {"type": "enabled", "budget_tokens": 1024}}),
            &ModelSpec {
                output_tokens: (1000, 1000),
                ..ModelSpec::default()
            },
        );
        assert_eq!(
            (tight.output_tokens, tight.stop),
            (1100, StopReason::MaxTokens)
        );
        // OpenAI: effort scales the reasoning; "always" reasons unasked; "off" never.
        let high = answer(
            Api::ChatCompletions,
            json!({"model": "m", "reasoning_effort": "high", "messages": hi}),
            &spec,
        );
        assert_eq!(high.reasoning_tokens, 400);
        let mut always = ModelSpec::default();
        always.reasoning.mode = ReasoningMode::Always;
        let r = answer(
            Api::Responses,
            json!({"model": "m", "input": "hi",
            "include": ["reasoning.encrypted_content"]}),
            &always,
        );
        let Part::Hidden {
            id,
            seal: Some(seal),
            tokens: 200,
        } = &r.parts[0]
        else {
            panic!("expected a reasoning item: {:?}", r.parts)
        };
        assert_eq!(*seal, crate::provider::thoughts::seal(9, "s1", id));
        always.reasoning.mode = ReasoningMode::Off;
        let r = answer(
            Api::ChatCompletions,
            json!({"model": "m", "reasoning_effort": "high", "messages": hi}),
            &always,
        );
        assert_eq!(r.reasoning_tokens, 0);
    }
}
