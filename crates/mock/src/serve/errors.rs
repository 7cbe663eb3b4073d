//! Every answer that is not a reply, as real providers send it: an error in the API's
//! envelope, an injected failure, the provider's pushback (a quota's 429, a full
//! queue's 529/503), a dropped connection.
//!
//! A 429 carries `retry-after` and `retry-after-ms` (what the official SDKs read to
//! time their retries) and the provider's rate-limit headers; 500 and 503/529 carry
//! the API's error envelope. A dropped connection is a response marked [`Abort`]: the
//! server closes the socket without writing a byte. Statuses, envelopes, header names
//! and the words of a refusal are each API's dialect's.

use crate::failures::rates::{Failures, Injected};
use crate::pushback::capacity::Full;
use crate::pushback::limits::{thousands, Dim};
use crate::pushback::quota::{Reading, Refused};
use crate::serve::app::App;
use crate::serve::headers::{add_request_id, put_headers, put_retry_after};
use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use std::sync::atomic::Ordering::Relaxed;
use wire::{Api, ErrorKind, QuotaRefusal, WireError};

/// An error in the API's envelope, with its status and request id header.
pub fn error_response(api: Api, err: &WireError, request_id: &str) -> Response {
    let status =
        StatusCode::from_u16(api.dialect().status(err.kind)).unwrap_or(StatusCode::BAD_REQUEST);
    let mut resp = Response::new(Body::from(wire::error_body(api, err, request_id)));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    add_request_id(h, api, request_id);
    resp
}

/// Counts a refused request of `api` and answers its error.
pub fn refuse(app: &App, api: Api, e: &WireError, request_id: &str) -> Response {
    let what = match api {
        Api::ChatCompletions => "chat completion",
        Api::Responses => "Responses request",
        Api::Messages => "Messages request",
        Api::Gemini => "Gemini request",
    };
    refuse_as(app, what, api, e, request_id)
}

/// Counts a refused request (`what` was asked: "speech request", "transcription") with
/// its words, and answers its error in `api`'s envelope.
pub fn refuse_as(
    app: &App,
    what: &'static str,
    api: Api,
    e: &WireError,
    request_id: &str,
) -> Response {
    app.stats.errors.fetch_add(1, Relaxed);
    app.refusals
        .add(what, api.dialect().status(e.kind), &e.message);
    error_response(api, e, request_id)
}

/// A quota's 429: the API's envelope and words, `retry-after` until the bucket holds
/// what the request needs, and the bucket's rate-limit headers (nothing remaining).
pub fn over_quota(api: Api, model: &str, r: &Refused, request_id: &str) -> Response {
    let kind = if r.dim == Dim::Requests {
        ErrorKind::RateLimit
    } else {
        ErrorKind::TokenRateLimit
    };
    let msg = api.dialect().quota_refused(&QuotaRefusal {
        model,
        bucket: r.dim,
        limit: thousands(r.limit),
        requested: r.requested,
        retry_after_ms: r.retry_after_ms,
        too_large: r.too_large,
    });
    let mut resp = error_response(api, &WireError::new(kind, msg), request_id);
    let h = resp.headers_mut();
    put_retry_after(h, r.retry_after_ms);
    put_headers(h, api, &r.readings);
    resp
}

/// A full queue: the API's overloaded error (529 `overloaded_error` for Anthropic, 503
/// for OpenAI), with `retry-after`.
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

/// An injected early failure: its error, or a dropped connection.
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
            let mut r = Response::new(Body::empty());
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
        let (requests, tokens) = api.dialect().typical_quota();
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
