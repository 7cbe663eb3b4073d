//! `POST /v1/embeddings`: deterministic vectors after the model's time to first token.
//!
//! Each input's vector is drawn from an RNG seeded by the run's seed and the input's
//! text, so the same text always gets the same unit-length vector; the dimension is the
//! request's `dimensions`, else the model's `embedding_dim`. Quotas, slots-free failures
//! and the ledger apply as for chat calls.

use crate::app::App;
use crate::envelope::add_request_id;
use crate::handler::{header, read_body, refuse};
use crate::hash::fnv1a;
use crate::quota::{key_of, put_headers};
use crate::session::markers;
use crate::{inject, ledger, timing};
use axum::body::Body;
use axum::http::{header as h, HeaderMap, HeaderValue};
use axum::response::Response;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use wire::{Api, WireError};

const API: Api = Api::ChatCompletions; // OpenAI's error envelope and headers

/// A unit vector of `dim` numbers for `text`, the same on every run with this seed.
pub fn vector(seed: u64, text: &str, dim: usize) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(fnv1a(seed, text.as_bytes()));
    let v: Vec<f32> = (0..dim).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    let norm = v
        .iter()
        .map(|x| x * x)
        .sum::<f32>()
        .sqrt()
        .max(f32::MIN_POSITIVE);
    v.into_iter().map(|x| x / norm).collect()
}

pub async fn handle(app: Arc<App>, headers: HeaderMap, body: Body) -> Response {
    app.stats.requests.fetch_add(1, Relaxed);
    let bytes = match read_body(&app, &headers, body).await {
        Ok(b) => b,
        Err(e) => return refuse(&app, API, &e, "req_unread"),
    };
    let request_id = format!("req_{:016x}", fnv1a(app.seed, &bytes));
    let req = match wire::parse_embeddings(&bytes) {
        Ok(r) => r,
        Err(e) => return refuse(&app, API, &e, &request_id),
    };
    let Some(spec) = app.scenario.model(&req.model) else {
        return refuse(&app, API, &app.unknown_model(&req.model), &request_id);
    };
    // The session: a marker in an input, else the header, else anonymous.
    let session = req
        .inputs
        .iter()
        .find_map(|t| markers(t).into_iter().next().map(|m| m.session))
        .or_else(|| header(&headers, "x-plimsoll-session").map(str::to_string))
        .unwrap_or_else(|| ledger::ANONYMOUS.to_string());
    let arrival = app
        .ledger
        .arrive(&session, fnv1a(app.seed, &bytes), req.tokens);
    let scopes = app.pushback.scopes(&app.scenario, &req.model, &spec);
    let key = if scopes.is_empty() {
        String::new()
    } else {
        key_of(&headers)
    };
    let now = std::time::Instant::now();
    if let Err(r) = app.pushback.admit(&scopes, &key, req.tokens, now) {
        app.ledger.refused(&session);
        app.stats.errors.fetch_add(1, Relaxed);
        return inject::over_quota(API, &req.model, &r, &request_id);
    }
    let failures = app.failures_for(&req.model, &spec);
    let mut frng = ChaCha8Rng::seed_from_u64(fnv1a(
        fnv1a(app.seed, &bytes),
        &arrival.attempt.to_le_bytes(),
    ));
    if let Some(kind) = failures.draw(&mut frng).early {
        app.ledger.injected(&session, kind);
        app.stats.errors.fetch_add(1, Relaxed);
        return inject::early(API, kind, &failures, &request_id);
    }
    if let Some(d) = req.dimensions.filter(|d| *d > spec.embedding_dim) {
        let e = WireError::invalid(
            "dimensions",
            format!(
                "must be at most {} for model {:?} (got {d}); its vectors have {} numbers (embedding_dim in the scenario)",
                spec.embedding_dim, req.model, spec.embedding_dim
            ),
        );
        return refuse(&app, API, &e, &request_id);
    }
    let dim = req.dimensions.unwrap_or(spec.embedding_dim) as usize;
    let vectors: Vec<Vec<f32>> = req
        .inputs
        .iter()
        .map(|t| vector(app.seed, t, dim))
        .collect();
    let readings = app.pushback.spend_output(&scopes, &key, 0, now);
    app.pushback.answered();
    let wait = spec.ttft_ms * timing::factor(spec.jitter, &mut frng);
    app.ledger.llm_time(&session, wait);
    tokio::time::sleep(Duration::from_secs_f64(wait.max(0.0) / 1000.0)).await;
    let mut resp = Response::new(Body::from(wire::render_embeddings(&req, &vectors)));
    let hm = resp.headers_mut();
    hm.insert(
        h::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    add_request_id(hm, API, &request_id);
    put_headers(hm, API, &readings);
    resp
}

#[cfg(test)]
mod tests {
    #[test]
    fn vectors_are_unit_length_and_the_same_for_the_same_text() {
        let a = super::vector(7, "hello", 64);
        assert_eq!(a, super::vector(7, "hello", 64));
        assert_ne!(a, super::vector(7, "hullo", 64));
        assert_ne!(a, super::vector(8, "hello", 64));
        let norm: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
    }
}
