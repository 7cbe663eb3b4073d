//! The responses of early failures, as real providers send them: injected ones, and the
//! provider's pushback (a quota's 429, a full queue's 529/503).
//!
//! A 429 carries `retry-after` and `retry-after-ms` (what the official SDKs read to
//! time their retries) and the provider's rate-limit headers; 500 and 503/529 carry
//! the API's error envelope. A dropped connection is a response marked [`Abort`]: the
//! server closes the socket without writing a byte.

use crate::capacity::Full;
use crate::envelope::error_response;
use crate::failures::{Failures, Injected};
use crate::limits::Dim;
use crate::pushback::refusal_message;
use crate::quota::{put_headers, Reading, Refused};
use axum::http::HeaderValue;
use axum::response::Response;
use wire::{Api, ErrorKind, WireError};

/// `retry-after` in whole seconds (at least 1) and `retry-after-ms` exactly: what the
/// official SDKs read to time their retries.
fn put_retry_after(h: &mut axum::http::HeaderMap, ms: u64) {
    if let Ok(v) = HeaderValue::from_str(&ms.div_ceil(1000).max(1).to_string()) {
        h.insert("retry-after", v);
    }
    if let Ok(v) = HeaderValue::from_str(&ms.to_string()) {
        h.insert("retry-after-ms", v);
    }
}

/// A quota's 429: the API's envelope, `retry-after` until the bucket holds what the
/// request needs, and the bucket's rate-limit headers (nothing remaining).
pub fn over_quota(api: Api, model: &str, r: &Refused, request_id: &str) -> Response {
    let kind = if r.dim == Dim::Requests {
        ErrorKind::RateLimit
    } else {
        ErrorKind::TokenRateLimit
    };
    let msg = refusal_message(model, r, api == Api::Messages);
    let mut resp = error_response(api, &WireError::new(kind, msg), request_id);
    let h = resp.headers_mut();
    put_retry_after(h, r.retry_after_ms);
    put_headers(h, api, &r.readings);
    resp
}

/// A full queue: 529 `overloaded_error` (Anthropic) or 503 (OpenAI), with `retry-after`.
pub fn queue_full(api: Api, f: &Full, request_id: &str) -> Response {
    let msg = format!(
        "Overloaded: every generation slot is busy and {} requests already wait (plimsoll mock capacity)",
        f.max_queue
    );
    let mut resp = error_response(api, &WireError::new(ErrorKind::Overloaded, msg), request_id);
    put_retry_after(resp.headers_mut(), f.retry_after_ms);
    resp
}

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
    // Overloaded providers also say when to come back; the SDKs' backoff reads it.
    if matches!(kind, Injected::RateLimit | Injected::Overloaded) {
        put_retry_after(h, ms);
    }
    if kind == Injected::RateLimit {
        // An exhausted quota of a typical size, written like a real quota's refusal.
        let (requests, tokens) = if api == Api::Messages {
            (1000.0, 400_000.0)
        } else {
            (10_000.0, 2_000_000.0)
        };
        let empty = |dim, limit| Reading {
            dim,
            limit,
            remaining: 0,
            reset_ms: ms,
        };
        put_headers(
            h,
            api,
            &[empty(Dim::Requests, requests), empty(Dim::Tokens, tokens)],
        );
    }
    resp
}
