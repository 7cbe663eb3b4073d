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
//! This module walks the conversation itself; the comparison with what the ledger says
//! the mock said is `said.rs`'s. Assistant messages before the first marked user message
//! are taken as few-shot examples and not checked against the ledger.

use crate::integrity::found::Found;
use crate::integrity::said;
use crate::ledger::{Ledger, Violation};
use crate::provider::scenario::{Integrity, ModelSpec};
use crate::provider::script::{render, Scope, Step, Vars};
use crate::session::{markers, nonces, Session};
use std::collections::{HashMap, HashSet};
use wire::{Message, Request, Role};

pub fn check(
    req: &Request,
    session: &Session,
    spec: &ModelSpec,
    integ: Integrity,
    ledger: &Ledger,
) -> Vec<Violation> {
    let mut w = Walk::new(session, spec, integ);
    for (i, m) in req.messages.iter().enumerate() {
        match m.role {
            Role::User | Role::System => w.user(i, m),
            Role::Assistant => w.assistant(m),
            Role::Tool => w.tool_result(m),
        }
    }
    let mut f = w.f;
    if integ.isolation && !session.nonce.is_empty() {
        foreign_nonces(req, session, &mut f);
    }
    if session.id.is_some() && (integ.history || integ.isolation) {
        let from = w.first_marked.unwrap_or(usize::MAX);
        said::check(req, session, from, integ, ledger, &mut f);
    }
    f.out
}

/// The walk through one conversation, message by message.
struct Walk<'a> {
    f: Found<'a>,
    session: &'a Session,
    spec: &'a ModelSpec,
    integ: Integrity,
    /// The request carries a session (the isolation check of markers needs one).
    known: bool,
    turn: u32,
    last_marked_turn: u32,
    first_marked: Option<usize>,
    /// Call id → (turn, step index, where its scope starts in `all_results`).
    calls: HashMap<&'a str, (u32, usize, usize)>,
    answered: HashSet<&'a str>,
    /// Calls still waiting for their result: (id, arguments).
    open: Vec<(&'a str, &'a str)>,
    /// Where the current scope begins in `all_results`.
    scope_start: usize,
    all_results: Vec<&'a str>,
}

impl<'a> Walk<'a> {
    fn new(session: &'a Session, spec: &'a ModelSpec, integ: Integrity) -> Self {
        Walk {
            f: Found {
                session: session.key(),
                out: Vec::new(),
            },
            session,
            spec,
            integ,
            known: session.id.is_some(),
            turn: 0,
            last_marked_turn: 0,
            first_marked: None,
            calls: HashMap::new(),
            answered: HashSet::new(),
            open: Vec::new(),
            scope_start: 0,
            all_results: Vec::new(),
        }
    }

    /// A user (or system) message: a new turn; its markers are this session's, in order.
    fn user(&mut self, i: usize, m: &'a Message) {
        if self.integ.history {
            self.f.unanswered(self.turn, &mut self.open);
        }
        self.turn += 1;
        if self.spec.scope == Scope::Turn {
            self.scope_start = self.all_results.len();
        }
        for mk in markers(&m.text) {
            if self.first_marked.is_none() {
                self.first_marked = Some(i);
            }
            if self.integ.isolation
                && self.known
                && self.session.id.as_deref() != Some(mk.session.as_str())
            {
                self.f.add(
                    mk.turn.unwrap_or(self.turn),
                    "isolation",
                    format!("message of session {} in this conversation", mk.session),
                    &m.text,
                );
                continue;
            }
            if let (true, Some(k)) = (self.integ.history, mk.turn) {
                self.marked_turn(k, &m.text);
            }
        }
    }

    /// User turn `k` after the turns marked so far: no repeat, no going back, no gap.
    fn marked_turn(&mut self, k: u32, text: &str) {
        let last = self.last_marked_turn;
        let expected = last + 1;
        if k == last {
            self.f
                .add(k, "history", format!("user turn {k} appears twice"), text);
        } else if k < last {
            let detail = format!("user turn {k} comes after turn {last}");
            self.f.add(k, "history", detail, text);
        } else if k > expected {
            let detail = match k - 1 == expected {
                true => format!("user turn {expected} missing before turn {k}"),
                false => format!("user turns {expected}..{} missing before turn {k}", k - 1),
            };
            self.f.add(k, "history", detail, text);
        }
        self.last_marked_turn = last.max(k);
    }

    /// An assistant message: the calls still open were left unanswered; its own open.
    fn assistant(&mut self, m: &'a Message) {
        if self.integ.history && !m.tool_calls.is_empty() {
            self.f.unanswered(self.turn, &mut self.open);
        }
        for c in &m.tool_calls {
            if self.integ.history && self.calls.contains_key(c.id.as_str()) {
                let detail = format!("tool call {} appears twice", c.id);
                self.f.add(self.turn, "history", detail, &c.arguments);
            }
            let step = self.all_results.len() - self.scope_start;
            self.calls
                .insert(&c.id, (self.turn, step, self.scope_start));
            self.open.push((&c.id, &c.arguments));
        }
    }

    /// A tool result: it answers a call of the conversation, once, and echoes what the
    /// script expects of that call.
    fn tool_result(&mut self, m: &'a Message) {
        let id = m.tool_call_id.as_deref().unwrap_or("");
        let history = self.integ.history;
        match self.calls.get(id) {
            None if history => {
                let detail =
                    format!("tool result for call {id}, but that call is not in the conversation");
                self.f.add(self.turn, "history", detail, &m.text);
            }
            Some(_) if self.answered.contains(id) && history => {
                let detail = format!("tool result for call {id} appears twice");
                self.f.add(self.turn, "history", detail, &m.text);
            }
            Some(&(t, step, start)) => {
                self.open.retain(|o| o.0 != id);
                self.answered.insert(id);
                if self.integ.echo {
                    self.echo(id, t, step, start, &m.text);
                }
            }
            None => {}
        }
        self.all_results.push(&m.text);
    }

    /// The result of scripted call `step` (of turn `t`, its scope starting at `start`)
    /// contains what the step expects.
    fn echo(&mut self, id: &str, t: u32, step: usize, start: usize, text: &str) {
        let Some(Step::Call {
            expect: Some(exp),
            tool,
            ..
        }) = self.spec.script.get(step)
        else {
            return;
        };
        let vars = Vars {
            session: self.session.key(),
            nonce: &self.session.nonce,
            turn: t,
            step,
            results: &self.all_results[start..start + step],
        };
        let want = render(exp, &vars);
        if !text.contains(&want) {
            let detail = format!("result of {tool} (call {id}) should contain {want:?}");
            self.f.add(t, "echo", detail, text);
        }
    }
}

/// A `psn…` nonce of another session anywhere in the conversation.
fn foreign_nonces(req: &Request, session: &Session, f: &mut Found) {
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
