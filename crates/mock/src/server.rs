//! The HTTP server: routes, shared state, admin endpoints, start and stop.

use crate::app::App;
use crate::envelope::error_response;
use crate::failures::Failures;
use crate::handler;
use crate::inject::Abort;
use crate::ledger::Ledger;
use crate::scenario::Scenario;
use crate::stats::Stats;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::RwLock;
use tokio::net::TcpListener;
use wire::{Api, ErrorKind, WireError};

/// How to start the mock.
#[derive(Clone, Debug)]
pub struct MockOptions {
    pub listen: SocketAddr,
    pub scenario: Scenario,
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    pub max_body_bytes: usize,
    pub fixed_created: Option<u64>,
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            scenario: Scenario::default(),
            seed: None,
            max_body_bytes: 32 << 20,
            fixed_created: None,
        }
    }
}

pub fn router(app: Arc<App>) -> Router {
    let api = |a: Api| {
        move |State(app): State<Arc<App>>, headers: HeaderMap, body: Body| {
            handler::handle(app, a, headers, body)
        }
    };
    Router::new()
        .route("/v1/chat/completions", post(api(Api::ChatCompletions)))
        .route("/chat/completions", post(api(Api::ChatCompletions)))
        .route("/v1/responses", post(api(Api::Responses)))
        .route("/responses", post(api(Api::Responses)))
        .route("/v1/messages", post(api(Api::Messages)))
        .route(
            "/v1/embeddings",
            post(
                |State(app): State<Arc<App>>, headers: HeaderMap, body: Body| {
                    crate::embed::handle(app, headers, body)
                },
            ),
        )
        .route("/v1/models", get(models))
        .route("/v1/models/{id}", get(model).post(gemini))
        .route("/v1beta/models/{id}", post(gemini))
        .route("/health", get(health))
        .route("/plimsoll/health", get(health))
        .route("/plimsoll/timing", get(timing))
        .route("/plimsoll/timing/reset", post(reset_timing))
        .route("/plimsoll/ledger", get(ledger))
        .route(
            "/plimsoll/shards/{run}/barrier",
            post(crate::rendezvous::barrier),
        )
        .route(
            "/plimsoll/shards/{run}/files",
            get(crate::rendezvous::get_files),
        )
        .route(
            "/plimsoll/shards/{run}/files/{name}",
            axum::routing::put(crate::rendezvous::put_file)
                .layer(axum::extract::DefaultBodyLimit::max(64 << 20)),
        )
        .route("/metrics", get(crate::metrics::render))
        .route(
            "/plimsoll/admin/failures",
            get(get_failures).post(set_failures),
        )
        .route("/plimsoll/admin/limits", get(get_limits).post(set_limits))
        .fallback(fallback)
        .with_state(app)
}

async fn health(State(app): State<Arc<App>>) -> Json<Value> {
    Json(json!({"status": "ok", "streams_open": app.stats.snapshot().streams_open}))
}

async fn timing(State(app): State<Arc<App>>) -> Json<crate::stats::TimingSnapshot> {
    Json(app.stats.snapshot())
}

async fn reset_timing(State(app): State<Arc<App>>) -> Json<Value> {
    app.stats.reset_timing();
    Json(json!({"status": "reset"}))
}

async fn ledger(State(app): State<Arc<App>>) -> Json<Value> {
    Json(app.ledger_json())
}

fn admin_bad(m: String) -> Response {
    error_response(
        Api::ChatCompletions,
        &WireError::invalid("body", m),
        "req_admin",
    )
}

/// An admin change's body: the model it names (`*`, every model or the provider, when
/// none) and its other fields; or what is wrong with it, with `example` to copy.
fn admin_change(
    body: &[u8],
    example: &str,
) -> Result<(String, serde_json::Map<String, Value>), String> {
    let Ok(Value::Object(mut fields)) = serde_json::from_slice::<Value>(body) else {
        return Err(format!("must be a JSON object such as {example}"));
    };
    match fields.remove("model") {
        Some(Value::String(m)) => Ok((m, fields)),
        None => Ok(("*".to_string(), fields)),
        Some(_) => Err("model must be a string (a model name or \"*\")".into()),
    }
}

async fn get_failures(State(app): State<Arc<App>>) -> Json<Value> {
    let o = app
        .failure_overrides
        .read()
        .unwrap_or_else(|p| p.into_inner());
    Json(json!({"overrides": *o}))
}

