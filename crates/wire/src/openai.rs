//! What OpenAI's two APIs (Chat Completions and Responses) share: the error envelope
//! `{"error":{"message","type","param","code"}}`, the `x-ratelimit-*` headers, the
//! reasoning item a reasoning model answers with, and the request fields both read
//! alike (`reasoning_effort`, `tool_choice`, `prompt_cache_key` and its retention).
//!
//! Each API's own requests and replies are in `chat/` and `responses/`.

use crate::cache::CacheAsk;
use crate::dialect::ThoughtMint;
use crate::error::{Code, ErrorKind, WireError};
use crate::fields::{join, opt_str, type_name, Obj};
use crate::ratelimit::{Bucket, RateReading};
use crate::reply::Part;
use crate::request::{Request, ToolChoice};
use crate::times::go_duration;
use serde_json::{json, Value};

fn type_str(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidRequest
        | ErrorKind::Authentication
        | ErrorKind::NotFound
        | ErrorKind::RequestTooLarge => "invalid_request_error",
        ErrorKind::PermissionDenied => "permission_error",
        ErrorKind::RateLimit => "requests",
        ErrorKind::TokenRateLimit => "tokens",
        ErrorKind::Server | ErrorKind::Overloaded => "server_error",
    }
}

fn code_str(kind: ErrorKind) -> Option<&'static str> {
    match kind {
        ErrorKind::Authentication => Some("invalid_api_key"),
        ErrorKind::NotFound => Some("model_not_found"),
        ErrorKind::RateLimit | ErrorKind::TokenRateLimit => Some("rate_limit_exceeded"),
        _ => None,
    }
}

/// An error in OpenAI's envelope (the request id goes in a header only).
pub fn error_body(err: &WireError) -> Value {
    json!({
        "error": {
            "message": err.message,
            "type": type_str(err.kind),
            "param": err.param,
            "code": match err.code {
                Code::OfKind => code_str(err.kind),
                Code::Is(c) => Some(c),
                Code::Null => None,
            },
        }
    })
}

/// `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`: OpenAI has no headers for
/// separate input and output token quotas; its reset is a Go duration.
pub fn rate_limit_headers(r: &RateReading) -> Vec<(&'static str, String)> {
    let [limit, remaining, reset] = match r.bucket {
        Bucket::Requests => [
            "x-ratelimit-limit-requests",
            "x-ratelimit-remaining-requests",
            "x-ratelimit-reset-requests",
        ],
        Bucket::Tokens => [
            "x-ratelimit-limit-tokens",
            "x-ratelimit-remaining-tokens",
            "x-ratelimit-reset-tokens",
        ],
        Bucket::InputTokens | Bucket::OutputTokens => return Vec::new(),
    };
    vec![
        (limit, (r.limit.round() as u64).to_string()),
        (remaining, r.remaining.to_string()),
        (reset, go_duration(r.reset_ms)),
    ]
}

/// A reasoning item `rs_<reply>_0`, sealed (its `encrypted_content`) only when the
/// client asked for the reasoning back.
pub fn thought(req: &Request, reply_id: &str, tokens: u32, mint: &mut dyn ThoughtMint) -> Part {
    let item = format!("rs_{reply_id}_0");
    let seal = req.reasoning_returned.then(|| mint.seal(&item));
    Part::Hidden {
        id: item,
        seal,
        tokens,
    }
}

/// `reasoning_effort` / `reasoning.effort`: one of the API's levels.
pub fn effort(obj: &Obj, key: &str, path: &str) -> Result<Option<String>, WireError> {
    const LEVELS: [&str; 7] = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];
    match opt_str(obj, key, path)? {
        None => Ok(None),
        Some(e) if LEVELS.contains(&e) => Ok(Some(e.to_string())),
        Some(e) => Err(WireError::invalid(
            join(path, key),
            format!("must be one of {}; got {e:?}", LEVELS.join(", ")),
        )),
    }
}

/// `prompt_cache_key` (requests share cached prefixes only under one key) and
/// `prompt_cache_retention` (`in_memory`, or `24h` for extended retention).
pub fn cache_ask(root: &Obj) -> Result<CacheAsk, WireError> {
    let key = opt_str(root, "prompt_cache_key", "")?.map(str::to_string);
    let extended = match opt_str(root, "prompt_cache_retention", "")? {
        None | Some("in_memory") => false,
        Some("24h") => true,
        Some(other) => {
            return Err(WireError::verbatim(
                Some("prompt_cache_retention"),
                format!("Invalid value: '{other}'. Supported values are: 'in_memory' and '24h'."),
                Some("invalid_value"),
            ))
        }
    };
    Ok(CacheAsk {
        key,
        extended,
        ..CacheAsk::default()
    })
}

/// `"auto" | "none" | "required" | {…named…}`; `named` reads the tool name from the object form.
pub fn tool_choice(
    v: Option<&Value>,
    named: impl Fn(&Obj) -> Result<String, WireError>,
) -> Result<ToolChoice, WireError> {
    match v {
        None | Some(Value::Null) => Ok(ToolChoice::Auto),
        Some(Value::String(s)) => match s.as_str() {
            "auto" => Ok(ToolChoice::Auto),
            "none" => Ok(ToolChoice::None),
            "required" => Ok(ToolChoice::Required),
            other => Err(WireError::invalid(
                "tool_choice",
                format!("must be auto, none, required or a named tool, got {other:?}"),
            )),
        },
        Some(Value::Object(o)) => Ok(ToolChoice::Named(named(o)?)),
        Some(v) => Err(WireError::invalid(
            "tool_choice",
            format!("must be a string or an object, got {}", type_name(v)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::{error_body, Api, ErrorKind, WireError};

    #[test]
    fn openai_envelope_names_the_param() {
        let e = WireError::invalid("messages", "is required");
        let v: serde_json::Value =
            serde_json::from_slice(&error_body(Api::ChatCompletions, &e, "r")).unwrap();
        assert_eq!(v["error"]["param"], "messages");
        assert_eq!(v["error"]["type"], "invalid_request_error");
        assert_eq!(v["error"]["message"], "messages: is required");
        assert_eq!(ErrorKind::Overloaded.status(Api::Responses), 503);
    }
}
