//! A request as the provider's cache sees it: its prompt in canonical order — tools,
//! system prompt, messages, the order Anthropic documents and the one OpenAI's chat
//! template renders — cut into parts, each with its tokens and a hash of its own bytes,
//! and the hash of the whole prefix at every point a cache may end one (a part's end, a
//! breakpoint, a step of N tokens).
//!
//! Tokens are counted as `wire::Request::prompt_tokens` counts them (a message's four
//! framing tokens included), so the positions here add up to the usage a reply reports.
//! Which prefixes are in the cache is `store.rs`'s; what a prompt lost against the
//! session's previous one is the oracle's (`integrity/cache_breaks.rs`).

use crate::hash::{fnv1a, Running};
use wire::{Role, Spot, Steps};

/// What a part of the prompt is, in words a reader finds it by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Label {
    Tool { index: usize, name: String },
    System,
    Message { index: usize, role: Role },
}

impl Label {
    /// "tools (tool 2, `memory_get`)", "system message", "message 3 (user)".
    pub fn describe(&self) -> String {
        match self {
            Label::Tool { index, name } => format!("tools (tool {}, `{name}`)", index + 1),
            Label::System => "system message".into(),
            Label::Message { index, role } => {
                let role = match role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    Role::Tool => "tool result",
                };
                format!("message {} ({role})", index + 1)
            }
        }
    }

    /// The same slot of two prompts: the same tool, the system prompt, the same message.
    pub fn same_slot(&self, o: &Label) -> bool {
        match (self, o) {
            (Label::Tool { index: a, .. }, Label::Tool { index: b, .. }) => a == b,
            (Label::System, Label::System) => true,
            (Label::Message { index: a, .. }, Label::Message { index: b, .. }) => a == b,
            _ => false,
        }
    }
}

/// One part of the prompt.
#[derive(Clone, Debug)]
pub struct Part {
    pub label: Label,
    pub tokens: u32,
    /// Hash of the part's own bytes (role, ids and reasoning seals included).
    pub own: u64,
    /// Its text as a reader sees it: a tool's name and schema, the system prompt, a
    /// message's text and then its tool calls.
    pub text: String,
}

/// A point where a cached prefix may end: its length in tokens and the hash of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    pub tokens: u32,
    pub hash: u64,
    /// The part it falls in.
    pub part: usize,
}

/// A request's prompt, cut as the cache sees it.
#[derive(Clone, Debug)]
pub struct Prefix {
    pub parts: Vec<Part>,
    pub total: u32,
    /// The end of every part (in order).
    pub ends: Vec<Point>,
    /// The automatic cache's steps (OpenAI's 1024 + 128 k tokens), when asked for.
    pub steps: Vec<Point>,
    /// Each breakpoint asked for, in the order given (`None`: it points at nothing).
    pub marks: Vec<Option<Point>>,
}

/// Feeds tokens into the part's hash and takes the points asked for. One hash runs over
/// each byte: the prefix's hash at a point is the hash of everything before the part
/// (`base`) mixed with the part's own hash so far, so a point's hash depends only on the
/// bytes before it, wherever other points fell.
struct Feeder<'a> {
    base: u64,
    own: Running,
    tokens: u32,
    part: usize,
    next_step: Option<u32>,
    every: u32,
    steps: Vec<Point>,
    /// (spot's part, byte end within its text, index into marks).
    cuts: &'a [(usize, usize, usize)],
    marks: Vec<Option<Point>>,
}