/// `{"model": "*", "rate_limit": 0.5, …}` sets rates for a model (or all); fields not
/// given keep their current value. `{"model": "*", "reset": true}` drops the override.
async fn set_failures(State(app): State<Arc<App>>, body: axum::body::Bytes) -> Response {
    let (model, mut fields) = match admin_change(&body, r#"{"model": "*", "rate_limit": 0.2}"#) {
        Ok(x) => x,
        Err(m) => return admin_bad(m),
    };
    let mut o = app
        .failure_overrides
        .write()
        .unwrap_or_else(|p| p.into_inner());
    if fields.remove("reset") == Some(Value::Bool(true)) {
        o.remove(&model);
        return Json(json!({"overrides": *o})).into_response();
    }
    let current = o
        .get(&model)
        .or_else(|| o.get("*"))
        .copied()
        .unwrap_or_else(|| {
            app.scenario
                .model(&model)
                .map(|s| s.failures)
                .unwrap_or(app.scenario.defaults.failures)
        });
    let mut merged = serde_json::to_value(current).expect("Failures serializes");
    for (k, v) in fields {
        merged[k] = v;
    }
    let next: Failures = match serde_json::from_value(merged) {
        Ok(f) => f,
        Err(e) => return admin_bad(format!("{e}")),
    };
    if let Err(e) = next.validate() {
        return admin_bad(e);
    }
    o.insert(model, next);
    Json(json!({"overrides": *o})).into_response()
}

async fn get_limits(State(app): State<Arc<App>>) -> Json<Value> {
    Json(json!({
        "provider": app.scenario.provider,
        "overrides": app.pushback.overrides(),
    }))
}

/// `{"model": "*", "quota": {"rpm": 60}, "capacity": {"max_in_flight": 4}}` replaces the
/// limits of the provider (`*`, the default) or of one model, live; a field left out
/// keeps its current value, `null` removes it; `{"model": "*", "reset": true}` goes back
/// to the scenario's.
async fn set_limits(State(app): State<Arc<App>>, body: axum::body::Bytes) -> Response {
    let (scope, mut fields) = match admin_change(&body, r#"{"model": "*", "quota": {"rpm": 60}}"#) {
        Ok(x) => x,
        Err(m) => return admin_bad(m),
    };
    if fields.remove("reset") == Some(Value::Bool(true)) {
        let o = app.pushback.set(&scope, None);
        return Json(json!({"overrides": o})).into_response();
    }
    let current = app.pushback.in_force(&app.scenario, &scope);
    let mut merged = serde_json::to_value(current).expect("Limits serializes");
    for (k, v) in fields {
        if v.is_null() {
            if let Some(m) = merged.as_object_mut() {
                m.remove(&k);
            }
        } else {
            merged[k] = v;
        }
    }
    let next: crate::limits::Limits = match serde_json::from_value(merged) {
        Ok(l) => l,
        Err(e) => return admin_bad(format!("{e}")),
    };
    if let Err(e) = next.validate() {
        return admin_bad(e);
    }
    let o = app.pushback.set(&scope, Some(next));
    Json(json!({"overrides": o})).into_response()
}

/// Anthropic clients send `anthropic-version`; they get Anthropic's list shape.
fn is_anthropic(headers: &HeaderMap) -> bool {
    headers.contains_key("anthropic-version")
}

fn model_names(app: &App) -> Vec<String> {
    if app.scenario.models.is_empty() {
        vec!["plimsoll-mock".to_string()]
    } else {
        app.scenario.models.keys().cloned().collect()
    }
}

fn model_entry(anthropic: bool, id: &str) -> Value {
    if anthropic {
        json!({"type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z"})
    } else {
        json!({"id": id, "object": "model", "created": 1_735_689_600u64, "owned_by": "plimsoll"})
    }
}

async fn models(State(app): State<Arc<App>>, headers: HeaderMap) -> Json<Value> {
    let anthropic = is_anthropic(&headers);
    let names = model_names(&app);
    let data: Vec<Value> = names.iter().map(|n| model_entry(anthropic, n)).collect();
    Json(if anthropic {
        json!({"data": data, "has_more": false, "first_id": names.first(), "last_id": names.last()})
    } else {
        json!({"object": "list", "data": data})
    })
}

async fn model(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let anthropic = is_anthropic(&headers);
    if app.scenario.model(&id).is_some() {
        Json(model_entry(anthropic, &id)).into_response()
    } else {
        let api = if anthropic {
            Api::Messages
        } else {
            Api::ChatCompletions
        };
        let e = WireError::new(ErrorKind::NotFound, format!("model: {id:?} does not exist"));
        error_response(api, &e, "req_models")
    }
}

