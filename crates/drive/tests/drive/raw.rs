//! Raw socket sessions against small servers: a length-prefixed MessagePack RPC server
//! over TCP, a line server over a Unix socket, and one that hangs up.

use crate::common;
use drive::{drive, DriveOptions, Progress, SessionSpec};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

fn opts(c: usize) -> DriveOptions {
    common::options("http://127.0.0.1:9".into(), c)
}

/// Reads a u32-prefixed MessagePack map, answers {"op", "echo": its value, "n": calls}.
async fn rpc_server() -> std::net::SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let mut n = 0;
                while let Ok(len) = s.read_u32().await {
                    let mut buf = vec![0; len as usize];
                    s.read_exact(&mut buf).await.unwrap();
                    let req: serde_json::Value = rmp_serde::from_slice(&buf).unwrap();
                    n += 1;
                    let reply = serde_json::json!({"op": req["op"], "echo": req["value"], "n": n});
                    let out = rmp_serde::to_vec_named(&reply).unwrap();
                    s.write_u32(out.len() as u32).await.unwrap();
                    s.write_all(&out).await.unwrap();
                }
            });
        }
    });
    addr
}

#[tokio::test]
async fn length_prefixed_messagepack_rpc_over_tcp() {
    let addr = rpc_server().await;
    let spec = SessionSpec::parse(
        &format!(
            r#"
protocol = "tcp"
url = "tcp://{addr}"
framing = "u32"
encoding = "msgpack"
turns = 3
body = '{{"op": "put", "value": "{{{{nonce}}}}-{{{{turn}}}}"}}'
[[check]]
pointer = "/echo"
contains = "psn"
[extract]
calls = "/n"
"#
        ),
        "session.toml",
    )
    .unwrap();
    let r = drive(&spec, &opts(10), Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!(
        (r.sessions_ok, r.sessions_failed, r.turns),
        (10, 0, 30),
        "{:?}",
        r.first_errors
    );
    assert!(r.turn_us.value_at_quantile(0.99) > 0);
}

#[tokio::test]
async fn line_framed_text_over_a_unix_socket_and_a_hang_up_is_an_error() {
    let dir = std::env::temp_dir().join(format!("plimsoll-raw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.sock");
    let l = tokio::net::UnixListener::bind(&path).unwrap();
    tokio::spawn(async move {
        while let Ok((s, _)) = l.accept().await {
            tokio::spawn(async move {
                let (r, mut w) = s.into_split();
                let mut lines = BufReader::new(r).lines();
                let mut n = 0;
                while let Ok(Some(line)) = lines.next_line().await {
                    n += 1;
                    if line.starts_with("QUIT") || n > 2 {
                        return; // hangs up instead of answering
                    }
                    w.write_all(format!("{{\"said\": \"{line}\"}}\n").as_bytes())
                        .await
                        .unwrap();
                }
            });
        }
    });
    let session = |turns: u32| {
        SessionSpec::parse(
            &format!(
                "protocol = \"unix\"\nurl = \"unix://{}\"\nturns = {turns}\nbody = \"HELLO {{{{session}}}}\"\n[[check]]\npointer = \"/said\"\ncontains = \"HELLO\"\n",
                path.display()
            ),
            "session.toml",
        )
        .unwrap()
    };
    let ok = drive(&session(2), &opts(5), Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!((ok.sessions_ok, ok.turns), (5, 10), "{:?}", ok.first_errors);
    let cut = drive(&session(3), &opts(5), Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!(cut.sessions_failed, 5);
    assert!(
        cut.first_errors["closed"].contains("closed the connection"),
        "{:?}",
        cut.first_errors
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn raw_session_mistakes_are_named() {
    let e = SessionSpec::parse("protocol = \"tcp\"\nurl = \"http://x\"\n", "s.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("tcp://HOST:PORT"), "{e}");
    let e = SessionSpec::parse(
        "protocol = \"tcp\"\nurl = \"tcp://127.0.0.1:1\"\nframing = \"crlf\"\n",
        "s.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("s.toml:3:") && e.contains("\"u32\""), "{e}");
    let e = SessionSpec::parse(
        "url = \"http://127.0.0.1:1/x\"\nencoding = \"msgpack\"\n",
        "s.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("apply to protocol = \"tcp\""), "{e}");
}

#[tokio::test]
async fn nul_framed_frames_as_stomp_sends_them() {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((s, _)) = l.accept().await {
            tokio::spawn(async move {
                let (r, mut w) = s.into_split();
                let mut r = BufReader::new(r);
                let mut frame = Vec::new();
                while r.read_until(0, &mut frame).await.unwrap_or(0) > 0 {
                    frame.pop();
                    let body = String::from_utf8_lossy(&frame).replace('\n', " ");
                    w.write_all(format!("{{\"frame\": \"{body}\"}}\0").as_bytes())
                        .await
                        .unwrap();
                    frame.clear();
                }
            });
        }
    });
    let spec = SessionSpec::parse(
        &format!(
            "protocol = \"tcp\"\nurl = \"tcp://{addr}\"\nframing = \"nul\"\nturns = 2\nbody = \"SEND\\ndestination:/q\\n\\n{{{{nonce}}}}\"\n[[check]]\npointer = \"/frame\"\ncontains = \"destination:/q\"\n"
        ),
        "session.toml",
    )
    .unwrap();
    let r = drive(&spec, &opts(4), Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!((r.sessions_ok, r.turns), (4, 8), "{:?}", r.first_errors);
}
