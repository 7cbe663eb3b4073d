//! The responses of injected early failures, as real providers send them.
//!
//! A 429 carries `retry-after` and `retry-after-ms` (what the official SDKs read to
//! time their retries) and the provider's rate-limit headers; 500 and 503/529 carry
//! the API's error envelope. A dropped connection is a response marked [`Abort`]: the
//! server closes the socket without writing a byte.

use crate::clock::{now_unix_ms, rfc3339};
use crate::envelope::error_response;
use crate::failures::{Failures, Injected};
use axum::http::HeaderValue;
use axum::response::Response;
use wire::{Api, ErrorKind, WireError};

/// Marks a response that must not be sent: the connection is closed instead.
#[derive(Clone, Copy, Debug)]
pub struct Abort;

pub fn early(api: Api, kind: Injected, f: &Failures, request_id: &str) -> Response {
    let (ek, msg) = match kind {
        Injected::RateLimit => (
            ErrorKind::RateLimit,
            "Rate limit reached for requests (injected by plimsoll)",
        ),
        Injected::ServerError => (
            ErrorKind::Server,
            "The server had an error processing your request (injected by plimsoll)",
        ),
        Injected::Overloaded => (ErrorKind::Overloaded, "Overloaded (injected by plimsoll)"),
        _ => {
            let mut r = Response::new(axum::body::Body::empty());
            r.extensions_mut().insert(Abort);
            return r;
        }
    };
    let mut resp = error_response(api, &WireError::new(ek, msg), request_id);
    let ms = f.retry_after_ms;
    let h = resp.headers_mut();
    let mut put = |k: &'static str, v: String| {
        if let Ok(v) = HeaderValue::from_str(&v) {
            h.insert(k, v);
        }
    };
    // Overloaded providers also say when to come back; the SDKs' backoff reads it.
    if matches!(kind, Injected::RateLimit | Injected::Overloaded) {
        put("retry-after", ms.div_ceil(1000).max(1).to_string());
        put("retry-after-ms", ms.to_string());
    }
    if kind == Injected::RateLimit {
        if api == Api::Messages {
            let reset = rfc3339(now_unix_ms() + ms);
            put("anthropic-ratelimit-requests-limit", "1000".into());
            put("anthropic-ratelimit-requests-remaining", "0".into());
            put("anthropic-ratelimit-requests-reset", reset.clone());
            put("anthropic-ratelimit-tokens-limit", "400000".into());
            put("anthropic-ratelimit-tokens-remaining", "0".into());
            put("anthropic-ratelimit-tokens-reset", reset);
        } else {
            put("x-ratelimit-limit-requests", "10000".into());
            put("x-ratelimit-remaining-requests", "0".into());
            put("x-ratelimit-reset-requests", format!("{ms}ms"));
            put("x-ratelimit-limit-tokens", "2000000".into());
            put("x-ratelimit-remaining-tokens", "0".into());
            put("x-ratelimit-reset-tokens", format!("{ms}ms"));
        }
    }
    resp
}