async fn gemini(
    State(app): State<Arc<App>>,
    Path(call): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    handler::handle_gemini(app, &call, uri.query(), headers, body).await
}

async fn fallback(method: Method, uri: Uri, headers: HeaderMap) -> Response {
    let api = if is_anthropic(&headers) {
        Api::Messages
    } else {
        Api::ChatCompletions
    };
    let e = WireError::new(
        ErrorKind::NotFound,
        format!(
            "no route for {method} {}; the mock serves POST /v1/chat/completions, POST /v1/responses, \
             POST /v1/messages, POST /v1/embeddings, POST /v1beta/models/MODEL:generateContent (and :streamGenerateContent?alt=sse), \
             GET /v1/models, GET /health, GET /plimsoll/timing",
            uri.path()
        ),
    );
    error_response(api, &e, "req_noroute")
}

/// Accepts connections until `stopped` fires, then waits for open ones to finish.
///
/// hyper's HTTP/1 server is used directly (not axum::serve) so the mock skips
/// protocol sniffing and keeps per-connection buffers at their minimum: thousands
/// of open streams must cost little memory.
async fn accept_loop(
    listener: TcpListener,
    service: Aborting,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.max_buf_size(64 * 1024).keep_alive(true);
    loop {
        let (tcp, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of file descriptors or a reset before accept: keep serving.
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    continue;
                }
            },
            _ = &mut stopped => break,
        };
        // Nagle's algorithm would hold small SSE frames back by up to 40 ms.
        let _ = tcp.set_nodelay(true);
        let conn = http.serve_connection(TokioIo::new(tcp), service.clone());
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// The router as a hyper service that turns a response marked [`Abort`] into a
/// closed connection: hyper drops a connection whose service returns an error.
#[derive(Clone)]
struct Aborting(TowerToHyperService<Router>);

#[derive(Debug)]
struct Aborted;

impl std::fmt::Display for Aborted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped (injected by plimsoll)")
    }
}

impl std::error::Error for Aborted {}

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for Aborting {
    type Response = Response;
    type Error = Aborted;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<Response, Aborted>> + Send>>;

    fn call(&self, req: hyper::Request<hyper::body::Incoming>) -> Self::Future {
        let fut = self.0.call(req);
        Box::pin(async move {
            let resp = fut.await.unwrap_or_else(|never| match never {});
            if resp.extensions().get::<Abort>().is_some() {
                Err(Aborted)
            } else {
                Ok(resp)
            }
        })
    }
}

/// A running mock. Dropping it does not stop it; call [`MockServer::shutdown`].
pub struct MockServer {
    pub addr: SocketAddr,
    pub app: Arc<App>,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl MockServer {
    /// Binds and starts serving on the current tokio runtime.
    pub async fn start(opts: MockOptions) -> std::io::Result<MockServer> {
        let listener = TcpListener::bind(opts.listen).await?;
        let addr = listener.local_addr()?;
        let seed = opts.seed.unwrap_or(opts.scenario.seed);
        let pushback = crate::pushback::Pushback::new(&opts.scenario);
        let app = Arc::new(App {
            pushback,
            calls_by_model: Default::default(),
            chains: Default::default(),
            rendezvous: Default::default(),
            scenario: opts.scenario,
            seed,
            max_body_bytes: opts.max_body_bytes,
            fixed_created: opts.fixed_created,
            stats: Stats::default(),
            ledger: Ledger::new(),
            failure_overrides: RwLock::new(BTreeMap::new()),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let service = Aborting(TowerToHyperService::new(router(app.clone())));
        let task = tokio::spawn(accept_loop(listener, service, stopped));
        Ok(MockServer {
            addr,
            app,
            stop,
            task,
        })
    }

    /// `http://ADDR` — the Anthropic base URL; OpenAI's is this plus `/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, lets open responses finish, and waits.
    pub async fn shutdown(self) -> std::io::Result<()> {
        let _ = self.stop.send(());
        self.task.await.unwrap_or(Ok(()))
    }

    /// Waits until the server task ends (it ends only on error or shutdown).
    pub async fn wait(self) -> std::io::Result<()> {
        let MockServer { stop, task, .. } = self;
        let result = task.await.unwrap_or(Ok(()));
        drop(stop);
        result
    }
}