impl Feeder<'_> {
    fn point(&self) -> Point {
        Point {
            tokens: self.tokens,
            hash: fnv1a(self.base, &self.own.get().to_le_bytes()),
            part: self.part,
        }
    }

    /// A field that is not text (a role, an id, a seal), opened by a byte no UTF-8 text
    /// holds, so "ab" + "c" and "a" + "bc" hash apart. Separators open a field rather
    /// than close it: a breakpoint at a text's end then hashes as its part's end does
    /// when nothing follows (Anthropic's lookback finds the last call's breakpoint there).
    fn field(&mut self, b: &[u8]) {
        self.own.feed(&[0xff]);
        self.own.feed(b);
    }

    fn token(&mut self, b: &[u8]) {
        self.own.feed(b);
        self.count();
    }

    /// One token more; a step's point is taken when one falls here (its bytes fed).
    fn count(&mut self) {
        self.tokens += 1;
        if self.next_step == Some(self.tokens) {
            self.steps.push(self.point());
            self.next_step = Some(self.tokens + self.every);
        }
    }

    /// Feeds `s` token by token; `cut` marks are taken once their byte end is passed.
    /// Bytes are fed in runs, up to where a point is taken, not a token at a time.
    fn text(&mut self, s: &str, cut: bool) {
        self.own.feed(&[0xfe]);
        let mut fed = 0;
        let mut pending: Vec<(usize, usize)> = if cut {
            self.cuts
                .iter()
                .filter(|c| c.0 == self.part && c.1 != usize::MAX)
                .map(|c| (c.1, c.2))
                .collect()
        } else {
            Vec::new()
        };
        for_each_token(s, |end| {
            let step = self.next_step == Some(self.tokens + 1);
            let marked = pending.iter().any(|&(at, _)| end >= at);
            if step || marked {
                self.own.feed(&s.as_bytes()[fed..end]);
                fed = end;
            }
            self.count();
            if marked {
                pending.retain(|&(at, mark)| {
                    let passed = end >= at;
                    if passed {
                        self.marks[mark] = Some(self.point());
                    }
                    !passed
                });
            }
        });
        self.own.feed(&s.as_bytes()[fed..]);
        for (_, mark) in pending {
            self.marks[mark] = Some(self.point());
        }
    }

    /// Ends the current part: its whole-part marks, its end point, its own hash.
    fn end_part(&mut self, out: &mut Prefix, label: Label, start: u32, text: String) {
        for c in self
            .cuts
            .iter()
            .filter(|c| c.0 == self.part && c.1 == usize::MAX)
        {
            self.marks[c.2] = Some(self.point());
        }
        let end = self.point();
        out.ends.push(end);
        out.parts.push(Part {
            label,
            tokens: self.tokens - start,
            own: self.own.get(),
            text,
        });
        self.base = end.hash;
        self.own = Running::new();
        self.part += 1;
    }
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::System => "System",
        Role::User => "User",
        Role::Assistant => "Assistant",
        Role::Tool => "Tool",
    }
}

fn for_each_token(s: &str, f: impl FnMut(usize)) {
    wire::for_each_token(s, f)
}

/// Where each breakpoint falls: (part index, byte end in its text, mark index).
fn cuts(req: &wire::Request, spots: &[Spot]) -> Vec<(usize, usize, usize)> {
    let tools = req.tools.len();
    let system = usize::from(!req.system.is_empty());
    let last = tools + system + req.messages.len();
    spots
        .iter()
        .enumerate()
        .filter_map(|(k, s)| {
            let (part, end) = match *s {
                Spot::Tool(i) => (i.min(tools.checked_sub(1)?), usize::MAX),
                Spot::System { end } if system == 1 => (tools, end),
                Spot::System { .. } => (tools.checked_sub(1)?, usize::MAX),
                Spot::Message {
                    index: usize::MAX, ..
                } => (last.checked_sub(1)?, usize::MAX),
                Spot::Message { index, end } => (
                    tools + system + index.min(req.messages.len().checked_sub(1)?),
                    end,
                ),
            };
            Some((part, end, k))
        })
        .collect()
}

/// The prompt of `req` cut into parts, with the points `steps` asks for and one for
/// each of `spots` (the request's breakpoints).
pub fn build(req: &wire::Request, steps: Steps, spots: &[Spot]) -> Prefix {
    let cuts = cuts(req, spots);
    let (next_step, every) = match steps {
        Steps::Tokens { first, every } => (Some(first), every.max(1)),
        _ => (None, 0),
    };
    let mut f = Feeder {
        base: 0,
        own: Running::new(),
        tokens: 0,
        part: 0,
        next_step,
        every,
        steps: Vec::new(),
        cuts: &cuts,
        marks: vec![None; spots.len()],
    };
    let mut out = Prefix {
        parts: Vec::new(),
        total: 0,
        ends: Vec::new(),
        steps: Vec::new(),
        marks: Vec::new(),
    };
    for (index, t) in req.tools.iter().enumerate() {
        let start = f.tokens;
        let schema = &t.schema_text;
        f.text(&t.name, false);
        f.text(schema, false);
        let label = Label::Tool {
            index,
            name: t.name.clone(),
        };
        f.end_part(&mut out, label, start, format!("{} {schema}", t.name));
    }
    if !req.system.is_empty() {
        let start = f.tokens;
        f.text(&req.system, true);
        f.end_part(&mut out, Label::System, start, req.system.clone());
    }
    for (index, m) in req.messages.iter().enumerate() {
        message(&mut f, &mut out, index, m);
    }
    out.total = f.tokens;
    out.steps = f.steps;
    out.marks = f.marks;
    out
}

