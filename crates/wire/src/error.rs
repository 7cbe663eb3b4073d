//! A refused request, as every API knows it: its kind, the field at fault, the message.
//!
//! How an error is written (status, envelope, `type` and `code` strings) is each API's
//! own and lives in its dialect (`openai.rs`, `messages/`, `gemini/`); the kinds here are
//! chosen so the official SDKs raise their own exception classes (`BadRequestError`,
//! `RateLimitError`, `OverloadedError` …) once a dialect has written them.

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
    /// The HTTP status most APIs give this kind (a dialect may differ: Anthropic's
    /// overload is 529).
    pub fn http_status(self) -> u16 {
        match self {
            ErrorKind::InvalidRequest => 400,
            ErrorKind::Authentication => 401,
            ErrorKind::PermissionDenied => 403,
            ErrorKind::NotFound => 404,
            ErrorKind::RequestTooLarge => 413,
            ErrorKind::RateLimit | ErrorKind::TokenRateLimit => 429,
            ErrorKind::Server => 500,
            ErrorKind::Overloaded => 503,
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
