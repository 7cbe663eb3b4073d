//! Server-sent event streams as a turn reads them: the events with their names and where
//! each ends in the body (so its arrival time can be looked up), which event counts as the
//! first token and which ends the turn, and the text the deltas add up to.
//!
//! Defaults, when session.toml names no `ttft_event`: the first event that carries the
//! model's text — an OpenAI Chat Completions content delta, an Anthropic `text_delta`, a
//! Responses `response.output_text.delta`, a LangGraph `messages…` event holding an AI
//! message with content (not a tool's result, not an empty tool-call message) — and,
//! for a stream with no such event, its first event.

use crate::pointer;
use serde_json::Value;
use tokio::time::Instant;

/// One event: its `event:` name, its data (the `data:` lines joined), the byte offset
/// just past it.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub name: Option<String>,
    pub data: String,
    pub end: usize,
}

impl Event {
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(self.data.trim()).ok()
    }
}

/// Which event counts: by name, by a pointer into its JSON data (with the value it must
/// have, or any non-null value), by whether it carries the model's text, or all of these.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EventMatch {
    pub name: Option<String>,
    pub pointer: Option<String>,
    pub equals: Option<Value>,
    /// The event must carry non-empty text (by the default rules, or at this pointer).
    pub text: Option<Option<String>>,
}

impl EventMatch {
    pub fn matches(&self, e: &Event) -> bool {
        if self
            .name
            .as_ref()
            .is_some_and(|n| e.name.as_ref() != Some(n))
        {
            return false;
        }
        if let Some(at) = &self.text {
            if text_of(e, at.as_deref()).is_none_or(|t| t.is_empty()) {
                return false;
            }
        }
        let Some(p) = &self.pointer else {
            return true;
        };
        let doc = e.json();
        pointer::holds(
            doc.as_ref().and_then(|d| pointer::get(d, p)),
            self.equals.as_ref(),
        )
    }
}

/// The complete events of a body (an event is complete at its blank line).
pub fn events(body: &[u8]) -> Vec<Event> {
    let mut out = Vec::new();
    let (mut name, mut data, mut has_data) = (None, String::new(), false);
    let mut at = 0;
    for raw in body.split_inclusive(|b| *b == b'\n') {
        at += raw.len();
        if !raw.ends_with(b"\n") {
            break; // a line still arriving
        }
        let line = String::from_utf8_lossy(raw);
        let line = line.trim_end_matches(['\n', '\r']);
        if line.is_empty() {
            if has_data || name.is_some() {
                out.push(Event {
                    name: name.take(),
                    data: std::mem::take(&mut data),
                    end: at,
                });
            }
            has_data = false;
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => name = Some(value.to_string()),
            "data" => {
                if has_data {
                    data.push('\n');
                }
                data.push_str(value);
                has_data = true;
            }
            _ => {}
        }
    }
    out
}

/// The text an event adds: a chat content delta, an Anthropic or Responses text delta,
/// a LangGraph AI message (chunk)'s content; or the string at `text_pointer` when given.
pub fn text_of(e: &Event, text_pointer: Option<&str>) -> Option<String> {
    let doc = e.json()?;
    let s = |p: &str| {
        pointer::get(&doc, p)
            .and_then(Value::as_str)
            .map(String::from)
    };
    if let Some(p) = text_pointer {
        return s(p);
    }
    if e.name.as_deref().is_some_and(|n| n.starts_with("messages")) {
        // `messages-tuple`: [message, metadata]; `messages/partial`: [message, …].
        let m = doc.get(0).unwrap_or(&doc);
        let ai = matches!(
            m["type"].as_str(),
            Some("ai" | "AIMessageChunk" | "AIMessage")
        ) || m["role"] == "assistant";
        return if ai {
            m["content"].as_str().map(String::from)
        } else {
            None
        };
    }
    if doc["type"] == "response.output_text.delta" {
        return s("/delta");
    }
    s("/choices/0/delta/content").or_else(|| s("/delta/text"))
}

/// The index of the event that counts as the first token.
pub fn first_token(events: &[Event], rule: Option<&EventMatch>) -> Option<usize> {
    match rule {
        Some(r) => events.iter().position(|e| r.matches(e)),
        None => events
            .iter()
            .position(|e| text_of(e, None).is_some_and(|t| !t.is_empty()))
            .or((!events.is_empty()).then_some(0)),
    }
}

/// The text deltas of a stream joined.
pub fn text(events: &[Event], text_pointer: Option<&str>) -> String {
    events
        .iter()
        .filter_map(|e| text_of(e, text_pointer))
        .collect()
}

