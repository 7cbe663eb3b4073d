//! The integrity oracle: checks every conversation the system under test sends.
//!
//! * **echo** — a scripted call with `expect` must get back a tool result that contains
//!   the expected value (what was stored comes back intact when read).
//! * **isolation** — nothing from another session: no other session's marker or
//!   `psn…` nonce, no tool call or answer the mock gave to another session.
//! * **history** — user turns in order without gaps or repeats, every tool call
//!   answered once and every tool result matching a call, tool-call arguments as the
//!   mock sent them, assistant answers as sent and in the order they were said.
//!
//! Assistant messages before the first marked user message are taken as few-shot
//! examples and not checked against the ledger.

use crate::ledger::{text_hash, Ledger, Violation};
use crate::provider::scenario::{Integrity, ModelSpec};
use crate::provider::script::Scope;
use crate::provider::script::{render, Step, Vars};
use crate::session::{markers, nonces, Session};
use std::collections::{HashMap, HashSet};
use wire::{Api, Request, Role};

fn excerpt(s: &str) -> String {
    let t: String = s.chars().take(120).collect();
    if t.len() < s.len() {
        format!("{t}…")
    } else {
        t
    }
}

struct Found<'a> {
    session: &'a str,
    out: Vec<Violation>,
}

impl Found<'_> {
    /// Every call still waiting for its result when the conversation moved on.
    fn unanswered(&mut self, turn: u32, open: &mut Vec<(&str, &str)>) {
        for (id, args) in open.drain(..) {
            self.add(
                turn,
                "history",
                format!("tool result for call {id} is missing"),
                args,
            );
        }
    }

    fn add(&mut self, turn: u32, kind: &'static str, detail: String, text: &str) {
        let text = if text.trim().is_empty() {
            "(empty message)"
        } else {
            text
        };
        self.out.push(Violation {
            session: self.session.to_string(),
            turn,
            kind,
            detail,
            excerpt: excerpt(text),
        });
    }
}

/// Mock-issued ids look like an API's tool-call prefix and 16 hex digits (`call_…`,
/// `toolu_…`).
fn looks_issued(id: &str) -> bool {
    Api::ALL.iter().any(|a| {
        id.strip_prefix(a.dialect().tool_call_prefix())
            .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
    })
}

