//! JSON-RPC 2.0 as MCP uses it: one message per HTTP body or stdio line, read into one
//! of its four kinds (request, notification, response, error), and answers written back.
//! Anything that is not a well-formed message becomes the protocol's own error — parse
//! error (-32700) for bytes that are not JSON, invalid request (-32600) for JSON that is
//! not a message — with the request's id when it could be read, `null` otherwise.
//! Batches (JSON arrays) were removed from MCP in 2025-06-18 and are refused as invalid
//! requests.

use serde_json::{json, Map, Value};

/// The error codes of JSON-RPC 2.0 and those MCP reserves (2026-07-28, `basic/index`).
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// HTTP headers that do not match the body (Streamable HTTP, 2026-07-28).
    pub const HEADER_MISMATCH: i64 = -32020;
    pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// One JSON-RPC message. An id is a string or a number, kept as JSON.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    Request {
        id: Value,
        method: String,
        params: Option<Map<String, Value>>,
    },
    Notification {
        method: String,
        params: Option<Map<String, Value>>,
    },
    Response {
        id: Value,
        result: Value,
    },
    Error {
        id: Value,
        error: RpcError,
    },
}

/// A JSON-RPC error object.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    fn json(&self) -> Value {
        let mut e = json!({"code": self.code, "message": self.message});
        if let Some(d) = &self.data {
            e["data"] = d.clone();
        }
        e
    }
}

/// A message that could not be read: the error to answer with, and the id to answer it
/// under (`null` when the id itself could not be read).
#[derive(Clone, Debug, PartialEq)]
pub struct Refused {
    pub id: Value,
    pub error: RpcError,
}

fn refused(id: Value, code: i64, message: impl Into<String>) -> Refused {
    Refused {
        id,
        error: RpcError::new(code, message),
    }
}

/// Reads one message from its bytes.
pub fn parse(bytes: &[u8]) -> Result<Message, Refused> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| refused(Value::Null, code::PARSE_ERROR, format!("Parse error: {e}")))?;
    let obj = match v {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Err(refused(
                Value::Null,
                code::INVALID_REQUEST,
                "Invalid Request: JSON-RPC batches are not part of MCP since 2025-06-18; send one message per request",
            ))
        }
        other => {
            return Err(refused(
                Value::Null,
                code::INVALID_REQUEST,
                format!("Invalid Request: a message is a JSON object (got {})", kind(&other)),
            ))
        }
    };
    message(obj)
}

/// A JSON value's kind, for messages.
fn kind(v: &Value) -> &'static str {
    crate::fields::type_name(v)
}

fn message(mut obj: Map<String, Value>) -> Result<Message, Refused> {
    let id = obj.remove("id");
    let id_ok = matches!(id, Some(Value::String(_)) | Some(Value::Number(_)));
    let reply_id = if id_ok {
        id.clone().unwrap_or_default()
    } else {
        Value::Null
    };
    let bad = |m: String| refused(reply_id.clone(), code::INVALID_REQUEST, m);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(bad("Invalid Request: \"jsonrpc\" must be \"2.0\"".into()));
    }
    if id.is_some() && !id_ok {
        return Err(bad(format!(
            "Invalid Request: \"id\" must be a string or a number (got {})",
            kind(id.as_ref().unwrap_or(&Value::Null))
        )));
    }
    if let Some(m) = obj.remove("method") {
        let Value::String(method) = m else {
            return Err(bad(format!(
                "Invalid Request: \"method\" must be a string (got {})",
                kind(&m)
            )));
        };
        let params = match obj.remove("params") {
            None => None,
            Some(Value::Object(p)) => Some(p),
            Some(other) => {
                return Err(bad(format!(
                    "Invalid Request: \"params\" must be an object (got {})",
                    kind(&other)
                )))
            }
        };
        return Ok(match id {
            Some(id) => Message::Request { id, method, params },
            None => Message::Notification { method, params },
        });
    }
    reply(obj, id, bad)
}

