//! Errors in each API's own envelope.
//!
//! OpenAI: `{"error":{"message","type","param","code"}}`. Anthropic:
//! `{"type":"error","error":{"type","message"},"request_id"}`. The status code and the
//! `type` string come from [`ErrorKind`] so the official SDKs raise their own
//! exception classes (`BadRequestError`, `RateLimitError`, `OverloadedError` …).

use crate::Api;
use serde_json::json;

/// The kinds of error the mock can answer with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    InvalidRequest,
    Authentication,
    PermissionDenied,
    NotFound,
    RequestTooLarge,
    RateLimit,
    /// 429 for a token quota (OpenAI's type `tokens`; Anthropic's `rate_limit_error`).
    TokenRateLimit,
    Server,
    /// 503 (OpenAI) / 529 (Anthropic): the provider is overloaded.
    Overloaded,
}

impl ErrorKind {
    /// HTTP status for this kind on the given API.
    pub fn status(self, api: Api) -> u16 {
        match self {
            ErrorKind::InvalidRequest => 400,
            ErrorKind::Authentication => 401,
            ErrorKind::PermissionDenied => 403,
            ErrorKind::NotFound => 404,
            ErrorKind::RequestTooLarge if api == Api::Gemini => 400,
            ErrorKind::RequestTooLarge => 413,
            ErrorKind::RateLimit | ErrorKind::TokenRateLimit => 429,
            ErrorKind::Server => 500,
            ErrorKind::Overloaded => match api {
                Api::Messages => 529,
                _ => 503,
            },
        }
    }

    fn type_str(self, api: Api) -> &'static str {
        let anthropic = api == Api::Messages;
        match self {
            ErrorKind::InvalidRequest => "invalid_request_error",
            ErrorKind::Authentication if anthropic => "authentication_error",
            ErrorKind::Authentication => "invalid_request_error",
            ErrorKind::PermissionDenied => "permission_error",
            ErrorKind::NotFound if anthropic => "not_found_error",
            ErrorKind::NotFound => "invalid_request_error",
            ErrorKind::RequestTooLarge if anthropic => "request_too_large",
            ErrorKind::RequestTooLarge => "invalid_request_error",
            ErrorKind::RateLimit if anthropic => "rate_limit_error",
            ErrorKind::RateLimit => "requests",
            ErrorKind::TokenRateLimit if anthropic => "rate_limit_error",
            ErrorKind::TokenRateLimit => "tokens",
            ErrorKind::Server if anthropic => "api_error",
            ErrorKind::Server => "server_error",
            ErrorKind::Overloaded if anthropic => "overloaded_error",
            ErrorKind::Overloaded => "server_error",
        }
    }

    /// Google's status name for the HTTP status (Gemini's `error.status`).
    fn google_status(self) -> &'static str {
        match self {
            ErrorKind::InvalidRequest | ErrorKind::RequestTooLarge => "INVALID_ARGUMENT",
            ErrorKind::Authentication => "UNAUTHENTICATED",
            ErrorKind::PermissionDenied => "PERMISSION_DENIED",
            ErrorKind::NotFound => "NOT_FOUND",
            ErrorKind::RateLimit | ErrorKind::TokenRateLimit => "RESOURCE_EXHAUSTED",
            ErrorKind::Server => "INTERNAL",
            ErrorKind::Overloaded => "UNAVAILABLE",
        }
    }

    fn code_str(self) -> Option<&'static str> {
        match self {
            ErrorKind::Authentication => Some("invalid_api_key"),
            ErrorKind::NotFound => Some("model_not_found"),
            ErrorKind::RateLimit | ErrorKind::TokenRateLimit => Some("rate_limit_exceeded"),
            _ => None,
        }
    }
}

/// An OpenAI error's `code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// The kind's own (`rate_limit_exceeded`, `model_not_found` …).
    OfKind,
    /// As the API words this error (`previous_response_not_found`).
    Is(&'static str),
    /// `null`.
    Null,
}

/// A request the mock refuses, with the field at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireError {
    pub kind: ErrorKind,
    /// The offending field as a dotted path (`messages.2.content`), if one is at fault.
    pub param: Option<String>,
    pub message: String,
    /// OpenAI's `code`: the kind's own unless the API words the error itself.
    pub code: Code,
}

impl WireError {
    pub fn invalid(param: impl Into<String>, message: impl Into<String>) -> Self {
        let param = param.into();
        let message = message.into();
        WireError {
            kind: ErrorKind::InvalidRequest,
            message: format!("{param}: {message}"),
            param: Some(param),
            code: Code::OfKind,
        }
    }

    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        WireError {
            kind,
            param: None,
            message: message.into(),
            code: Code::OfKind,
        }
    }

    /// An invalid request in the API's own words: the message as the API writes it
    /// (no field prefix), with its `param` and `code`.
    pub fn verbatim(
        param: Option<&str>,
        message: impl Into<String>,
        code: Option<&'static str>,
    ) -> Self {
        WireError {
            kind: ErrorKind::InvalidRequest,
            param: param.map(str::to_string),
            message: message.into(),
            code: code.map_or(Code::Null, Code::Is),
        }
    }

    /// The same error with another kind (its status and type), e.g. a 404.
    pub fn of_kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for WireError {}

/// The JSON body of an error in `api`'s envelope.
pub fn error_body(api: Api, err: &WireError, request_id: &str) -> Vec<u8> {
    let body = match api {
        Api::Messages => json!({
            "type": "error",
            "error": {"type": err.kind.type_str(api), "message": err.message},
            "request_id": request_id,
        }),
        Api::Gemini => json!({
            "error": {
                "code": err.kind.status(api),
                "message": err.message,
                "status": err.kind.google_status(),
            }
        }),
        _ => json!({
            "error": {
                "message": err.message,
                "type": err.kind.type_str(api),
                "param": err.param,
                "code": match err.code {
                    Code::OfKind => err.kind.code_str(),
                    Code::Is(c) => Some(c),
                    Code::Null => None,
                },
            }
        }),
    };
    serde_json::to_vec(&body).expect("a json! value always serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_overload_is_529_with_its_type() {
        let e = WireError::new(ErrorKind::Overloaded, "busy");
        assert_eq!(ErrorKind::Overloaded.status(Api::Messages), 529);
        let v: serde_json::Value =
            serde_json::from_slice(&error_body(Api::Messages, &e, "req_1")).unwrap();
        assert_eq!(v["type"], "error");
        assert_eq!(v["error"]["type"], "overloaded_error");
        assert_eq!(v["request_id"], "req_1");
    }

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
