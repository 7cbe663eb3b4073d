//! The Realtime API over WebSocket at `/v1/realtime?model=…`, as the official SDKs speak
//! it (GA): `session.created` on connect, `session.update` merged, the caller's audio
//! appended (pcm16 at 24 kHz, G.711 µ-law or A-law), server VAD from the audio itself
//! (`turn`), each committed turn heard for its words, and responses that speak — their
//! words decided and checked as a chat call's are, their audio paced like speech, function
//! calls following the scenario (`respond`). A client event the server cannot read gets an
//! `error` event; the socket stays open. `conn` runs one connection.

mod conn;
mod respond;
mod turn;

use crate::serve::app::App;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// `GET /v1/realtime?model=…` upgraded to a WebSocket; anything else is the API's 400.
pub async fn upgrade(
    State(app): State<Arc<App>>,
    uri: Uri,
    headers: HeaderMap,
    ws: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Response {
    let ws = match ws {
        Ok(ws) => ws,
        Err(e) => {
            let err = wire::WireError::invalid(
                "connection",
                format!("/v1/realtime takes a WebSocket upgrade ({e}): connect with a Realtime client, e.g. client.realtime.connect(model=…)"),
            );
            return crate::serve::errors::refuse_as(
                &app,
                "Realtime session",
                wire::Api::ChatCompletions,
                &err,
                "req_realtime",
            )
            .into_response();
        }
    };
    let model = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .find_map(|kv| kv.strip_prefix("model="))
        .filter(|m| !m.is_empty())
        .unwrap_or("gpt-realtime")
        .to_string();
    let who = headers
        .get("x-plimsoll-session")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    ws.protocols(["realtime"])
        .on_upgrade(move |socket| conn::run(app, socket, model, who))
}
