//! `POST /v1/embeddings`: the model's vectors (`provider/embed.rs`) after its time to
//! first token, in OpenAI's envelope.
//!
//! The dimension is the request's `dimensions`, else the model's `embedding_dim`.
//! Quotas, slots-free failures and the ledger apply as for chat calls.

use crate::hash::fnv1a;
use crate::ledger;
use crate::provider::{embed, timing};
use crate::pushback::quota::Reading;
use crate::serve::app::App;
use crate::serve::body::read_body;
use crate::serve::errors::{early, over_quota, refuse_as};
use crate::serve::headers::{add_request_id, header, key_of, put_headers};
use crate::session::markers;
use axum::body::Body;
use axum::http::{header as h, HeaderMap, HeaderValue};
use axum::response::Response;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use wire::{Api, EmbeddingRequest, WireError};

const API: Api = Api::ChatCompletions; // OpenAI's error envelope and headers

pub async fn handle(app: Arc<App>, headers: HeaderMap, body: Body) -> Response {
    app.stats.requests.fetch_add(1, Relaxed);
    let bytes = match read_body(&app, &headers, body).await {
        Ok(b) => b,
        Err(e) => return refuse_as(&app, "embeddings request", API, &e, "req_unread"),
    };
    let request_id = format!("req_{:016x}", fnv1a(app.seed, &bytes));
    let req = match wire::parse_embeddings(&bytes) {
        Ok(r) => r,
        Err(e) => return refuse_as(&app, "embeddings request", API, &e, &request_id),
    };
    let Some(spec) = app.scenario.model(&req.model) else {
        return refuse_as(
            &app,
            "embeddings request",
            API,
            &app.unknown_model(&req.model),
            &request_id,
        );
    };
    let session = session_of(&req, &headers);
    let arrival = app
        .ledger
        .arrive(&session, fnv1a(app.seed, &bytes), req.tokens);
    let scopes = app
        .pushback
        .scopes(app.scenario.provider, &req.model, spec.limits);
    let key = if scopes.is_empty() {
        String::new()
    } else {
        key_of(&headers)
    };
    let now = std::time::Instant::now();
    if let Err(r) = app.pushback.admit(&scopes, &key, req.tokens, now) {
        app.ledger.refused(&session);
        app.stats.errors.fetch_add(1, Relaxed);
        return over_quota(API, &req.model, &r, &request_id);
    }
    let failures = app.failures_for(&req.model, &spec);
    let mut frng = ChaCha8Rng::seed_from_u64(fnv1a(
        fnv1a(app.seed, &bytes),
        &arrival.attempt.to_le_bytes(),
    ));
    if let Some(kind) = failures.draw(&mut frng).early {
        app.ledger.injected(&session, kind);
        app.stats.errors.fetch_add(1, Relaxed);
        return early(API, kind, &failures, &request_id);
    }
    if let Some(d) = req.dimensions.filter(|d| *d > spec.embedding_dim) {
        let e = WireError::invalid(
            "dimensions",
            format!(
                "must be at most {} for model {:?} (got {d}); its vectors have {} numbers (embedding_dim in the scenario)",
                spec.embedding_dim, req.model, spec.embedding_dim
            ),
        );
        return refuse_as(&app, "embeddings request", API, &e, &request_id);
    }
    let dim = req.dimensions.unwrap_or(spec.embedding_dim) as usize;
    let vectors: Vec<Vec<f32>> = req
        .inputs
        .iter()
        .map(|t| embed::vector(app.seed, t, dim))
        .collect();
    let readings = app.pushback.spend_output(&scopes, &key, 0, now);
    app.pushback.answered();
    let wait = spec.ttft_ms * timing::factor(spec.jitter, &mut frng);
    app.ledger.llm_time(&session, wait);
    tokio::time::sleep(Duration::from_secs_f64(wait.max(0.0) / 1000.0)).await;
    let body = wire::render_embeddings(&req, &vectors);
    respond(body, &request_id, &readings)
}

/// The session: a marker in an input, else the header, else anonymous.
fn session_of(req: &EmbeddingRequest, headers: &HeaderMap) -> String {
    req.inputs
        .iter()
        .find_map(|t| markers(t).into_iter().next().map(|m| m.session))
        .or_else(|| header(headers, "x-plimsoll-session").map(str::to_string))
        .unwrap_or_else(|| ledger::ANONYMOUS.to_string())
}

fn respond(body: Vec<u8>, request_id: &str, readings: &[Reading]) -> Response {
    let mut resp = Response::new(Body::from(body));
    let hm = resp.headers_mut();
    hm.insert(
        h::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    add_request_id(hm, API, request_id);
    put_headers(hm, API, readings);
    resp
}
