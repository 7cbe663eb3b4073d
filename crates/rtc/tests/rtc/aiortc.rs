//! The wire against a real aiortc peer (tests/conformance/aiortc_echo.py, the stack under
//! Pipecat's SmallWebRTC): a call placed both ways a bot takes one, a tone sent in 20 ms
//! Opus frames on the real-time clock and heard back; and the answers a caller must refuse
//! in one line. Needs the project's venv with aiortc (./scripts/test makes it); without it
//! the test says so and checks nothing.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Peer(Child, u16);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn python() -> Option<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let py = std::env::var("PLIMSOLL_PYTHON").unwrap_or(format!("{root}/.venv/bin/python"));
    let ok = Command::new(&py)
        .args(["-c", "import aiortc, aiohttp"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(py)
}

fn peer(py: &str, mode: &str) -> Peer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/conformance/aiortc_echo.py"
    );
    let peer = Peer(
        Command::new(py)
            .arg(script)
            .args(["--port", &port.to_string(), "--mode", mode])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
        port,
    );
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return peer;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the aiortc peer never listened on {port}");
}

fn place(how: rtc::Signaling, url: &str) -> rtc::Place<'_> {
    rtc::Place {
        how,
        url,
        headers: &[],
        rate: 24000,
        frame: Duration::from_millis(20),
        connect_timeout: Duration::from_secs(10),
        livekit: None,
        decoding: decoding(),
    }
}

/// The test process's decoding lanes.
fn decoding() -> &'static rtc::Decoding {
    static D: std::sync::OnceLock<rtc::Decoding> = std::sync::OnceLock::new();
    D.get_or_init(|| rtc::Decoding::new("t-opus", 2))
}

/// A second of tone, then a second of silence, on the clock; the loudest sample heard back.
async fn talk(line: &mut rtc::Line) -> f32 {
    let tone: Vec<f32> = (0..480).map(|i| (i as f32 * 0.13).sin() * 0.5).collect();
    let tone = rtc::encode(&tone, 24000, Duration::from_millis(20))
        .unwrap()
        .remove(0);
    let quiet = rtc::silence(24000, Duration::from_millis(20)).unwrap();
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    let mut loudest = 0.0f32;
    for i in 0..100 {
        tick.tick().await;
        let frame = if i < 50 { tone.clone() } else { quiet.clone() };
        line.frames.send((frame, i * 20)).await.unwrap();
        while let Ok(a) = line.heard.try_recv() {
            match a {
                rtc::Audio::Samples(s, _) => {
                    loudest = s.iter().fold(loudest, |m, x| m.max(x.abs()))
                }
                rtc::Audio::Ended(e) => panic!("the call ended: {e}"),
            }
        }
    }
    loudest
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_to_aiortc_is_heard_back_over_both_signalings() {
    let Some(py) = python() else {
        eprintln!("skipped: no venv with aiortc (./scripts/test makes .venv)");
        return;
    };
    let p = peer(&py, "echo");
    for (how, path) in [
        (rtc::Signaling::Pipecat, "/api/offer"),
        (rtc::Signaling::Whip, "/whip"),
    ] {
        let url = format!("http://127.0.0.1:{}{path}", p.1);
        let (mut line, setup) = rtc::open(&place(how, &url)).await.unwrap();
        assert!(
            setup.signaling > Duration::ZERO && setup.dtls > Duration::ZERO,
            "{setup:?}"
        );
        let loudest = talk(&mut line).await;
        assert!(loudest > 0.2, "{how:?}: the tone came back at {loudest}");
        let st = *line.stats.lock().unwrap();
        assert!(st.packets >= 40, "{how:?}: {st:?}");
        assert!(st.lost <= 2, "{how:?}: {st:?}");
        line.hang_up().await;
    }
    // Hung up, the bot was told (RTCP BYE, DTLS close_notify): no peer left open there.
    let open = || {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", p.1)).unwrap();
        use std::io::{Read, Write};
        write!(
            s,
            "GET /peers HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text.contains("\"open\": 0")
    };
    let mut closed = false;
    for _ in 0..30 {
        closed = open();
        if closed {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        closed,
        "the aiortc peer still holds a call after both hung up"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_a_caller_cannot_use_are_refused_in_one_line() {
    let Some(py) = python() else {
        eprintln!("skipped: no venv with aiortc (./scripts/test makes .venv)");
        return;
    };
    for (mode, says) in [
        ("video", "no Opus audio track"),
        ("garbage", "does not parse"),
    ] {
        let p = peer(&py, mode);
        let url = format!("http://127.0.0.1:{}/api/offer", p.1);
        let e = rtc::open(&place(rtc::Signaling::Pipecat, &url))
            .await
            .err()
            .unwrap();
        assert!(e.message.contains(says), "{mode}: {e}");
        assert!(!e.message.contains('\n'), "{mode}: {e}");
    }
    let p = peer(&py, "echo");
    let url = format!("http://127.0.0.1:{}/nowhere", p.1);
    let e = rtc::open(&place(rtc::Signaling::Pipecat, &url))
        .await
        .err()
        .unwrap();
    assert!(e.message.contains("answered 404"), "{e}");
    // A bot that connects and sends nothing: the call is up, and hears silence.
    let p = peer(&py, "silent");
    let url = format!("http://127.0.0.1:{}/api/offer", p.1);
    let (mut line, _) = rtc::open(&place(rtc::Signaling::Pipecat, &url))
        .await
        .unwrap();
    assert_eq!(talk(&mut line).await, 0.0);
    assert_eq!(line.stats.lock().unwrap().packets, 0);
    line.hang_up().await;
}
