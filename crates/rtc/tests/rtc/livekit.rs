//! LiveKit as a call's signaling, against a real livekit-server (v1.13.5, built from the Go
//! module proxy by scripts/test, found by `PLIMSOLL_LIVEKIT_SERVER` or on `PATH`): a room
//! made and joined with a token the server accepts, a wrong secret and an absent server
//! each said in one line. Without the server the tests say so and pass.

use rtc::livekit::{enter, Dispatch, Join, Server};
use rtc::{open, Audio, Place, Signaling};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const KEY: &str = "plimsoll";
const SECRET: &str = "a-secret-of-at-least-thirty-two-characters";

fn binary() -> Option<String> {
    if let Ok(p) = std::env::var("PLIMSOLL_LIVEKIT_SERVER") {
        return Some(p);
    }
    let found = Command::new("livekit-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    found.is_ok().then(|| "livekit-server".to_string())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A livekit-server of the test's own on loopback, stopped (by its PID) when dropped.
struct LiveKit {
    child: Child,
    port: u16,
}

impl Drop for LiveKit {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Option<LiveKit> {
    let Some(bin) = binary() else {
        eprintln!(
            "skipped: no livekit-server (scripts/test builds it; or set PLIMSOLL_LIVEKIT_SERVER)"
        );
        return None;
    };
    let (port, tcp, udp) = (free_port(), free_port(), free_port());
    let config = format!(
        "port: {port}\nbind_addresses: [127.0.0.1]\nrtc: {{tcp_port: {tcp}, udp_port: {udp}, node_ip: 127.0.0.1, use_external_ip: false}}\nkeys: {{{KEY}: {SECRET}}}\nlogging: {{level: warn}}\n"
    );
    let child = Command::new(bin)
        .args(["--config-body", &config])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("livekit-server starts");
    let lk = LiveKit { child, port };
    let began = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "livekit-server did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(lk)
}

fn server(port: u16, secret: &str) -> Server {
    Server {
        url: format!("ws://127.0.0.1:{port}"),
        key: KEY.into(),
        secret: secret.into(),
    }
}

#[tokio::test]
async fn a_room_is_made_and_joined_with_a_token_the_server_accepts() {
    let Some(lk) = start() else { return };
    let s = server(lk.port, SECRET);
    let call = enter(
        &s,
        &Dispatch::Automatic,
        "call-1",
        "caller-1",
        Duration::from_secs(10),
    )
    .await
    .expect("joined");
    assert_eq!(call.room, "call-1");
    assert_eq!(call.server_version, "1.13.5");
    call.leave().await;
}

#[tokio::test]
async fn a_wrong_secret_and_an_absent_server_are_each_one_line() {
    let Some(lk) = start() else { return };
    let wrong = server(lk.port, "not-the-secret-not-the-secret-not-it");
    let e = enter(
        &wrong,
        &Dispatch::Automatic,
        "call-2",
        "caller-2",
        Duration::from_secs(10),
    )
    .await
    .err()
    .expect("refused");
    assert!(
        e.message.starts_with("livekit: 401 from ")
            && e.message.contains("the token's key or secret is wrong"),
        "{e}"
    );
    let gone = server(free_port(), SECRET);
    let e = enter(
        &gone,
        &Dispatch::Automatic,
        "call-3",
        "caller-3",
        Duration::from_secs(10),
    )
    .await
    .err()
    .expect("nothing there");
    assert!(
        e.message
            .starts_with("livekit: nothing answers at ws://127.0.0.1:"),
        "{e}"
    );
    assert!(!e.message.contains('\n'), "{e}");
}

fn join(room: &str, who: &str) -> Join {
    Join {
        key: KEY.into(),
        secret: SECRET.into(),
        dispatch: Dispatch::Automatic,
        room: room.into(),
        identity: who.into(),
    }
}

fn call<'a>(url: &'a str, join: &'a Join) -> Place<'a> {
    Place {
        how: Signaling::LiveKit,
        url,
        headers: &[],
        rate: 24000,
        frame: Duration::from_millis(20),
        connect_timeout: Duration::from_secs(10),
        livekit: Some(join),
        decoding: decoding(),
    }
}

/// The test process's decoding lanes.
fn decoding() -> &'static rtc::Decoding {
    static D: std::sync::OnceLock<rtc::Decoding> = std::sync::OnceLock::new();
    D.get_or_init(|| rtc::Decoding::new("t-opus", 2))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_caller_hears_another_s_words_through_the_room() {
    // No agent: a second caller in the room is the listener. Neither call is placed
    // before the other has subscribed to it, so nothing said is lost (the server forwards
    // nothing sent before a subscription).
    let Some(lk) = start() else { return };
    let url = server(lk.port, SECRET).url;
    let (hears, says) = (join("call-4", "listener"), join("call-4", "speaker"));
    // Each is placed once the other has subscribed to it (as a caller waits for its agent).
    let (hears, says) = (call(&url, &hears), call(&url, &says));
    let (listener, speaker) = tokio::join!(open(&hears), open(&says));
    let (mut listener, _) = listener.expect("listener placed");
    let (speaker, setup) = speaker.expect("speaker placed");
    assert!(setup.signaling > Duration::ZERO);
    let said = "Where is my order? It was due on Monday, and the tracking page says nothing.";
    let speech = voice::speak(said, 24000).unwrap();
    let frame = Duration::from_millis(20);
    let words = rtc::encode(&speech, 24000, frame).unwrap();
    let quiet = rtc::silence(24000, frame).unwrap();
    let packets: Vec<Vec<u8>> = std::iter::repeat_n(quiet.clone(), 75)
        .chain(words)
        .chain(std::iter::repeat_n(quiet, 50))
        .collect();
    let sending = tokio::spawn(async move {
        let mut tick = tokio::time::interval(frame);
        for (i, p) in packets.into_iter().enumerate() {
            tick.tick().await;
            if speaker.frames.send((p, i as u64 * 20)).await.is_err() {
                break;
            }
        }
        speaker.hang_up().await;
    });
    let mut heard = Vec::new();
    let until = tokio::time::Instant::now() + Duration::from_secs(12);
    while let Ok(Some(a)) = tokio::time::timeout_at(until, listener.heard.recv()).await {
        match a {
            Audio::Samples(s, _) => heard.extend(s),
            Audio::Ended(e) => panic!("the listener's call ended: {e}"),
        }
        if sending.is_finished() {
            break;
        }
    }
    sending.await.unwrap();
    let packets = listener.stats.lock().unwrap().packets;
    listener.hang_up().await;
    let got = voice::hear(&heard, 24000)
        .unwrap_or_default()
        .to_lowercase();
    assert!(
        got.contains("monday") && got.contains("tracking"),
        "heard {:?} from {packets} packets",
        got
    );
}
