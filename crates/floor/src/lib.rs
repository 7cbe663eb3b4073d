//! The floor: the least an agent system can do, as a service to measure others against.
//!
//! `POST /turn` with `{"session": ID, "message": TEXT}` appends the message to that
//! session's conversation and runs the tool loop against the provider at
//! `OPENAI_BASE_URL` (Chat Completions, non-streaming): while the model asks for a tool,
//! execute it against the session's in-memory store (`memory_set`, `memory_get`; any
//! other tool answers `ok`) and send the result back; the final text is the reply,
//! `{"reply": TEXT, "llm_calls": N}`. `GET /health` answers `ok`. No framework, no
//! threads beyond tokio's workers, one HTTP connection per turn: a cost floor.
//! `--thread-per-session` is the other design, on purpose: an OS thread per session.
//!
//! Two more knobs make agents whose wall is known in advance, for tests of the verdict:
//! `--cpu-ms-per-call MS` burns that much CPU time after each LLM call (a framework's
//! parsing, prompt building, tool dispatch), so under a 1-core cap throughput tops out at
//! 1000 / (MS × calls per turn) turns/s; `--max-turns-in-flight N` lets only N turns run at
//! once (a worker pool, a lock, a one-run-at-a-time queue) with next to no CPU, so
//! throughput tops out at N / (turn time) while the CPU idles.
//!
//! Like the official SDKs, the floor retries a call the provider refused (429, 5xx, a
//! dropped connection) up to `--max-retries` times (2 by default), after the
//! `retry-after-ms` or `retry-after` the provider sent, else after 0.5 s, 1 s, 2 s …: a
//! provider's quota then shows as retries and waits, the way it shows in real agents.
//!
//! For the walls inside a process: `--on-the-loop` (with a one-thread runtime) burns that
//! CPU on the serving thread itself, an event loop doing its work on the loop;
//! `--thread-per-turn` starts a thread every turn and never ends it; `--cold-start-ms MS`
//! burns that much more CPU on each session's first turn.
//!
//! For soak tests: `DELETE /session/ID` forgets a session (a session.toml's
//! `[[teardown]]`), so a soak's churn leaves nothing behind; `--leak-kb-per-session KB`
//! keeps that much memory for every new session forever (a leak of known slope).

use bytes::Bytes;
use drive::http::Conn;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Session {
    messages: Vec<Value>,
    store: HashMap<String, String>,
}

/// How the floor behaves beyond the bare tool loop.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// The "one OS thread per session" variant: each new session parks a thread of its own.
    pub thread_per_session: bool,
    /// CPU time burnt after each LLM call, in milliseconds.
    pub cpu_ms_per_call: f64,
    /// At most this many turns at once; the rest wait their turn.
    pub max_turns_in_flight: Option<usize>,
    /// Memory kept forever for every new session, in KB (a planted leak).
    pub leak_kb_per_session: usize,
    /// Retries of a refused LLM call (the SDKs' default is 2).
    pub max_retries: u32,
    /// Burn the CPU on the serving thread itself (run with a one-thread runtime: an event
    /// loop doing its work on the loop), not on a blocking pool.
    pub on_the_loop: bool,
    /// Start an OS thread for every turn and never end it (a known bug shape).
    pub thread_per_turn: bool,
    /// Extra CPU burnt on each session's first turn, in milliseconds (a cold start).
    pub cold_start_ms: f64,
}

struct Floor {
    opts: Options,
    gate: Option<tokio::sync::Semaphore>,
    provider: SocketAddr,
    /// Path prefix of the provider's API (`/v1`).
    prefix: String,
    model: String,
    sessions: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Session>>>>,
    /// What `leak_kb_per_session` keeps.
    leaked: Mutex<Vec<Vec<u8>>>,
}

fn tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "memory_set", "description": "store a value",
            "parameters": {"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"}}, "required": ["key", "value"]}}},
        {"type": "function", "function": {"name": "memory_get", "description": "read a stored value",
            "parameters": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}}},
    ])
}

