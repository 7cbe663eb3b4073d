//! The driver against small real servers on 127.0.0.1: WebSocket turns, HTTP checks,
//! failures classified.

use crate::common;
use drive::{drive, DriveOptions, Progress, SessionSpec};
use futures_util::{SinkExt, StreamExt};
use std::sync::Arc;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

/// A WebSocket agent: for every text message, a delta event then a done event that
/// echoes the message.
async fn ws_server() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else {
                    return;
                };
                while let Some(Ok(Message::Text(t))) = ws.next().await {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    let _ = ws
                        .send(Message::text(r#"{"type":"delta","text":"thinking"}"#))
                        .await;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    let done =
                        serde_json::json!({"type": "done", "reply": format!("got {}", t.as_str())});
                    let _ = ws.send(Message::text(done.to_string())).await;
                }
            });
        }
    });
    addr
}

fn opts(addr: std::net::SocketAddr, c: usize) -> DriveOptions {
    common::options(format!("http://{addr}"), c)
}

#[tokio::test]
async fn websocket_sessions_run_their_turns() {
    let addr = ws_server().await;
    let spec = SessionSpec::parse(
        r#"
protocol = "ws"
url = "{{ws_base}}/chat"
turns = 3
body = '{"text": "turn {{turn}} of {{session}}"}'
ws_done_pointer = "/type"
ws_done_equals = "done"
[[check]]
pointer = "/reply"
contains = "turn"
"#,
        "session.toml",
    )
    .unwrap();
    let r = drive(&spec, &opts(addr, 25), Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!(
        (r.sessions_ok, r.sessions_failed, r.turns),
        (25, 0, 75),
        "{:?}",
        r.first_errors
    );
    // First event after ~20 ms, whole turn after ~40 ms.
    assert!(
        r.ttft_us.value_at_quantile(0.5) >= 19_000,
        "{}",
        r.ttft_us.value_at_quantile(0.5)
    );
    assert!(r.turn_us.value_at_quantile(0.5) >= 39_000);
    assert!(r.session_us.value_at_quantile(0.5) >= 3 * 39_000);
}

#[tokio::test]
async fn failures_are_classified() {
    let addr = ws_server().await;
    // A check that can never pass: every session fails on its first turn.
    let spec = SessionSpec::parse(
        "protocol = \"ws\"\nurl = \"{{ws_base}}/x\"\nws_done_pointer = \"/type\"\nws_done_equals = \"done\"\n[[check]]\npointer = \"/reply\"\nequals = \"nope\"\n",
        "s.toml",
    )
    .unwrap();
    let r = drive(&spec, &opts(addr, 5), Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!((r.sessions_ok, r.sessions_failed), (0, 5));
    assert_eq!(r.errors_by_kind.get("check_failed"), Some(&5));
    // Nothing listens on this port: connect errors.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let spec = SessionSpec::parse("url = \"{{base}}/turn\"\n", "s.toml").unwrap();
    let r = drive(&spec, &opts(dead, 3), Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!(r.errors_by_kind.get("connect"), Some(&3));
}

/// Open model: 30 sessions arriving at 100/s against a server that takes 40 ms per
/// turn. Arrivals are spread over ~0.29 s, so far fewer than 30 run at once.
#[tokio::test]
async fn open_model_spreads_arrivals() {
    let addr = ws_server().await;
    let spec = SessionSpec::parse(
        "protocol = \"ws\"\nurl = \"{{ws_base}}/x\"\nturns = 1\nws_done_pointer = \"/type\"\nws_done_equals = \"done\"\n",
        "s.toml",
    )
    .unwrap();
    let mut o = opts(addr, 30);
    o.arrival_rate = Some(100.0);
    let r = drive(&spec, &o, Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!(r.sessions_ok, 30);
    assert!(r.wall_ms >= 290.0 + 40.0, "{}", r.wall_ms);
    // ~4 in flight on a quiet machine (40 ms turns, 10 ms apart). A driver that ignores the
    // rate starts all 30 at once; a slow day only stretches each session (and a stall
    // bunches a few arrivals), so the ceiling sits between the two, not at a busy 10.
    assert!(
        r.peak_in_flight >= 3 && r.peak_in_flight <= 20,
        "{}",
        r.peak_in_flight
    );
    // Every session's latency counts from its intended start: at least one turn.
    assert!(r.session_us.min() >= 39_000);
}

/// Slow consumers over WebSocket: every second session reads its messages at 200 B/s.
/// Its turn (two messages, ~100 bytes) takes about half a second; the others ~40 ms, and
/// the step's own session times hold only the others.
#[tokio::test]
async fn slow_websocket_readers_are_paced_and_kept_apart() {
    let addr = ws_server().await;
    let spec = SessionSpec::parse(
        "protocol = \"ws\"\nurl = \"{{ws_base}}/x\"\nturns = 1\nws_done_pointer = \"/type\"\nws_done_equals = \"done\"\n",
        "s.toml",
    )
    .unwrap();
    let mut o = opts(addr, 4);
    o.slow = Some((0.5, 200.0));
    let r = drive(&spec, &o, Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!(
        (
            r.sessions_ok,
            r.session_slow_us.len(),
            r.session_others_us.len()
        ),
        (4, 2, 2)
    );
    assert!(
        r.session_slow_us.min() >= 350_000,
        "{}",
        r.session_slow_us.min()
    );
    // The others take ~40 ms; a slow reader's session is held to >= 350 ms above. The
    // ceiling is that floor: a slow session counted among the others crosses it, a busy
    // machine's ~40 ms session would have to be 9 times slower.
    assert!(
        r.session_others_us.max() < 350_000,
        "{}",
        r.session_others_us.max()
    );
    assert!(
        r.session_us.max() < 350_000,
        "the slow ones stay out of the step's own times"
    );
}