fn same_json(a: &str, b: &str) -> bool {
    match (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

pub fn check(
    req: &Request,
    session: &Session,
    spec: &ModelSpec,
    integ: Integrity,
    ledger: &Ledger,
) -> Vec<Violation> {
    let mut f = Found {
        session: session.key(),
        out: Vec::new(),
    };
    let known = session.id.is_some();
    let mut turn = 0u32;
    let mut last_marked_turn = 0u32;
    let mut first_marked: Option<usize> = None;
    // call id → (turn, step index, where its scope starts in `all_results`)
    let mut calls: HashMap<&str, (u32, usize, usize)> = HashMap::new();
    let mut answered: HashSet<&str> = HashSet::new();
    // Calls still waiting for their result: (id, arguments).
    let mut open: Vec<(&str, &str)> = Vec::new();
    let mut scope_start = 0usize; // where the current scope begins in `all_results`
    let mut all_results: Vec<&str> = Vec::new();

    for (i, m) in req.messages.iter().enumerate() {
        match m.role {
            Role::User | Role::System => {
                if integ.history {
                    f.unanswered(turn, &mut open);
                }
                turn += 1;
                if spec.scope == Scope::Turn {
                    scope_start = all_results.len();
                }
                for mk in markers(&m.text) {
                    if first_marked.is_none() {
                        first_marked = Some(i);
                    }
                    if integ.isolation
                        && known
                        && session.id.as_deref() != Some(mk.session.as_str())
                    {
                        f.add(
                            mk.turn.unwrap_or(turn),
                            "isolation",
                            format!("message of session {} in this conversation", mk.session),
                            &m.text,
                        );
                        continue;
                    }
                    if let (true, Some(k)) = (integ.history, mk.turn) {
                        let expected = last_marked_turn + 1;
                        if k == last_marked_turn {
                            f.add(
                                k,
                                "history",
                                format!("user turn {k} appears twice"),
                                &m.text,
                            );
                        } else if k < last_marked_turn {
                            f.add(
                                k,
                                "history",
                                format!("user turn {k} comes after turn {last_marked_turn}"),
                                &m.text,
                            );
                        } else if k > expected {
                            f.add(
                                k,
                                "history",
                                format!(
                                    "user turn(s) {expected}..{} missing before turn {k}",
                                    k - 1
                                ),
                                &m.text,
                            );
                        }
                        last_marked_turn = last_marked_turn.max(k);
                    }
                }
            }
            Role::Assistant => {
                if integ.history && !m.tool_calls.is_empty() {
                    f.unanswered(turn, &mut open);
                }
                for c in &m.tool_calls {
                    if integ.history && calls.contains_key(c.id.as_str()) {
                        f.add(
                            turn,
                            "history",
                            format!("tool call {} appears twice", c.id),
                            &c.arguments,
                        );
                    }
                    calls.insert(&c.id, (turn, all_results.len() - scope_start, scope_start));
                    open.push((&c.id, &c.arguments));
                }
            }
            Role::Tool => {
                let id = m.tool_call_id.as_deref().unwrap_or("");
                match calls.get(id) {
                    None if integ.history => f.add(
                        turn,
                        "history",
                        format!(
                            "tool result for call {id}, but that call is not in the conversation"
                        ),
                        &m.text,
                    ),
                    Some(_) if answered.contains(id) && integ.history => f.add(
                        turn,
                        "history",
                        format!("tool result for call {id} appears twice"),
                        &m.text,
                    ),
                    Some(&(t, step, start)) => {
                        open.retain(|o| o.0 != id);
                        answered.insert(id);
                        if integ.echo {
                            if let Some(Step::Call {
                                expect: Some(exp),
                                tool,
                                ..
                            }) = spec.script.get(step)
                            {
                                let before = &all_results[start..start + step];
                                let vars = Vars {
                                    session: session.key(),
                                    nonce: &session.nonce,
                                    turn: t,
                                    step,
                                    results: before,
                                };
                                let want = render(exp, &vars);
                                if !m.text.contains(&want) {
                                    f.add(
                                        t,
                                        "echo",
                                        format!(
                                            "result of {tool} (call {id}) should contain {want:?}"
                                        ),
                                        &m.text,
                                    );
                                }
                            }
                        }
                    }
                    None => {}
                }
                all_results.push(&m.text);
            }
        }
    }

    if integ.isolation && !session.nonce.is_empty() {
        let texts =
            std::iter::once((0u32, req.system.as_str())).chain(req.messages.iter().flat_map(|m| {
                std::iter::once((0, m.text.as_str()))
                    .chain(m.tool_calls.iter().map(|c| (0, c.arguments.as_str())))
            }));
        for (t, text) in texts {
            if let Some(n) = nonces(text).find(|n| *n != session.nonce) {
                f.add(
                    t,
                    "isolation",
                    format!("nonce {n} of another session"),
                    text,
                );
            }
        }
    }

    if known && (integ.history || integ.isolation) {
        ledger_checks(
            req,
            session,
            first_marked.unwrap_or(usize::MAX),
            integ,
            ledger,
            &mut f,
        );
    }
    f.out
}

/// Compares the assistant messages with what the ledger says the mock told this
/// session (and others).
fn ledger_checks(
    req: &Request,
    session: &Session,
    from: usize,
    integ: Integrity,
    ledger: &Ledger,
    f: &mut Found,
) {
    let sid = session.key();
    let mut unknown_calls = Vec::new();
    let mut unknown_texts = Vec::new();
    let mut seqs: Vec<(u32, &str)> = Vec::new();
    let mut altered = Vec::new();
    ledger.with(sid, |e| {
        for m in req
            .messages
            .iter()
            .skip(from)
            .filter(|m| m.role == Role::Assistant)
        {
            for c in &m.tool_calls {
                match e.issued_calls.get(&c.id) {
                    Some(said) => {
                        if !said
                            .args
                            .as_deref()
                            .is_some_and(|a| same_json(a, &c.arguments))
                        {
                            altered.push(c);
                        }
                        seqs.push((said.seq, &c.id));
                    }
                    None => unknown_calls.push(c),
                }
            }
            if m.tool_calls.is_empty() && !m.text.trim().is_empty() {
                match e.issued_texts.get(&text_hash(&m.text)) {
                    Some(said) => seqs.push((said.seq, &m.text)),
                    None => unknown_texts.push(&m.text),
                }
            }
        }
    });
    if integ.history {
        for c in altered {
            f.add(
                0,
                "history",
                format!(
                    "arguments of tool call {} differ from what the mock sent",
                    c.id
                ),
                &c.arguments,
            );
        }
        for w in seqs.windows(2) {
            if w[1].0 == w[0].0 {
                f.add(
                    0,
                    "history",
                    "an assistant message appears twice".into(),
                    w[1].1,
                );
            } else if w[1].0 < w[0].0 {
                f.add(
                    0,
                    "history",
                    "assistant messages are out of the order they were said in".into(),
                    w[1].1,
                );
            }
        }
    }
    for c in unknown_calls {
        match ledger.owner_of_call(&c.id) {
            Some(other) if other != sid && integ.isolation => f.add(
                0,
                "isolation",
                format!("tool call {} was made in session {other}", c.id),
                &c.arguments,
            ),
            None if integ.history && looks_issued(&c.id) => f.add(
                0,
                "history",
                format!("tool call {} was never made by the mock", c.id),
                &c.arguments,
            ),
            _ => {}
        }
    }
    for t in unknown_texts {
        match ledger.owner_of_text(t) {
            Some(other) if other != sid && integ.isolation => f.add(
                0,
                "isolation",
                format!("assistant answer given in session {other}"),
                t,
            ),
            None if integ.history => f.add(
                0,
                "history",
                "assistant answer is not what the mock said".into(),
                t,
            ),
            _ => {}
        }
    }
}
