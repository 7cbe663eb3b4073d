//! The conversation against what the mock said: the assistant messages a session sends
//! back compared with what the ledger says the mock told it (and others). Tool-call
//! arguments as sent, answers as said and in the order they were said (history); no call
//! or answer given to another session (isolation); no call the mock never made.

use crate::integrity::found::Found;
use crate::ledger::{text_hash, Ledger};
use crate::provider::scenario::Integrity;
use crate::session::Session;
use wire::{Api, Request, Role, ToolCall};

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

/// The assistant messages from message `from` on, as the session's ledger knows them.
#[derive(Default)]
struct Compared<'r> {
    /// Tool calls and answers the mock never said to this session.
    unknown_calls: Vec<&'r ToolCall>,
    unknown_texts: Vec<&'r str>,
    /// What the mock said, by when it said it, in the order sent back.
    seqs: Vec<(u32, &'r str)>,
    /// Tool calls sent back with other arguments.
    altered: Vec<&'r ToolCall>,
}

/// Compares the assistant messages with what the ledger says the mock told this
/// session (and others).
pub fn check(
    req: &Request,
    session: &Session,
    from: usize,
    integ: Integrity,
    ledger: &Ledger,
    f: &mut Found,
) {
    let c = compare(req, session.key(), from, ledger);
    if integ.history {
        order(&c, f);
    }
    leaks(&c, session.key(), integ, ledger, f);
}

fn compare<'r>(req: &'r Request, sid: &str, from: usize, ledger: &Ledger) -> Compared<'r> {
    let mut c = Compared::default();
    ledger.with(sid, |e| {
        for m in req
            .messages
            .iter()
            .skip(from)
            .filter(|m| m.role == Role::Assistant)
        {
            for call in &m.tool_calls {
                match e.issued_calls.get(&call.id) {
                    Some(said) => {
                        if !said
                            .args
                            .as_deref()
                            .is_some_and(|a| same_json(a, &call.arguments))
                        {
                            c.altered.push(call);
                        }
                        c.seqs.push((said.seq, &call.id));
                    }
                    None => c.unknown_calls.push(call),
                }
            }
            if m.tool_calls.is_empty() && !m.text.trim().is_empty() {
                match e.issued_texts.get(&text_hash(&m.text)) {
                    Some(said) => c.seqs.push((said.seq, &m.text)),
                    None => c.unknown_texts.push(&m.text),
                }
            }
        }
    });
    c
}

/// Arguments as the mock sent them; what it said, once each and in its order.
fn order(c: &Compared, f: &mut Found) {
    for call in &c.altered {
        f.add(
            0,
            "history",
            format!(
                "arguments of tool call {} differ from what the mock sent",
                call.id
            ),
            &call.arguments,
        );
    }
    for w in c.seqs.windows(2) {
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

/// What the mock never said to this session: said to another (isolation), or never
/// said at all (history).
fn leaks(c: &Compared, sid: &str, integ: Integrity, ledger: &Ledger, f: &mut Found) {
    for call in &c.unknown_calls {
        match ledger.owner_of_call(&call.id) {
            Some(other) if other != sid && integ.isolation => f.add(
                0,
                "isolation",
                format!("tool call {} was made in session {other}", call.id),
                &call.arguments,
            ),
            None if integ.history && looks_issued(&call.id) => f.add(
                0,
                "history",
                format!("tool call {} was never made by the mock", call.id),
                &call.arguments,
            ),
            _ => {}
        }
    }
    for t in &c.unknown_texts {
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