/// When the byte at `offset` arrived, from each read's end offset and time.
pub fn arrival(reads: &[(usize, Instant)], offset: usize) -> Option<Instant> {
    reads
        .iter()
        .find(|(end, _)| *end >= offset)
        .map(|(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LANGGRAPH: &str = "event: metadata\ndata: {\"run_id\": \"r1\"}\n\nevent: messages/partial\ndata: [{\"content\": \"\", \"type\": \"ai\"}]\n\nevent: messages/partial\ndata: [{\"content\": \"Hel\", \"type\": \"ai\"}]\n\nevent: values\ndata: {\"messages\": [{\"content\": \"q\"}, {\"content\": \"Hello\"}]}\n\nevent: end\ndata: null\n\n";

    /// What langgraph-api 0.16.7 sent for one turn of a ReAct graph with
    /// stream_mode ["messages-tuple", "values"] (trimmed): metadata, the model's tool
    /// call (empty content), the tool's result, then the model's answer.
    const LANGGRAPH_TUPLES: &str = "event: metadata\ndata: {\"run_id\":\"r\",\"attempt\":1}\n\nevent: values\ndata: {\"messages\":[{\"type\":\"human\",\"content\":\"q\"}]}\n\nevent: messages\ndata: [{\"content\":\"\",\"type\":\"ai\",\"tool_calls\":[{\"name\":\"lookup\"}]},{\"langgraph_node\":\"model\"}]\n\nevent: messages\ndata: [{\"content\":\"fact about q\",\"type\":\"tool\",\"name\":\"lookup\"},{\"langgraph_node\":\"tools\"}]\n\nevent: messages\ndata: [{\"content\":\"the answer\",\"type\":\"ai\",\"tool_calls\":[]},{\"langgraph_node\":\"model\"}]\n\nevent: values\ndata: {\"messages\":[{\"type\":\"ai\",\"content\":\"the answer\"}]}\n\n";

    #[test]
    fn a_tools_result_is_not_the_models_first_token() {
        let ev = events(LANGGRAPH_TUPLES.as_bytes());
        assert_eq!(
            first_token(&ev, None),
            Some(4),
            "the answer, not metadata, not the tool"
        );
        assert_eq!(text(&ev, None), "the answer");
        // Written out: an AI message with text, by name.
        let rule = EventMatch {
            name: Some("messages".into()),
            text: Some(None),
            ..Default::default()
        };
        assert_eq!(ev.iter().position(|e| rule.matches(e)), Some(4));
    }

    #[test]
    fn events_carry_names_data_and_where_they_end() {
        let ev = events(LANGGRAPH.as_bytes());
        assert_eq!(ev.len(), 5);
        assert_eq!(ev[0].name.as_deref(), Some("metadata"));
        assert_eq!(ev[0].json().unwrap()["run_id"], "r1");
        assert_eq!(ev[4].end, LANGGRAPH.len());
        assert!(ev[0].end < ev[1].end);
        // An event whose blank line has not come yet is not an event.
        assert_eq!(events(b"data: {\"a\":1}\n").len(), 0);
        assert_eq!(events(b"data: a\ndata: b\n\n")[0].data, "a\nb");
    }

    #[test]
    fn the_first_token_is_the_first_event_with_text_by_default() {
        let ev = events(LANGGRAPH.as_bytes());
        assert_eq!(
            first_token(&ev, None),
            Some(2),
            "not metadata, not empty content"
        );
        let openai = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n";
        assert_eq!(first_token(&events(openai.as_bytes()), None), Some(1));
        let anthropic = "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n";
        assert_eq!(first_token(&events(anthropic.as_bytes()), None), Some(1));
        let plain = "data: {\"progress\": 1}\n\n";
        assert_eq!(first_token(&events(plain.as_bytes()), None), Some(0));
        let rule = EventMatch {
            name: Some("values".into()),
            ..Default::default()
        };
        assert_eq!(first_token(&ev, Some(&rule)), Some(3));
    }

    #[test]
    fn matches_by_name_pointer_and_value() {
        let ev = events(LANGGRAPH.as_bytes());
        let end = EventMatch {
            name: Some("end".into()),
            ..Default::default()
        };
        assert_eq!(ev.iter().position(|e| end.matches(e)), Some(4));
        let by_value = EventMatch {
            pointer: Some("/0/type".into()),
            equals: Some(json!("ai")),
            ..Default::default()
        };
        assert_eq!(ev.iter().position(|e| by_value.matches(e)), Some(1));
        let present = EventMatch {
            pointer: Some("/messages/-1/content".into()),
            ..Default::default()
        };
        assert_eq!(ev.iter().position(|e| present.matches(e)), Some(3));
    }

    #[test]
    fn text_joins_the_deltas() {
        let openai = "data: {\"choices\":[{\"delta\":{\"content\":\"fa\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"ct\"}}]}\n\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"!\"}\n\n";
        assert_eq!(text(&events(openai.as_bytes()), None), "fact!");
        let custom = "data: {\"t\": \"a\"}\n\ndata: {\"t\": \"b\"}\n\n";
        assert_eq!(text(&events(custom.as_bytes()), Some("/t")), "ab");
    }
}
