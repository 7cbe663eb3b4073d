//! The client's events as the server reads them: each text message one JSON event named
//! by its `type`. A message that is not JSON, an unknown `type`, a missing field or
//! base64 that does not decode is an error the server answers with an `error` event
//! (`invalid_event`, naming the field) — the socket stays open, as the API keeps it.

use super::items::Item;
use crate::error::WireError;
use base64::Engine;
use serde_json::Value;

/// A client event, read.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientEvent {
    SessionUpdate(Value),
    /// Audio in the session's input format, decoded from base64.
    Append(Vec<u8>),
    Commit,
    Clear,
    ItemCreate {
        item: Item,
        previous: Option<String>,
    },
    ItemTruncate {
        item_id: String,
        audio_end_ms: u64,
    },
    ItemDelete(String),
    /// `response.create`, with its `response` options (instructions, modalities …).
    ResponseCreate(Value),
    ResponseCancel,
}

/// A client event that could not be read: the error, and the event's own id to echo.
#[derive(Clone, Debug, PartialEq)]
pub struct Unreadable {
    pub error: WireError,
    pub event_id: Option<String>,
}

/// Reads one text message of the client.
pub fn parse(text: &str) -> Result<ClientEvent, Unreadable> {
    let v: Value = serde_json::from_str(text).map_err(|e| Unreadable {
        error: invalid("", format!("the message is not JSON ({e}): every client event is a JSON object with a \"type\"")),
        event_id: None,
    })?;
    let event_id = v.get("event_id").and_then(Value::as_str).map(String::from);
    read(&v).map_err(|error| Unreadable { error, event_id })
}

fn invalid(param: &str, message: impl Into<String>) -> WireError {
    let mut e = match param {
        "" => WireError::new(crate::ErrorKind::InvalidRequest, message),
        p => WireError::invalid(p, message),
    };
    e.code = crate::Code::Is("invalid_event");
    e
}

fn read(v: &Value) -> Result<ClientEvent, WireError> {
    let Some(kind) = v.get("type").and_then(Value::as_str) else {
        return Err(invalid(
            "type",
            "is missing: every client event names its type",
        ));
    };
    let text = |k: &str| -> Result<String, WireError> {
        v.get(k)
            .and_then(Value::as_str)
            .map(String::from)
            .ok_or_else(|| invalid(k, format!("is required by {kind}")))
    };
    Ok(match kind {
        "session.update" => match v.get("session") {
            Some(s) if s.is_object() => ClientEvent::SessionUpdate(s.clone()),
            _ => return Err(invalid("session", "is required by session.update (an object)")),
        },
        "input_audio_buffer.append" => {
            let b64 = text("audio")?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .map_err(|e| invalid("audio", format!("is not valid base64 ({e})")))?;
            ClientEvent::Append(bytes)
        }
        "input_audio_buffer.commit" => ClientEvent::Commit,
        "input_audio_buffer.clear" => ClientEvent::Clear,
        "conversation.item.create" => {
            let item = v.get("item").ok_or_else(|| invalid("item", "is required by conversation.item.create"))?;
            ClientEvent::ItemCreate {
                item: Item::read(item)?,
                previous: v.get("previous_item_id").and_then(Value::as_str).map(String::from),
            }
        }
        "conversation.item.truncate" => ClientEvent::ItemTruncate {
            item_id: text("item_id")?,
            audio_end_ms: v.get("audio_end_ms").and_then(Value::as_u64).ok_or_else(|| invalid("audio_end_ms", "is required by conversation.item.truncate"))?,
        },
        "conversation.item.delete" => ClientEvent::ItemDelete(text("item_id")?),
        "response.create" => ClientEvent::ResponseCreate(v.get("response").cloned().unwrap_or(Value::Null)),
        "response.cancel" => ClientEvent::ResponseCancel,
        other => {
            return Err(invalid(
                "type",
                format!("{other:?} is not a client event this server reads (session.update, input_audio_buffer.append/commit/clear, conversation.item.create/truncate/delete, response.create/cancel)"),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_and_bad_ones_are_named() {
        assert_eq!(
            parse(r#"{"type":"input_audio_buffer.append","audio":"AAEC"}"#).unwrap(),
            ClientEvent::Append(vec![0, 1, 2])
        );
        let e = parse(r#"{"type":"input_audio_buffer.append","audio":"%%%","event_id":"e9"}"#)
            .unwrap_err();
        assert_eq!(
            (e.error.param.as_deref(), e.event_id.as_deref()),
            (Some("audio"), Some("e9"))
        );
        assert!(e.error.message.contains("is not valid base64"));
        let e = parse("\u{1}\u{2}garbage").unwrap_err();
        assert!(e.error.message.contains("is not JSON"));
        let e = parse(r#"{"type":"response.audio.make"}"#).unwrap_err();
        assert_eq!(e.error.param.as_deref(), Some("type"));
        assert!(matches!(
            parse(r#"{"type":"response.create"}"#).unwrap(),
            ClientEvent::ResponseCreate(Value::Null)
        ));
    }
}
