//! `GET /metrics`: the mock's counters in Prometheus text format, written from one table
//! of metrics (name, type, help, and how to read its samples from the mock's state).
//!
//! What is counted is the server's stats, the ledger's totals and the pushback's state;
//! this module only reads them.

use crate::failures::rates::Injected;
use crate::ledger::{ProviderSummary, Totals};
use crate::serve::app::App;
use crate::serve::stats::TimingSnapshot;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use std::fmt::Write;
use std::sync::Arc;

/// What the metrics are read from, taken once per scrape.
struct Readings {
    t: TimingSnapshot,
    l: Totals,
    refused: [(&'static str, u64); 5],
    /// The pushback's state, when any limit was ever set.
    p: Option<ProviderSummary>,
}

/// One sample: what follows the metric's name (its labels, or nothing) and its value.
type Sample = (String, f64);

/// One metric of the table.
struct Metric {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    /// Its samples; `None`: the metric is not written (a provider without limits).
    samples: fn(&Readings) -> Option<Vec<Sample>>,
    /// A summary's `_count`, written after its quantiles.
    count: Option<fn(&Readings) -> u64>,
}

fn one(v: f64) -> Option<Vec<Sample>> {
    Some(vec![(String::new(), v)])
}

/// A summary's median, 99th percentile and maximum, in seconds.
fn quantiles(p50_ms: f64, p99_ms: f64, max_ms: f64) -> Option<Vec<Sample>> {
    Some(vec![
        ("{quantile=\"0.5\"}".to_string(), p50_ms / 1000.0),
        ("{quantile=\"0.99\"}".to_string(), p99_ms / 1000.0),
        ("{quantile=\"1\"}".to_string(), max_ms / 1000.0),
    ])
}

fn injected(r: &Readings) -> Option<Vec<Sample>> {
    let kind = |k: &Injected| format!("{{kind=\"{}\"}}", k.name());
    Some(
        Injected::ALL
            .iter()
            .map(|k| (kind(k), r.l.injected_failures.of(*k) as f64))
            .collect(),
    )
}

fn violations(r: &Readings) -> Option<Vec<Sample>> {
    let mut kinds: Vec<Sample> = ["echo", "isolation", "history"]
        .iter()
        .map(|k| {
            let n = *r.l.violations_by_kind.get(*k).unwrap_or(&0);
            (format!("{{kind=\"{k}\"}}"), n as f64)
        })
        .collect();
    kinds.push((String::new(), r.l.integrity_violations as f64));
    Some(kinds)
}

fn refused(r: &Readings) -> Option<Vec<Sample>> {
    let reason = |r: &str| format!("{{reason=\"{r}\"}}");
    Some(
        r.refused
            .iter()
            .map(|(k, n)| (reason(k), *n as f64))
            .collect(),
    )
}

fn queue_wait(r: &Readings) -> Option<Vec<Sample>> {
    let w = r.p.as_ref()?.queue_wait_ms;
    quantiles(w.p50, w.p99, w.max)
}

fn key_usage(r: &Readings) -> Option<Vec<Sample>> {
    let samples = r.p.as_ref()?.keys.iter().flat_map(|(k, u)| {
        [
            ("requests", u.requests),
            ("input_tokens", u.input_tokens),
            ("output_tokens", u.output_tokens),
            ("refused", u.refused),
        ]
        .map(|(what, n)| {
            (
                format!("{{key=\"{}\",what=\"{what}\"}}", k.replace('"', "'")),
                n as f64,
            )
        })
    });
    Some(samples.collect())
}

const METRICS: &[Metric] = &[
    Metric {
        name: "plimsoll_mock_requests_total",
        kind: "counter",
        help: "API requests received.",
        samples: |r| one(r.t.requests as f64),
        count: None,
    },
    Metric {
        name: "plimsoll_mock_errors_total",
        kind: "counter",
        help: "Requests answered with an error (bad input or injected).",
        samples: |r| one(r.t.errors as f64),
        count: None,
    },
    Metric {
        name: "plimsoll_mock_streams_total",
        kind: "counter",
        help: "Streaming responses started.",
        samples: |r| one(r.t.streams_total as f64),
        count: None,
    },
    Metric {
        name: "plimsoll_mock_streams_open",
        kind: "gauge",
        help: "Streaming responses open now.",
        samples: |r| one(r.t.streams_open as f64),
        count: None,
    },
    Metric {
        name: "plimsoll_mock_prompt_tokens_total",
        kind: "counter",
        help: "Prompt tokens received (approximate count).",
        samples: |r| one(r.t.prompt_tokens as f64),
        count: None,
    },
    Metric {
        name: "plimsoll_mock_output_tokens_total",
        kind: "counter",
        help: "Output tokens sent.",
        samples: |r| one(r.t.output_tokens as f64),
        count: None,
    },
    Metric {
        name: "plimsoll_mock_sessions",
        kind: "gauge",
        help: "Sessions seen (anonymous requests count as one).",
        samples: |r| one(r.l.sessions as f64),
        count: None,
    },
    Metric {
        name: "plimsoll_mock_retries_total",
        kind: "counter",
        help: "Requests that resent a conversation already seen.",
        samples: |r| one(r.l.retries as f64),
        count: None,
    },
    Metric {
        name: "plimsoll_mock_injected_failures_total",
        kind: "counter",
        help: "Failures injected, by kind.",
        samples: injected,
        count: None,
    },
    Metric {
        name: "plimsoll_mock_integrity_violations_total",
        kind: "counter",
        help: "Integrity violations found by the oracle (no label: all kinds).",
        samples: violations,
        count: None,
    },
    Metric {
        name: "plimsoll_mock_refused_total",
        kind: "counter",
        help: "Requests the provider's quotas (429) or full queue (529/503) refused, by reason.",
        samples: refused,
        count: None,
    },
    Metric {
        name: "plimsoll_mock_in_flight",
        kind: "gauge",
        help: "Replies being generated now (counted while any limit is set).",
        samples: |r| one(r.p.as_ref()?.in_flight as f64),
        count: None,
    },
    Metric {
        name: "plimsoll_mock_queued",
        kind: "gauge",
        help: "Requests waiting for a generation slot now.",
        samples: |r| one(r.p.as_ref()?.queued as f64),
        count: None,
    },
    Metric {
        name: "plimsoll_mock_queue_wait_seconds",
        kind: "summary",
        help: "Time requests waited for a generation slot.",
        samples: queue_wait,
        count: None,
    },
    Metric {
        name: "plimsoll_mock_key_usage_total",
        kind: "counter",
        help: "Per API key: requests and tokens let through, and requests refused.",
        samples: key_usage,
        count: None,
    },
    Metric {
        name: "plimsoll_mock_audio_seconds_total",
        kind: "counter",
        help: "Seconds of audio the audio APIs heard (transcriptions, Realtime input) and spoke (speech, Realtime output).",
        samples: |r| {
            let v = r.l.voice;
            Some(vec![
                ("{direction=\"heard\"}".into(), v.heard_s),
                ("{direction=\"spoken\"}".into(), v.spoken_s),
            ])
        },
        count: None,
    },
    Metric {
        name: "plimsoll_mock_audio_calls_total",
        kind: "counter",
        help: "Audio API calls: transcriptions, speech requests, Realtime responses; and audio heard with no words in it.",
        samples: |r| {
            let v = r.l.voice;
            Some(vec![
                ("{api=\"transcriptions\"}".into(), v.stt_calls as f64),
                ("{api=\"speech\"}".into(), v.tts_calls as f64),
                ("{api=\"realtime\"}".into(), v.realtime_responses as f64),
                ("{api=\"unheard\"}".into(), v.unheard as f64),
            ])
        },
        count: None,
    },
    Metric {
        name: "plimsoll_mock_audio_latency_seconds_total",
        kind: "counter",
        help: "Summed latencies: transcriptions' scheduled latency, speech's time to first byte, Realtime responses' time to their first audio (divide by plimsoll_mock_audio_calls_total for the mean).",
        samples: |r| {
            let v = r.l.voice;
            Some(vec![
                ("{api=\"transcriptions\"}".into(), v.stt_ms / 1000.0),
                ("{api=\"speech\"}".into(), v.tts_first_byte_ms / 1000.0),
                ("{api=\"realtime\"}".into(), v.realtime_response_ms / 1000.0),
            ])
        },
        count: None,
    },
    Metric {
        name: "plimsoll_mock_audio_frame_lateness_seconds",
        kind: "summary",
        help: "How late audio frames (speech chunks, Realtime audio deltas) left against their deadlines.",
        samples: |r| quantiles(r.t.audio_late_p50_ms, r.t.audio_late_p99_ms, r.t.audio_late_max_ms),
        count: Some(|r| r.t.audio_frames),
    },
    Metric {
        name: "plimsoll_mock_frame_lateness_seconds",
        kind: "summary",
        help: "How late frames left against their deadlines.",
        samples: |r| quantiles(r.t.late_p50_ms, r.t.late_p99_ms, r.t.late_max_ms),
        count: Some(|r| r.t.frames),
    },
];

pub async fn render(State(app): State<Arc<App>>) -> impl IntoResponse {
    let r = Readings {
        t: app.stats.snapshot(),
        l: app.ledger.totals(),
        refused: app.pushback.refused_counts(),
        p: app.pushback.summary(),
    };
    let mut out = String::with_capacity(2048);
    for m in METRICS {
        let Some(samples) = (m.samples)(&r) else {
            continue;
        };
        let _ = writeln!(
            out,
            "# HELP {} {}\n# TYPE {} {}",
            m.name, m.help, m.name, m.kind
        );
        for (labels, v) in samples {
            let _ = writeln!(out, "{}{labels} {v}", m.name);
        }
        if let Some(count) = m.count {
            let _ = writeln!(out, "{}_count {}", m.name, count(&r));
        }
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out)
}
