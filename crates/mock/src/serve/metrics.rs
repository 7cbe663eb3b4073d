//! `GET /metrics`: the mock's counters in Prometheus text format.

use crate::failures::rates::Injected;
use crate::serve::app::App;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use std::fmt::Write;
use std::sync::Arc;

pub async fn render(State(app): State<Arc<App>>) -> impl IntoResponse {
    let t = app.stats.snapshot();
    let l = app.ledger.totals();
    let (violations, by_kind) = app.ledger.violation_counts();
    let mut out = String::with_capacity(2048);
    let mut metric = |name: &str, kind: &str, help: &str, rows: &[(String, f64)]| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, v) in rows {
            let _ = writeln!(out, "{name}{labels} {v}");
        }
    };
    let one = |v: f64| vec![(String::new(), v)];
    metric(
        "plimsoll_mock_requests_total",
        "counter",
        "API requests received.",
        &one(t.requests as f64),
    );
    metric(
        "plimsoll_mock_errors_total",
        "counter",
        "Requests answered with an error (bad input or injected).",
        &one(t.errors as f64),
    );
    metric(
        "plimsoll_mock_streams_total",
        "counter",
        "Streaming responses started.",
        &one(t.streams_total as f64),
    );
    metric(
        "plimsoll_mock_streams_open",
        "gauge",
        "Streaming responses open now.",
        &one(t.streams_open as f64),
    );
    metric(
        "plimsoll_mock_prompt_tokens_total",
        "counter",
        "Prompt tokens received (approximate count).",
        &one(t.prompt_tokens as f64),
    );
    metric(
        "plimsoll_mock_output_tokens_total",
        "counter",
        "Output tokens sent.",
        &one(t.output_tokens as f64),
    );
    metric(
        "plimsoll_mock_sessions",
        "gauge",
        "Sessions seen (anonymous requests count as one).",
        &one(l.sessions as f64),
    );
    metric(
        "plimsoll_mock_retries_total",
        "counter",
        "Requests that resent a conversation already seen.",
        &one(l.retries as f64),
    );
    let injected: Vec<(String, f64)> = Injected::ALL
        .iter()
        .map(|k| {
            (
                format!("{{kind=\"{}\"}}", k.name()),
                l.injected[*k as usize] as f64,
            )
        })
        .collect();
    metric(
        "plimsoll_mock_injected_failures_total",
        "counter",
        "Failures injected, by kind.",
        &injected,
    );
    let mut kinds: Vec<(String, f64)> = ["echo", "isolation", "history"]
        .iter()
        .map(|k| {
            (
                format!("{{kind=\"{k}\"}}"),
                *by_kind.get(k).unwrap_or(&0) as f64,
            )
        })
        .collect();
    kinds.push((String::new(), violations as f64));
    metric(
        "plimsoll_mock_integrity_violations_total",
        "counter",
        "Integrity violations found by the oracle (no label: all kinds).",
        &kinds,
    );
    let refused: Vec<(String, f64)> = app
        .pushback
        .refused_counts()
        .iter()
        .map(|(r, n)| (format!("{{reason=\"{r}\"}}"), *n as f64))
        .collect();
    metric(
        "plimsoll_mock_refused_total",
        "counter",
        "Requests the provider's quotas (429) or full queue (529/503) refused, by reason.",
        &refused,
    );
    if let Some(p) = app.pushback.snapshot() {
        let n = |k: &str| p[k].as_f64().unwrap_or(0.0);
        metric(
            "plimsoll_mock_in_flight",
            "gauge",
            "Replies being generated now (counted while any limit is set).",
            &one(n("in_flight")),
        );
        metric(
            "plimsoll_mock_queued",
            "gauge",
            "Requests waiting for a generation slot now.",
            &one(n("queued")),
        );
        let w = &p["queue_wait_ms"];
        let q = |k: &str| w[k].as_f64().unwrap_or(0.0) / 1000.0;
        metric(
            "plimsoll_mock_queue_wait_seconds",
            "summary",
            "Time requests waited for a generation slot.",
            &[
                ("{quantile=\"0.5\"}".to_string(), q("p50")),
                ("{quantile=\"0.99\"}".to_string(), q("p99")),
                ("{quantile=\"1\"}".to_string(), q("max")),
            ],
        );
        let keys: Vec<(String, f64)> = p["keys"]
            .as_object()
            .into_iter()
            .flatten()
            .flat_map(|(k, u)| {
                ["requests", "input_tokens", "output_tokens", "refused"].map(|what| {
                    (
                        format!("{{key=\"{}\",what=\"{what}\"}}", k.replace('"', "'")),
                        u[what].as_f64().unwrap_or(0.0),
                    )
                })
            })
            .collect();
        metric(
            "plimsoll_mock_key_usage_total",
            "counter",
            "Per API key: requests and tokens let through, and requests refused.",
            &keys,
        );
    }
    let late = vec![
        ("{quantile=\"0.5\"}".to_string(), t.late_p50_ms / 1000.0),
        ("{quantile=\"0.99\"}".to_string(), t.late_p99_ms / 1000.0),
        ("{quantile=\"1\"}".to_string(), t.late_max_ms / 1000.0),
    ];
    metric(
        "plimsoll_mock_frame_lateness_seconds",
        "summary",
        "How late frames left against their deadlines.",
        &late,
    );
    let _ = writeln!(
        out,
        "plimsoll_mock_frame_lateness_seconds_count {}",
        t.frames
    );
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out)
}
