//! MCP over Streamable HTTP at `/mcp`: POST carries one JSON-RPC message and gets its
//! answer as JSON or as an SSE response stream (the scenario's `mcp.reply`, when the
//! client accepts both; the stream opens at once and the answer follows after the
//! tool's latency), 202 for a notification, `Mcp-Session-Id` on the answer to
//! `initialize`; DELETE ends a legacy session; GET (a standalone stream) is 405, which
//! both eras allow. An `Origin` other than this machine's is refused (403), as the
//! specification asks against DNS rebinding. A `plimsoll mcp --stdio` relaying to this
//! endpoint says so (`x-plimsoll-mcp-stdio: PID`): its calls count as stdio, and its
//! process is known.

use crate::mcp::relay::STDIO_HEADER;
use crate::mcp::server::{Answer, Mirrored, Transport, Via};
use crate::serve::app::App;
use crate::spec::mcp::ReplyForm;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use wire::mcp::jsonrpc::{self, code, RpcError};
use wire::mcp::protocol;

fn get<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// An `Origin` that is not this machine (a page elsewhere reaching a local server).
fn foreign_origin(h: &HeaderMap) -> bool {
    let Some(o) = get(h, "origin") else {
        return false;
    };
    let host = o
        .split("://")
        .nth(1)
        .unwrap_or(o)
        .split('/')
        .next()
        .unwrap_or("");
    let host = host
        .rsplit_once(':')
        .filter(|(_, p)| p.parse::<u16>().is_ok())
        .map_or(host, |(h, _)| h);
    !matches!(host, "127.0.0.1" | "localhost" | "[::1]" | "::1")
}

fn refused(status: StatusCode, code: i64, message: &str) -> Response {
    let body = jsonrpc::error(&serde_json::Value::Null, &RpcError::new(code, message));
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

pub async fn post(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    if foreign_origin(&headers) {
        return refused(
            StatusCode::FORBIDDEN,
            code::INVALID_REQUEST,
            "Forbidden: Origin is not this machine",
        );
    }
    let bytes = match crate::serve::body::read_body(&app, &headers, body).await {
        Ok(b) => b,
        Err(e) => {
            return refused(
                StatusCode::PAYLOAD_TOO_LARGE,
                code::INVALID_REQUEST,
                &e.message,
            )
        }
    };
    let pid = get(&headers, STDIO_HEADER).and_then(|p| p.parse::<u32>().ok());
    let mirrored = Mirrored {
        version: get(&headers, protocol::HEADER_VERSION).map(str::to_string),
        method: get(&headers, protocol::HEADER_METHOD).map(str::to_string),
        name: get(&headers, protocol::HEADER_NAME).map(str::to_string),
    };
    let via = Via {
        transport: if pid.is_some() {
            Transport::Stdio
        } else {
            Transport::Http
        },
        session: get(&headers, protocol::HEADER_SESSION),
        headers: pid.is_none().then_some(&mirrored),
        pid,
    };
    let answer = app.mcp.handle(&bytes, &via);
    let accept = get(&headers, "accept").unwrap_or("");
    let sse = app.mcp.spec.reply == ReplyForm::Sse
        && (accept.contains("text/event-stream") || accept.is_empty());
    respond(answer, sse).await
}

/// The answer as HTTP: JSON after the delay, or a stream opened now and answered later.
async fn respond(a: Answer, sse: bool) -> Response {
    let status = StatusCode::from_u16(a.status).unwrap_or(StatusCode::OK);
    let Some(body) = a.body else {
        return StatusCode::ACCEPTED.into_response();
    };
    let mut resp = if sse && status == StatusCode::OK {
        let delay = a.delay;
        let event = protocol::sse_event(&body);
        let stream = futures_util::stream::once(async move {
            // A tool that answers at once must not wait: tokio's timer rounds even a
            // zero sleep up to its next 1 ms tick.
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            Ok::<_, std::convert::Infallible>(Bytes::from(event))
        });
        let mut r = Response::new(Body::from_stream(stream));
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        h.insert("x-accel-buffering", HeaderValue::from_static("no"));
        r
    } else {
        if !a.delay.is_zero() {
            tokio::time::sleep(a.delay).await;
        }
        let mut r = Response::new(Body::from(body));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        r
    };
    *resp.status_mut() = status;
    if let Some(sid) = a.new_session.and_then(|s| HeaderValue::from_str(&s).ok()) {
        resp.headers_mut().insert(protocol::HEADER_SESSION, sid);
    }
    resp
}

/// DELETE ends the legacy session the header names.
pub async fn delete(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    match get(&headers, protocol::HEADER_SESSION) {
        Some(sid) if app.mcp.end_session(sid) => StatusCode::OK.into_response(),
        Some(_) => refused(
            StatusCode::NOT_FOUND,
            code::INVALID_REQUEST,
            "Session not found",
        ),
        None => refused(
            StatusCode::BAD_REQUEST,
            code::INVALID_REQUEST,
            "Bad Request: DELETE needs Mcp-Session-Id",
        ),
    }
}

/// No standalone server-to-client stream: this server never sends unasked.
pub async fn get_stream() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, "POST, DELETE")],
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn an_sse_answer_due_now_is_in_the_stream_at_its_first_read() {
        let a = Answer {
            status: 200,
            body: Some("{}".into()),
            delay: std::time::Duration::ZERO,
            new_session: None,
        };
        let mut body = respond(a, true).await.into_body();
        let first = body.frame().now_or_never();
        assert!(
            matches!(first, Some(Some(Ok(_)))),
            "a tool of zero latency waited for the timer"
        );
    }
}
