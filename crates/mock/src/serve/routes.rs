//! The routes: one line per API, handed to its handler, and the mock's own endpoints
//! (health, timing, ledger, metrics, admin, the shards' rendezvous) and MCP's `/mcp`. Routes every API
//! shares (`GET /v1/models`, an unknown path) answer in the dialect of the client's API,
//! told by its headers.

use crate::serve::app::App;
use crate::serve::call::{self, Target};
use crate::serve::errors::error_response;
use crate::serve::mcp_http as mcp;
use crate::serve::{admin, embeddings, metrics, rendezvous};
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::sync::Arc;
use wire::{Api, ErrorKind, WireError};

pub fn router(app: Arc<App>) -> Router {
    // A call of an API whose URL says nothing more than which API it is.
    let api = |a: Api| {
        move |State(app): State<Arc<App>>, headers: HeaderMap, body: Body| {
            call::handle(app, a, None, headers, body)
        }
    };
    Router::new()
        .route("/v1/chat/completions", post(api(Api::ChatCompletions)))
        .route("/chat/completions", post(api(Api::ChatCompletions)))
        .route("/v1/responses", post(api(Api::Responses)))
        .route("/responses", post(api(Api::Responses)))
        .route("/v1/messages", post(api(Api::Messages)))
        .route("/v1/embeddings", post(embeddings))
        .route("/v1/audio/speech", post(speech))
        .route("/audio/speech", post(speech))
        .route(
            "/v1/audio/transcriptions",
            post(transcriptions).layer(axum::extract::DefaultBodyLimit::disable()),
        )
        .route("/v1/realtime", get(crate::serve::audio::realtime::upgrade))
        .route("/realtime", get(crate::serve::audio::realtime::upgrade))
        .route("/v1/models", get(models))
        .route("/v1/models/{id}", get(model).post(gemini))
        .route("/v1beta/models/{id}", post(gemini))
        .route("/health", get(health))
        .route("/plimsoll/health", get(health))
        .route("/plimsoll/timing", get(timing))
        .route("/plimsoll/timing/reset", post(reset_timing))
        .route("/plimsoll/ledger", get(ledger))
        .route("/plimsoll/owner", post(owner))
        .route("/plimsoll/spoken", post(spoken))
        .route("/plimsoll/shards/{run}/barrier", post(rendezvous::barrier))
        .route("/plimsoll/shards/{run}/files", get(rendezvous::get_files))
        .route(
            "/plimsoll/shards/{run}/files/{name}",
            put(rendezvous::put_file).layer(axum::extract::DefaultBodyLimit::max(64 << 20)),
        )
        .route(
            "/mcp",
            post(mcp::post).get(mcp::get_stream).delete(mcp::delete),
        )
        .route("/metrics", get(metrics::render))
        .route(
            "/plimsoll/admin/failures",
            get(admin::get_failures).post(admin::set_failures),
        )
        .route(
            "/plimsoll/admin/limits",
            get(admin::get_limits).post(admin::set_limits),
        )
        .fallback(fallback)
        .with_state(app)
}

/// Gemini `POST …/models/{model}:{action}`: the model and whether to stream come from
/// the URL.
async fn gemini(
    State(app): State<Arc<App>>,
    Path(tail): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let query = uri.query().map(str::to_string);
    call::handle(
        app,
        Api::Gemini,
        Some(Target { tail, query }),
        headers,
        body,
    )
    .await
}

async fn speech(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    crate::serve::audio::speech::handle(app, headers, body).await
}

async fn transcriptions(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    crate::serve::audio::transcribe::handle(app, headers, body).await
}

async fn embeddings(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    embeddings::handle(app, headers, body).await
}

async fn health(State(app): State<Arc<App>>) -> Json<Value> {
    Json(json!({"status": "ok", "streams_open": app.stats.snapshot().streams_open}))
}

async fn timing(State(app): State<Arc<App>>) -> Json<crate::serve::stats::TimingSnapshot> {
    Json(app.stats.snapshot())
}

async fn reset_timing(State(app): State<Arc<App>>) -> Json<Value> {
    app.stats.reset_timing();
    Json(json!({"status": "reset"}))
}

/// The typed summary written directly: its fields are declared in the order a JSON
/// value would write them, so these are the bytes of `App::ledger_json`.
async fn ledger(State(app): State<Arc<App>>) -> Json<crate::ledger::Summary> {
    Json(app.ledger_summary())
}

/// Whose reply holds the text in the body (the words a caller heard): `{"owner": "s3"}`,
/// or null when it is no reply of the mock's. Calls driven from shards ask it, sharing
/// one mock but not its ledger in memory.
async fn owner(State(app): State<Arc<App>>, text: String) -> Json<serde_json::Value> {
    Json(serde_json::json!({ "owner": app.ledger.owner_of_spoken(&text) }))
}

/// The replies spoken aloud between two times ago, by session: the body `SINCE_MS UNTIL_MS
/// MOST` (at most MOST sessions), the answer `{"spoken": [["s3", ["text", …]], …]}`. A
/// shard's caller compares a reply it cannot read with them by its sound; a body it cannot
/// read lists none.
async fn spoken(State(app): State<Arc<App>>, body: String) -> Json<serde_json::Value> {
    let n: Vec<u64> = body
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let list = match n[..] {
        [since, until, most] => app.ledger.aloud.between(
            std::time::Duration::from_millis(since),
            std::time::Duration::from_millis(until),
            most as usize,
        ),
        _ => Vec::new(),
    };
    Json(serde_json::json!({ "spoken": list }))
}

/// The API whose client sent these headers.
fn client_api(headers: &HeaderMap) -> Api {
    Api::of_client(|name| headers.contains_key(name))
}

fn model_names(app: &App) -> Vec<String> {
    if app.scenario.models.is_empty() {
        vec!["plimsoll-mock".to_string()]
    } else {
        app.scenario.models.keys().cloned().collect()
    }
}

async fn models(State(app): State<Arc<App>>, headers: HeaderMap) -> Json<Value> {
    Json(
        client_api(&headers)
            .dialect()
            .model_list(&model_names(&app)),
    )
}

async fn model(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let api = client_api(&headers);
    if app.scenario.model(&id).is_some() {
        Json(api.dialect().model_entry(&id)).into_response()
    } else {
        let e = WireError::new(ErrorKind::NotFound, format!("model: {id:?} does not exist"));
        error_response(api, &e, "req_models")
    }
}

async fn fallback(method: Method, uri: Uri, headers: HeaderMap) -> Response {
    let e = WireError::new(
        ErrorKind::NotFound,
        format!(
            "no route for {method} {}; the mock serves POST /v1/chat/completions, POST /v1/responses, \
             POST /v1/messages, POST /v1/embeddings, POST /v1beta/models/MODEL:generateContent (and :streamGenerateContent?alt=sse), \
             GET /v1/models, GET /health, GET /plimsoll/timing",
            uri.path()
        ),
    );
    error_response(client_api(&headers), &e, "req_noroute")
}