/// A response or an error sent to us (MCP servers accept and ignore them).
fn reply(
    mut obj: Map<String, Value>,
    id: Option<Value>,
    bad: impl Fn(String) -> Refused,
) -> Result<Message, Refused> {
    let id = id.unwrap_or(Value::Null);
    if let Some(result) = obj.remove("result") {
        return Ok(Message::Response { id, result });
    }
    if let Some(Value::Object(e)) = obj.remove("error") {
        let code = e.get("code").and_then(Value::as_i64);
        let message = e.get("message").and_then(Value::as_str);
        if let (Some(code), Some(message)) = (code, message) {
            let mut error = RpcError::new(code, message);
            error.data = e.get("data").cloned();
            return Ok(Message::Error { id, error });
        }
        return Err(bad(
            "Invalid Request: an error needs an integer \"code\" and a string \"message\"".into(),
        ));
    }
    Err(bad(
        "Invalid Request: a message needs \"method\" (a request or notification) or \"result\"/\"error\" (a response)".into(),
    ))
}

/// A successful answer to request `id`.
pub fn result(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

/// An error answer to request `id` (`null` when the id could not be read).
pub fn error(id: &Value, e: &RpcError) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": e.json()}).to_string()
}

/// A notification, as a server sends one (progress, log messages).
pub fn notification(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> Refused {
        parse(text.as_bytes()).unwrap_err()
    }

    #[test]
    fn reads_every_kind_of_message() {
        let m = parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x"}}"#)
            .unwrap();
        assert_eq!(
            m,
            Message::Request {
                id: json!(1),
                method: "tools/list".into(),
                params: Some(json!({"cursor": "x"}).as_object().unwrap().clone()),
            }
        );
        let m = parse(br#"{"jsonrpc":"2.0","id":"a-1","method":"ping"}"#).unwrap();
        assert!(
            matches!(m, Message::Request { ref id, ref method, params: None } if id == "a-1" && method == "ping")
        );
        let m = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(
            matches!(m, Message::Notification { ref method, .. } if method == "notifications/initialized")
        );
        let m = parse(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#).unwrap();
        assert_eq!(
            m,
            Message::Response {
                id: json!(7),
                result: json!({})
            }
        );
        let m =
            parse(br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no","data":[1]}}"#)
                .unwrap();
        assert_eq!(
            m,
            Message::Error {
                id: json!(7),
                error: RpcError::new(-32601, "no").with_data(json!([1]))
            }
        );
    }

    #[test]
    fn malformed_messages_get_the_protocols_own_codes() {
        assert_eq!(err("{not json").error.code, code::PARSE_ERROR);
        assert_eq!(err("").error.code, code::PARSE_ERROR);
        assert_eq!(err("[]").error.code, code::INVALID_REQUEST);
        assert_eq!(
            err(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)
                .error
                .code,
            code::INVALID_REQUEST
        );
        assert_eq!(err("42").error.code, code::INVALID_REQUEST);
        let e = err(r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#);
        assert_eq!(
            (e.error.code, e.id),
            (code::INVALID_REQUEST, json!(3)),
            "the id is kept"
        );
        let e = err(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#);
        assert_eq!((e.error.code, e.id), (code::INVALID_REQUEST, Value::Null));
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":5}"#).error.code,
            code::INVALID_REQUEST
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#)
                .error
                .code,
            code::INVALID_REQUEST
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1}"#).error.code,
            code::INVALID_REQUEST
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#)
                .error
                .code,
            code::INVALID_REQUEST
        );
    }

    #[test]
    fn answers_are_one_line_of_json() {
        let ok = result(&json!(1), json!({"tools": []}));
        assert_eq!(ok, r#"{"id":1,"jsonrpc":"2.0","result":{"tools":[]}}"#);
        let e = error(
            &Value::Null,
            &RpcError::new(code::PARSE_ERROR, "Parse error"),
        );
        assert_eq!(
            e,
            r#"{"error":{"code":-32700,"message":"Parse error"},"id":null,"jsonrpc":"2.0"}"#
        );
        assert!(!notification("notifications/progress", json!({"progress": 1})).contains('\n'));
    }
}
