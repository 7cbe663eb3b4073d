//! The mock's MCP server on 127.0.0.1 (port 0) and over an in-memory stdio pipe: every
//! JSON-RPC message kind, both eras of the protocol, the protocol's own errors for
//! malformed and unknown messages, seeded random bytes that never stop it, and the
//! oracle that follows a tool result from the MCP server to the next model call.

use mock::mcp::server::{McpServer, Transport, Via};
use mock::{MockOptions, MockServer, Scenario};
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const SCENARIO: &str = r#"
[defaults]
ttft_ms = 0
tok_ms = 0
output_tokens = 5
[models."agent"]
[[models."agent".script]]
call = "kv_put"
args = { key = "{{session}}/k{{turn}}", value = "{{nonce}}:{{turn}}" }
[[models."agent".script]]
call = "kv_get"
args = { key = "{{session}}/k{{turn}}" }
expect = "{{nonce}}:{{turn}}"
[mcp]
[[mcp.tools]]
name = "kv_put"
result = "kv_put"
[[mcp.tools]]
name = "kv_get"
result = "kv_get"
latency_ms = 30
[[mcp.tools]]
name = "echo"
"#;

async fn start(extra: &str) -> MockServer {
    MockServer::start(MockOptions {
        scenario: Scenario::parse(
            &SCENARIO.replace("[mcp]\n", &format!("[mcp]\n{extra}")),
            "t.toml",
        )
        .unwrap(),
        seed: Some(1),
        ..MockOptions::default()
    })
    .await
    .unwrap()
}

/// One HTTP/1.1 exchange: (status, head, body).
async fn http(s: &MockServer, method: &str, headers: &str, body: &[u8]) -> (u16, String, String) {
    let mut tcp = TcpStream::connect(s.addr).await.unwrap();
    let head = format!(
        "{method} /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n{headers}\r\n",
        body.len()
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    tcp.write_all(body).await.unwrap();
    let mut out = Vec::new();
    tcp.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head[9..12].parse().unwrap();
    (status, head.to_lowercase(), body.to_string())
}

fn modern(method: &str, params: Value) -> (String, Vec<u8>) {
    let mut p = params;
    p["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let name = p.get("name").and_then(Value::as_str).unwrap_or("");
    let headers =
        format!("mcp-protocol-version: 2026-07-28\r\nmcp-method: {method}\r\nmcp-name: {name}\r\n");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": p});
    (headers, body.to_string().into_bytes())
}

fn error_code(body: &str) -> i64 {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body:?}"));
    v["error"]["code"].as_i64().unwrap_or(0)
}

#[tokio::test]
async fn the_legacy_handshake_opens_a_session_that_later_requests_name() {
    let s = start("").await;
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let (status, head, body) = http(&s, "POST", "", init).await;
    assert_eq!(status, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["result"]["protocolVersion"], "2025-06-18");
    let sid = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap()
        .trim()
        .to_string();
    let h = format!("mcp-session-id: {sid}\r\n");
    let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(http(&s, "POST", &h, note).await.0, 202);
    let resp = br#"{"jsonrpc":"2.0","id":9,"result":{}}"#;
    assert_eq!(
        http(&s, "POST", &h, resp).await.0,
        202,
        "responses are accepted and ignored"
    );
    let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, _, body) = http(&s, "POST", &h, list).await;
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["result"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let (status, _, body) = http(&s, "POST", "", list).await;
    assert_eq!((status, error_code(&body)), (400, -32600), "no session");
    let (status, _, body) = http(&s, "POST", "mcp-session-id: mcp-nope\r\n", list).await;
    assert_eq!(
        (status, error_code(&body)),
        (404, -32600),
        "an unknown session"
    );
    let ping = br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    assert_eq!(
        http(&s, "POST", &h, ping).await.2,
        r#"{"id":3,"jsonrpc":"2.0","result":{}}"#
    );
    let odd = br#"{"jsonrpc":"2.0","id":4,"method":"resources/list"}"#;
    let (status, _, body) = http(&s, "POST", &h, odd).await;
    assert_eq!((status, error_code(&body)), (200, -32601));
    assert_eq!(http(&s, "DELETE", &h, b"").await.0, 200);
    assert_eq!(http(&s, "POST", &h, list).await.0, 404, "the session ended");
    assert_eq!(http(&s, "GET", "", b"").await.0, 405);
    s.shutdown().await.unwrap();
}

#[tokio::test]
async fn stateless_requests_are_checked_as_the_sdks_check_them() {
    let s = start("").await;
    let (h, b) = modern("server/discover", json!({}));
    let (status, _, body) = http(&s, "POST", &h, &b).await;
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["result"]["supportedVersions"][0], "2026-07-28");
    assert_eq!(v["result"]["resultType"], "complete");
    let (h, b) = modern("tools/call", json!({"name": "echo", "arguments": {"x": 1}}));
    let (_, _, body) = http(&s, "POST", &h, &b).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["result"]["content"][0]["text"],
        r#"{"x":1}"#
    );
    let (status, _, body) = http(&s, "POST", "", &b).await;
    assert_eq!(
        (status, error_code(&body)),
        (400, -32020),
        "headers missing"
    );
    let wrong = h.replace("mcp-name: echo", "mcp-name: kv_get");
    assert_eq!(error_code(&http(&s, "POST", &wrong, &b).await.2), -32020);
    let b64 = h.replace("mcp-name: echo", "mcp-name: =?base64?ZWNobw==?=");
    assert_eq!(
        http(&s, "POST", &b64, &b).await.0,
        200,
        "a base64 Mcp-Name is decoded"
    );
    let old = String::from_utf8(b.clone())
        .unwrap()
        .replace("2026-07-28", "1900-01-01");
    let (status, _, body) = http(
        &s,
        "POST",
        &h.replace("2026-07-28", "1900-01-01"),
        old.as_bytes(),
    )
    .await;
    assert_eq!((status, error_code(&body)), (400, -32022));
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["data"]["requested"], "1900-01-01");
    let bare = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    assert_eq!(
        error_code(
            &http(
                &s,
                "POST",
                "mcp-protocol-version: 2026-07-28\r\nmcp-method: tools/list\r\n",
                bare
            )
            .await
            .2
        ),
        -32602
    );
    let (h, b) = modern("ping", json!({}));
    let (status, _, body) = http(&s, "POST", &h, &b).await;
    assert_eq!(
        (status, error_code(&body)),
        (404, -32601),
        "ping is gone in 2026-07-28"
    );
    let (h, b) = modern("tools/call", json!({"name": "nope"}));
    assert_eq!(error_code(&http(&s, "POST", &h, &b).await.2), -32602);
    assert_eq!(
        http(&s, "POST", "origin: http://evil.example\r\n", &b)
            .await
            .0,
        403
    );
    s.shutdown().await.unwrap();
}

