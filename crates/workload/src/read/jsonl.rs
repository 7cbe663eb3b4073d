//! JSONL conversations, one a line: `{"session": ID, "messages": [...]}` with messages in
//! the OpenAI shape (`role`, `content`, `tool_calls`, `tool_call_id`), each optionally
//! with a `timestamp` (unix seconds or milliseconds, or RFC 3339), a `model` and a
//! `usage` (`prompt_tokens`/`input_tokens`, `completion_tokens`/`output_tokens`). A user
//! message opens a turn; each assistant message is a model call, its `tool_calls` the
//! tools it asked for. Counts missing from `usage` are counted from the text.

use crate::session::{Call, Session, ToolUse, Turn};
use crate::tokens;
use crate::TraceError;
use serde_json::Value;

/// One conversation line.
pub fn conversation(doc: &Value, file: &str, line: usize) -> Result<Session, TraceError> {
    let err = |field: &str, m: String| TraceError::at(file, line, field, m);
    let id = ["session", "id", "conversation_id"]
        .iter()
        .find_map(|k| match doc.get(*k) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        })
        .unwrap_or_else(|| format!("line-{line}"));
    let Some(messages) = doc.get("messages").and_then(Value::as_array) else {
        return Err(err("messages", "expected an array of messages".into()));
    };
    let default_model = doc
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let mut b = Builder::default();
    for (i, m) in messages.iter().enumerate() {
        let field = |k: &str| format!("messages.{i}{k}");
        if !m.is_object() {
            return Err(err(&field(""), "expected a message object".into()));
        }
        let ts = timestamp(m.get("timestamp")).map_err(|e| err(&field(".timestamp"), e))?;
        let text = content(m.get("content"));
        match m.get("role").and_then(Value::as_str) {
            Some("user") => b.user(text, ts),
            Some("assistant") => b.assistant(m, &text, ts, default_model),
            Some("tool") => b.tool_result(&text, ts),
            Some("system" | "developer") => b.context += tokens::count(&text),
            Some(other) => {
                return Err(err(
                    &field(".role"),
                    format!("unknown role {other:?}: use user, assistant, tool or system"),
                ))
            }
            None => {
                return Err(err(
                    &field(".role"),
                    "missing: every message needs a role".into(),
                ))
            }
        }
    }
    let (start, turns) = b.finish();
    if turns.is_empty() {
        return Err(err(
            "messages",
            "no user message: a conversation needs at least one turn".into(),
        ));
    }
    Ok(Session {
        id,
        start_ms: start,
        turns,
    })
}

/// The conversation so far: its turns, the context's tokens, the last time seen.
#[derive(Default)]
struct Builder {
    turns: Vec<Turn>,
    context: u32,
    start: Option<f64>,
    /// When the current turn began and when its last message came.
    began: Option<f64>,
    last: Option<f64>,
    prev_end: Option<f64>,
}

impl Builder {
    fn seen(&mut self, ts: Option<f64>) {
        if let Some(t) = ts {
            self.start.get_or_insert(t);
            self.last = Some(t);
        }
    }

    fn close(&mut self) {
        if let (Some(t), Some(b), Some(e)) = (self.turns.last_mut(), self.began, self.last) {
            t.duration_ms = (e - b).max(0.0);
        }
        self.prev_end = self.last;
    }

    fn user(&mut self, text: String, ts: Option<f64>) {
        self.close();
        let think = match (self.prev_end, ts) {
            (Some(e), Some(t)) if !self.turns.is_empty() => (t - e).max(0.0),
            _ => 0.0,
        };
        self.seen(ts);
        self.began = ts;
        self.context += tokens::count(&text);
        self.turns.push(Turn {
            think_ms: think,
            duration_ms: 0.0,
            user_tokens: tokens::count(&text),
            user_text: Some(text),
            calls: Vec::new(),
            unasked_tools: Vec::new(),
        });
    }

    fn assistant(&mut self, m: &Value, text: &str, ts: Option<f64>, model: &str) {
        let calls = m.get("tool_calls").and_then(Value::as_array);
        let tools: Vec<ToolUse> = calls
            .into_iter()
            .flatten()
            .map(|c| ToolUse {
                name: c
                    .pointer("/function/name")
                    .or(c.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("tool")
                    .to_string(),
                ms: 0.0,
            })
            .collect();
        let args: String = calls
            .into_iter()
            .flatten()
            .filter_map(|c| c.pointer("/function/arguments").and_then(Value::as_str))
            .collect();
        let usage = |a: &str, b: &str| {
            let u = m.get("usage")?;
            u.get(a).or(u.get(b))?.as_u64().map(|n| n as u32)
        };
        let output = usage("completion_tokens", "output_tokens")
            .unwrap_or_else(|| tokens::count(text) + tokens::count(&args));
        let input = usage("prompt_tokens", "input_tokens").unwrap_or(self.context);
        self.context = input + output;
        self.seen(ts);
        let call = Call {
            model: m
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or(model)
                .to_string(),
            input_tokens: Some(input),
            output_tokens: Some(output),
            tools,
            agent: None,
        };
        if let Some(t) = self.turns.last_mut() {
            t.calls.push(call);
        }
    }

    /// A tool's result: its time is from the call that asked for it, when both are stamped.
    fn tool_result(&mut self, text: &str, ts: Option<f64>) {
        let before = self.last;
        self.context += tokens::count(text);
        self.seen(ts);
        let Some(call) = self.turns.last_mut().and_then(|t| t.calls.last_mut()) else {
            return;
        };
        if let (Some(tool), Some(b), Some(t)) =
            (call.tools.iter_mut().find(|t| t.ms == 0.0), before, ts)
        {
            tool.ms = (t - b).max(0.0);
        }
    }

    fn finish(mut self) -> (f64, Vec<Turn>) {
        self.close();
        (self.start.unwrap_or(0.0), self.turns)
    }
}

/// A message's text: a string, or the text parts of an array of content parts.
fn content(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A timestamp in milliseconds: unix seconds (below 1e11) or milliseconds, or RFC 3339.
fn timestamp(v: Option<&Value>) -> Result<Option<f64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            let x = n.as_f64().unwrap_or(0.0);
            Ok(Some(if x < 1e11 { x * 1000.0 } else { x }))
        }
        Some(Value::String(s)) => rfc3339_ms(s).map(Some).ok_or_else(|| {
            format!("{s:?} is not RFC 3339 (2026-01-31T12:00:00.250Z) nor a number")
        }),
        Some(other) => Err(format!(
            "expected a number or an RFC 3339 string (got {other})"
        )),
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` as unix milliseconds.
fn rfc3339_ms(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let rest = &s[19..];
    let (frac, zone) = match rest.strip_prefix('.') {
        Some(r) => {
            let k = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            (format!("0.{}", &r[..k]).parse::<f64>().ok()?, &r[k..])
        }
        None => (0.0, rest),
    };
    let offset_min = match zone {
        "Z" | "z" => 0,
        z if z.len() == 6 => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            sign * (z.get(1..3)?.parse::<i64>().ok()? * 60 + z.get(4..6)?.parse::<i64>().ok()?)
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y2, m2) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * m2 + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(secs as f64 * 1000.0 + frac * 1000.0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_rfc3339() {
        assert_eq!(super::rfc3339_ms("1970-01-01T00:00:01.5Z"), Some(1500.0));
        assert_eq!(
            super::rfc3339_ms("2026-01-31T12:00:00+01:00"),
            Some(1_769_857_200_000.0)
        );
        assert_eq!(super::rfc3339_ms("yesterday"), None);
    }
}