/// Serves the floor on `listen` until the process ends. `base_url` is the provider's
/// OpenAI base URL (`http://127.0.0.1:PORT/v1`).
pub async fn serve(
    listen: SocketAddr,
    base_url: &str,
    model: &str,
    opts: Options,
) -> anyhow::Result<()> {
    let rest = base_url.strip_prefix("http://").ok_or_else(|| {
        anyhow::anyhow!("OPENAI_BASE_URL must start with http:// (got {base_url:?})")
    })?;
    let (hostport, prefix) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/').to_string()),
        None => (rest, String::new()),
    };
    let provider = tokio::net::lookup_host(hostport)
        .await?
        .next()
        .ok_or_else(|| anyhow::anyhow!("cannot resolve {hostport}"))?;
    let floor = Arc::new(Floor {
        opts,
        gate: opts
            .max_turns_in_flight
            .map(|n| tokio::sync::Semaphore::new(n.max(1))),
        provider,
        prefix,
        model: model.to_string(),
        sessions: Mutex::new(HashMap::new()),
        leaked: Mutex::new(Vec::new()),
    });
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("floor listening on http://{}", listener.local_addr()?);
    loop {
        let (tcp, _) = match listener.accept().await {
            Ok(x) => x,
            Err(_) => continue,
        };
        let _ = tcp.set_nodelay(true);
        let floor = floor.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| handle(floor.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), svc)
                .await;
        });
    }
}

fn reply(status: u16, body: Value) -> Result<Response<Full<Bytes>>, std::convert::Infallible> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(r)
}

async fn handle(
    floor: Arc<Floor>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, std::convert::Infallible> {
    match (req.method().as_str(), req.uri().path()) {
        ("GET", "/health") => reply(200, json!({"status": "ok"})),
        ("POST", "/turn") => {
            let body = match req.into_body().collect().await {
                Ok(b) => b.to_bytes(),
                Err(e) => return reply(400, json!({"error": e.to_string()})),
            };
            let Ok(v) = serde_json::from_slice::<Value>(&body) else {
                return reply(
                    400,
                    json!({"error": "body must be JSON {\"session\", \"message\"}"}),
                );
            };
            let (Some(id), Some(text)) = (v["session"].as_str(), v["message"].as_str()) else {
                return reply(400, json!({"error": "session and message must be strings"}));
            };
            match turn(&floor, id, text).await {
                Ok((text, calls)) => reply(200, json!({"reply": text, "llm_calls": calls})),
                Err(e) => reply(502, json!({"error": e.to_string()})),
            }
        }
        ("DELETE", path) if path.starts_with("/session/") => {
            let id = &path["/session/".len()..];
            let gone = floor
                .sessions
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(id)
                .is_some();
            match gone {
                true => reply(204, json!({})),
                false => reply(404, json!({"error": format!("no session {id}")})),
            }
        }
        _ => reply(
            404,
            json!({"error": "POST /turn, DELETE /session/ID or GET /health"}),
        ),
    }
}

/// How long to wait before retry `n` (0-based): what the provider asked for, else an
/// exponential backoff from 0.5 s (capped at 8 s), as the official SDKs do.
fn retry_wait(headers: Option<&hyper::HeaderMap>, n: u32) -> std::time::Duration {
    use std::time::Duration;
    let get = |k: &str| {
        headers?
            .get(k)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|x| *x > 0.0 && *x <= 60_000.0)
    };
    if let Some(ms) = get("retry-after-ms") {
        return Duration::from_secs_f64(ms / 1000.0);
    }
    if let Some(s) = get("retry-after").filter(|s| *s <= 60.0) {
        return Duration::from_secs_f64(s);
    }
    Duration::from_secs_f64((0.5 * 2f64.powi(n as i32)).min(8.0))
}