#[tokio::test]
async fn malformed_bodies_get_the_protocols_errors_and_sse_replies_are_events() {
    let s = start("").await;
    let (status, _, body) = http(&s, "POST", "", b"{oops").await;
    assert_eq!((status, error_code(&body)), (400, -32700));
    let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#;
    assert_eq!(error_code(&http(&s, "POST", "", batch).await.2), -32600);
    assert_eq!(
        error_code(&http(&s, "POST", "", br#"{"jsonrpc":"2.0","id":1}"#).await.2),
        -32600
    );
    s.shutdown().await.unwrap();
    let s = start("reply = \"sse\"\n").await;
    let (h, b) = modern(
        "tools/call",
        json!({"name": "kv_get", "arguments": {"key": "none"}}),
    );
    let t = std::time::Instant::now();
    let (status, head, body) = http(&s, "POST", &h, &b).await;
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(
        body.contains("event: message\r\ndata: {") || body.contains("event: message\ndata: {"),
        "{body:?}"
    );
    assert!(
        body.contains(r#""isError":true"#),
        "a key never stored: {body}"
    );
    assert!(t.elapsed().as_millis() >= 30, "the tool's latency");
    s.shutdown().await.unwrap();
}

/// Random bytes, and valid messages with random bytes spliced in: the server answers
/// every one with a message or a 202, and still serves afterwards.
#[tokio::test]
async fn random_bytes_on_mcp_never_stop_the_server() {
    let s = start("").await;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(36);
    let valid = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"a":[1,2]}}}"#;
    for i in 0..200 {
        let body: Vec<u8> = if i % 2 == 0 {
            (0..rng.gen_range(0..300)).map(|_| rng.gen()).collect()
        } else {
            let mut b = valid.to_vec();
            let at = rng.gen_range(0..b.len());
            b.splice(at..at, (0..rng.gen_range(1..8)).map(|_| rng.gen::<u8>()));
            b
        };
        let (status, _, reply) = http(&s, "POST", "", &body).await;
        assert!(
            [200, 202, 400, 404].contains(&status),
            "{status} for {body:?}"
        );
        if status != 202 {
            let v: Value =
                serde_json::from_str(&reply).unwrap_or_else(|e| panic!("{e}: {reply:?}"));
            assert_eq!(v["jsonrpc"], "2.0");
        }
    }
    let (h, b) = modern("tools/list", json!({}));
    assert_eq!(http(&s, "POST", &h, &b).await.0, 200, "still serving");
    s.shutdown().await.unwrap();
}

#[tokio::test]
async fn random_bytes_on_stdio_never_stop_the_server() {
    let scenario = Scenario::parse(SCENARIO, "t.toml").unwrap();
    let server = std::sync::Arc::new(McpServer::new(&scenario.mcp, 1));
    let (mut client, server_end) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(server_end);
    let serving = tokio::spawn(mock::mcp::stdio::serve(server, r, w));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut sent = Vec::new();
    for _ in 0..100 {
        let line: Vec<u8> = (0..rng.gen_range(1..200))
            .map(|_| rng.gen::<u8>())
            .filter(|b| *b != b'\n')
            .collect();
        sent.extend_from_slice(&line);
        sent.push(b'\n');
    }
    sent.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"ping\"}\n");
    let (read, mut write) = tokio::io::split(&mut client);
    let writing = async move {
        write.write_all(&sent).await.unwrap();
        write.shutdown().await.unwrap();
    };
    let reading = async move {
        let mut lines = BufReader::new(read).lines();
        let mut out = Vec::new();
        while let Ok(Some(l)) = lines.next_line().await {
            out.push(serde_json::from_str::<Value>(&l).unwrap_or_else(|e| panic!("{e}: {l}")));
        }
        out
    };
    let ((), out) = tokio::join!(writing, reading);
    serving.await.unwrap().unwrap();
    assert!(
        out.len() >= 90,
        "every non-blank line gets an answer ({})",
        out.len()
    );
    assert!(out.iter().all(|v| v["jsonrpc"] == "2.0"));
    assert_eq!(
        out.last().unwrap()["id"],
        "last",
        "and the server still answers"
    );
}

