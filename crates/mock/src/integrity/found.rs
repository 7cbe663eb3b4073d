//! The violations found in one conversation, as the oracle collects them: each with its
//! session, turn, kind, what is wrong and an excerpt of where.

use crate::ledger::Violation;

/// At most this many characters of a message go into a violation's excerpt.
const EXCERPT_CHARS: usize = 120;

fn excerpt(s: &str) -> String {
    let t: String = s.chars().take(EXCERPT_CHARS).collect();
    if t.len() < s.len() {
        format!("{t}…")
    } else {
        t
    }
}

/// What the checks of one conversation found so far.
pub struct Found<'a> {
    pub session: &'a str,
    pub out: Vec<Violation>,
}

impl Found<'_> {
    /// Every call still waiting for its result when the conversation moved on.
    pub fn unanswered(&mut self, turn: u32, open: &mut Vec<(&str, &str)>) {
        for (id, args) in open.drain(..) {
            self.add(
                turn,
                "history",
                format!("tool result for call {id} is missing"),
                args,
            );
        }
    }

    pub fn add(&mut self, turn: u32, kind: &'static str, detail: String, text: &str) {
        let text = if text.trim().is_empty() {
            "(empty message)"
        } else {
            text
        };
        self.out.push(Violation {
            session: self.session.to_string(),
            turn,
            kind: kind.into(),
            detail,
            excerpt: excerpt(text),
        });
    }
}