/// One LLM call, retried when the provider refuses it or the connection drops.
async fn call(conn: &mut Conn, path: &str, body: String, retries: u32) -> anyhow::Result<Vec<u8>> {
    let headers = [("content-type".to_string(), "application/json".to_string())];
    let mut n = 0;
    loop {
        let mut out = Vec::new();
        let sent = conn
            .request("POST", path, &headers, Bytes::from(body.clone()), |_, d| {
                out.extend_from_slice(d);
                true
            })
            .await;
        let (status, h) = match sent {
            Ok((200, _)) => return Ok(out),
            Ok((status, h)) if status == 429 || status >= 500 => (status, h),
            Ok((status, _)) => anyhow::bail!(
                "provider answered {status}: {}",
                String::from_utf8_lossy(&out)
            ),
            Err(_) if n < retries => {
                *conn = Conn::new(conn.addr());
                tokio::time::sleep(retry_wait(None, n)).await;
                n += 1;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        if n >= retries {
            anyhow::bail!(
                "provider answered {status} (after {n} retries): {}",
                String::from_utf8_lossy(&out)
            );
        }
        tokio::time::sleep(retry_wait(Some(&h), n)).await;
        n += 1;
    }
}

/// Burns `ms` of this thread's CPU time (not wall time: a throttled thread takes longer).
fn burn_cpu(ms: f64) {
    let now = || {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the timespec it is given.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        t.tv_sec as f64 * 1000.0 + t.tv_nsec as f64 / 1e6
    };
    let end = now() + ms;
    let mut x = 0u64;
    while now() < end {
        for i in 0..1000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
    }
}

/// `ms` of CPU work: on the serving thread itself with `on_the_loop`, else on the blocking
/// pool (as a well-behaved async service does).
async fn work(opts: &Options, ms: f64) -> anyhow::Result<()> {
    if opts.on_the_loop {
        burn_cpu(ms);
    } else {
        tokio::task::spawn_blocking(move || burn_cpu(ms)).await?;
    }
    Ok(())
}

async fn turn(floor: &Floor, id: &str, text: &str) -> anyhow::Result<(String, u32)> {
    let _permit = match &floor.gate {
        Some(g) => Some(g.acquire().await?),
        None => None,
    };
    let session = {
        let mut all = floor.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if floor.opts.thread_per_session && !all.contains_key(id) {
            // The costly design compare must be able to tell apart: a thread per session.
            std::thread::spawn(|| loop {
                std::thread::park();
            });
        }
        if floor.opts.thread_per_turn {
            // A thread per request, never ended: threads grow with every turn served.
            std::thread::spawn(|| loop {
                std::thread::park();
            });
        }
        if floor.opts.leak_kb_per_session > 0 && !all.contains_key(id) {
            // Every page written, so it counts in RSS at once.
            let kept = vec![1u8; floor.opts.leak_kb_per_session * 1024];
            floor
                .leaked
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(kept);
        }
        all.entry(id.to_string()).or_default().clone()
    };
    let mut s = session.lock().await;
    if s.messages.is_empty() && floor.opts.cold_start_ms > 0.0 {
        work(&floor.opts, floor.opts.cold_start_ms).await?;
    }
    s.messages.push(json!({"role": "user", "content": text}));
    let mut conn = Conn::new(floor.provider);
    let path = format!("{}/chat/completions", floor.prefix);
    for calls in 1..=32u32 {
        let body = json!({"model": floor.model, "messages": s.messages, "tools": tools()});
        let out = call(&mut conn, &path, body.to_string(), floor.opts.max_retries).await?;
        let v: Value = serde_json::from_slice(&out)?;
        if floor.opts.cpu_ms_per_call > 0.0 {
            work(&floor.opts, floor.opts.cpu_ms_per_call).await?;
        }
        let msg = v["choices"][0]["message"].clone();
        let Some(call) = msg["tool_calls"]
            .as_array()
            .and_then(|c| c.first())
            .cloned()
        else {
            let text = msg["content"].as_str().unwrap_or("").to_string();
            s.messages
                .push(json!({"role": "assistant", "content": text}));
            return Ok((text, calls));
        };
        let args: Value =
            serde_json::from_str(call["function"]["arguments"].as_str().unwrap_or("{}"))
                .unwrap_or(json!({}));
        let key = args["key"].as_str().unwrap_or("").to_string();
        let result = match call["function"]["name"].as_str().unwrap_or("") {
            "memory_set" => {
                s.store
                    .insert(key, args["value"].as_str().unwrap_or("").to_string());
                "stored".to_string()
            }
            "memory_get" => s.store.get(&key).cloned().unwrap_or_default(),
            _ => "ok".to_string(),
        };
        s.messages
            .push(json!({"role": "assistant", "content": null, "tool_calls": [call.clone()]}));
        s.messages
            .push(json!({"role": "tool", "tool_call_id": call["id"], "content": result}));
    }
    anyhow::bail!("the model kept calling tools for 32 rounds")
}