/// One chat call: the assistant message it answered with.
async fn chat(s: &MockServer, messages: &Value) -> Value {
    let tool = |n: &str| json!({"type": "function", "function": {"name": n, "parameters": {"type": "object"}}});
    let body =
        json!({"model": "agent", "messages": messages, "tools": [tool("kv_put"), tool("kv_get")]})
            .to_string();
    let mut tcp = TcpStream::connect(s.addr).await.unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    tcp.write_all(body.as_bytes()).await.unwrap();
    let mut out = String::new();
    tcp.read_to_string(&mut out).await.unwrap();
    let v: Value = serde_json::from_str(out.split_once("\r\n\r\n").unwrap().1).unwrap();
    v["choices"][0]["message"].clone()
}

/// An agent's turn over MCP: the model asks for kv_put, then kv_get; each call goes to
/// the MCP server; `mangle` is what the agent does to the MCP result before the next
/// model call. Returns the ledger's violations.
async fn turn(mangle: impl Fn(&str, String) -> String) -> Vec<Value> {
    let s = start("").await;
    let user = json!({"role": "user", "content": "[[plimsoll session=s1 nonce=psn00000000000000aa turn=1]] go"});
    let mut messages = json!([user]);
    for _ in 0..2 {
        let said = chat(&s, &messages).await;
        let call = said["tool_calls"][0].clone();
        assert!(call.is_object(), "{said}");
        let (name, args) = (
            call["function"]["name"].as_str().unwrap().to_string(),
            call["function"]["arguments"].as_str().unwrap(),
        );
        let (h, b) = modern(
            "tools/call",
            json!({"name": name, "arguments": serde_json::from_str::<Value>(args).unwrap()}),
        );
        let (_, _, body) = http(&s, "POST", &h, &b).await;
        let text = serde_json::from_str::<Value>(&body).unwrap()["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string();
        messages.as_array_mut().unwrap().push(said.clone());
        messages.as_array_mut().unwrap().push(
            json!({"role": "tool", "tool_call_id": call["id"], "content": mangle(&name, text)}),
        );
    }
    chat(&s, &messages).await;
    let ledger = s.app.ledger_json();
    s.shutdown().await.unwrap();
    assert_eq!(
        ledger["mcp"]["sessions"]["s1"]["calls"], 2,
        "both calls traced to the session"
    );
    ledger["violations"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_value_stored_through_one_mcp_tool_comes_back_through_another() {
    let v = turn(|_, t| t).await;
    assert!(v.is_empty(), "{v:?}");
    let v = turn(|_, t| format!("{{\"type\": \"text\", \"text\": {}}}", json!(t))).await;
    assert!(v.is_empty(), "the agent's JSON wrapping is fine: {v:?}");
}

#[tokio::test]
async fn a_dropped_or_truncated_mcp_result_is_a_violation_naming_the_tool() {
    let v = turn(|name, t| if name == "kv_get" { String::new() } else { t }).await;
    let mcp: Vec<&Value> = v.iter().filter(|x| x["kind"] == "mcp").collect();
    assert_eq!(mcp.len(), 1, "{v:?}");
    let d = mcp[0]["detail"].as_str().unwrap();
    assert!(
        d.starts_with("result of MCP tool kv_get (call ") && d.contains("was dropped"),
        "{d}"
    );
    assert!(
        v.iter().any(|x| x["kind"] == "echo"),
        "and the value did not come back: {v:?}"
    );
    let v = turn(|name, t| {
        if name == "kv_get" {
            t[..5].to_string()
        } else {
            t
        }
    })
    .await;
    let d = v.iter().find(|x| x["kind"] == "mcp").unwrap()["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        d.contains("kv_get") && d.contains("truncated: 5 of the MCP server's 21 bytes"),
        "{d}"
    );
    let v = turn(|name, t| {
        if name == "kv_put" {
            "stored it, trust me".into()
        } else {
            t
        }
    })
    .await;
    let d = v.iter().find(|x| x["kind"] == "mcp").unwrap()["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(d.contains("kv_put") && d.contains("altered"), "{d}");
}

#[test]
fn via_names_its_transport() {
    let v = Via {
        transport: Transport::Stdio,
        session: None,
        headers: None,
        pid: None,
    };
    assert_eq!(v.transport.name(), "stdio");
}