/// One message: four framing tokens (its role and ids hashed in), its text, its
/// reasoning, its tool calls.
fn message(f: &mut Feeder, out: &mut Prefix, index: usize, m: &wire::Message) {
    let start = f.tokens;
    f.token(role_name(m.role).as_bytes());
    f.field(m.tool_call_id.as_deref().unwrap_or("").as_bytes());
    for _ in 0..3 {
        f.token(b"");
    }
    f.text(&m.text, true);
    for t in &m.thoughts {
        f.field(t.seal.as_bytes());
        f.text(&t.text, false);
    }
    let mut text = m.text.clone();
    for c in &m.tool_calls {
        f.field(c.id.as_bytes());
        f.text(&c.name, false);
        f.text(&c.arguments, false);
        text.push_str(&format!(" {}({})", c.name, c.arguments));
    }
    let label = Label::Message {
        index,
        role: m.role,
    };
    f.end_part(out, label, start, text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chat(system: &str, user: &str) -> wire::Request {
        let body = json!({"model": "m", "messages": [
            {"role": "system", "content": system}, {"role": "user", "content": user}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]});
        wire::Api::ChatCompletions
            .parse(body.to_string().as_bytes())
            .unwrap()
    }

    #[test]
    fn parts_add_up_to_the_prompt_tokens_and_hash_their_prefix() {
        let r = chat(&"word ".repeat(600), "hello there");
        let p = build(&r, Steps::Blocks, &[]);
        assert_eq!(p.total, r.prompt_tokens);
        assert_eq!(p.parts.len(), 3);
        assert_eq!(p.parts[1].label.describe(), "system message");
        assert_eq!(p.parts.iter().map(|x| x.tokens).sum::<u32>(), p.total);
        // The same prefix hashes the same; a later change leaves earlier points alone.
        let q = build(&chat(&"word ".repeat(600), "other"), Steps::Blocks, &[]);
        assert_eq!(p.ends[1], q.ends[1]);
        assert_ne!(p.ends[2].hash, q.ends[2].hash);
    }

    #[test]
    fn a_mark_at_a_texts_end_is_its_parts_end_and_fields_hash_apart() {
        let r = chat("sys", "hello there");
        // The last message's text, marked at its byte end: the point is the part's end.
        let p = build(&r, Steps::Blocks, &[Spot::Message { index: 0, end: 11 }]);
        assert_eq!(p.marks[0], Some(*p.ends.last().unwrap()));
        // The same bytes cut between a tool result's id and its text hash apart.
        let tool = |id: &str, text: &str| {
            let mut m = wire::Message::new(Role::Tool, text.into());
            m.tool_call_id = Some(id.into());
            let mut q = r.clone();
            q.messages = vec![m];
            build(&q, Steps::Blocks, &[]).parts.last().unwrap().own
        };
        assert_ne!(tool("ab", "c"), tool("a", "bc"));
        assert_eq!(tool("ab", "c"), tool("ab", "c"));
    }

    #[test]
    fn steps_and_marks_fall_where_asked() {
        let r = chat(&"word ".repeat(2000), "hi");
        let steps = Steps::Tokens {
            first: 1024,
            every: 128,
        };
        let p = build(&r, steps, &[Spot::System { end: 9 }, Spot::Tool(0)]);
        let at: Vec<u32> = p.steps.iter().map(|s| s.tokens).collect();
        assert_eq!(at[..3], [1024, 1152, 1280]);
        assert!(*at.last().unwrap() <= p.total && p.total - at.last().unwrap() < 128);
        // "word word " is 2 tokens past the tool; the tool's end is its own tokens.
        let tool = p.parts[0].tokens;
        assert_eq!(p.marks[0].unwrap().tokens, tool + 2);
        assert_eq!(p.marks[1].unwrap(), p.ends[0]);
    }
}
