//! Trace and conversation files into workloads: the example's real OpenTelemetry trace
//! (examples/openai-agent/traces), hand-written edge cases, and malformed input.

use std::path::PathBuf;
use workload::{from_files, Workload};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/openai-agent/traces")
        .join(name)
}

/// The real trace of the openai-agent example (FastAPI + the openai SDK, instrumented by
/// opentelemetry-instrumentation-openai-v2 and the GenAI util's invoke_agent and
/// execute_tool spans) derives the workload shipped beside it.
#[test]
fn the_example_trace_derives_the_shipped_workload() {
    let w = from_files(&[example("agent-trace.jsonl")]).unwrap();
    let shipped = Workload::load(&example("workload.json")).unwrap();
    assert_eq!(w.sessions, shipped.sessions);
    assert_eq!(w.summary, shipped.summary);
    assert_eq!(w.source.sha256, shipped.source.sha256);
    assert_eq!(
        (
            w.sessions.len(),
            w.fingerprint().turns,
            w.fingerprint().calls
        ),
        (24, 85, 220)
    );
    // A "deep" session: every turn five calls, four tools in the script's order.
    let deep = w
        .sessions
        .iter()
        .find(|s| s.turns[0].calls[0].model == "deep")
        .unwrap();
    for t in &deep.turns {
        let tools: Vec<&str> = t
            .calls
            .iter()
            .flat_map(|c| &c.tools)
            .map(|x| x.name.as_str())
            .collect();
        assert_eq!(
            tools,
            ["memory_set", "memory_set", "memory_get", "memory_get"]
        );
        assert!(t
            .calls
            .iter()
            .all(|c| c.input_tokens.is_some() && c.output_tokens.is_some()));
    }
    // FastAPI's own HTTP spans are in the file and are not sessions.
    assert!(w.sessions.iter().all(|s| !s.id.starts_with("trace:")));
}

/// A call as the test compares it: model, tokens in and out, tools, sub-agent.
type Seen<'a> = (
    &'a str,
    Option<u32>,
    Option<u32>,
    Vec<&'a str>,
    Option<&'a str>,
);

#[test]
fn edge_cases_nested_agents_no_conversation_no_tokens_a_tool_first_legacy_names() {
    let w = from_files(&[fixture("edge-cases.otlp.json")]).unwrap();
    let ids: Vec<&str> = w.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "conv-nested",
            &format!("trace:{}", "c".repeat(32)),
            "conv-legacy"
        ]
    );

    // Nested sub-agent: its call stays in the outer turn, in time order, named.
    let nested = &w.sessions[0];
    assert_eq!(nested.turns.len(), 2);
    let t1 = &nested.turns[0];
    let calls: Vec<Seen> = t1
        .calls
        .iter()
        .map(|c| {
            let tools = c.tools.iter().map(|t| t.name.as_str()).collect();
            (
                c.model.as_str(),
                c.input_tokens,
                c.output_tokens,
                tools,
                c.agent.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("gpt-4o", Some(120), Some(30), vec!["search"], None),
            (
                "gpt-4o-mini",
                Some(50),
                Some(12),
                vec!["fetch"],
                Some("researcher")
            ),
            ("gpt-4o", Some(200), Some(80), vec![], None),
        ]
    );
    assert_eq!((t1.duration_ms, t1.calls[0].tools[0].ms), (1000.0, 190.0));
    let t2 = &nested.turns[1];
    assert_eq!((t2.think_ms, t2.user_tokens), (2000.0, 50)); // 330 − (200 + 80)

    // No conversation id and no agent span: a session by trace, one turn; no token
    // counts; a tool before any model call is the system's own.
    let bare = &w.sessions[1];
    assert_eq!((bare.start_ms, bare.turns.len()), (510.0, 1));
    let t = &bare.turns[0];
    assert_eq!(t.unasked_tools.len(), 1);
    assert_eq!(t.unasked_tools[0].name, "load_profile");
    assert_eq!(t.calls.len(), 2);
    assert_eq!(
        (t.calls[0].input_tokens, t.calls[0].output_tokens),
        (None, None)
    );
    assert_eq!(t.calls[0].tools[0].name, "lookup");
    assert_eq!(
        (t.calls[1].input_tokens, t.calls[1].output_tokens),
        (Some(90), None)
    );

    // Older names (prompt/completion tokens, no operation name): turns by user messages,
    // whose text gives the user's size.
    let legacy = &w.sessions[2];
    assert_eq!(legacy.turns.len(), 2);
    assert_eq!(
        legacy.turns[1].user_text.as_deref(),
        Some("what is the status of my order")
    );
    assert_eq!(
        (legacy.turns[1].user_tokens, legacy.turns[1].think_ms),
        (7, 900.0)
    );
    assert_eq!(legacy.turns[0].calls[0].output_tokens, Some(5));

    let s = &w.summary;
    assert_eq!(
        (s.calls_without_tokens, s.unasked_tools, s.sub_agent_calls),
        (2, 1, 1)
    );
    let text = s.text();
    assert!(text.contains("2 calls had no token count"), "{text}");
    assert!(
        text.contains("1 tool run came before any model call"),
        "{text}"
    );
}

#[test]
fn jsonl_conversations_with_and_without_timestamps_and_usage() {
    let w = from_files(&[fixture("conversations.jsonl")]).unwrap();
    let chat = w.sessions.iter().find(|s| s.id == "chat-1").unwrap();
    assert_eq!(chat.turns.len(), 2);
    let (t1, t2) = (&chat.turns[0], &chat.turns[1]);
    assert_eq!((t1.user_tokens, t1.duration_ms), (6, 2000.0));
    assert_eq!(t1.calls[0].tools[0].name, "order_status");
    assert_eq!(t1.calls[0].tools[0].ms, 250.0);
    assert_eq!(
        (t1.calls[1].input_tokens, t1.calls[1].output_tokens),
        (Some(60), Some(9))
    );
    assert_eq!((t2.think_ms, t2.duration_ms), (5000.0, 500.0));
    // No usage: counted from the text, the context so far as the input.
    assert_eq!(
        (t2.calls[0].input_tokens, t2.calls[0].output_tokens),
        (Some(71), Some(4))
    );
    let plain = w.sessions.iter().find(|s| s.id == "chat-2").unwrap();
    assert_eq!(plain.turns[0].calls[0].model, "unknown");
    assert_eq!(plain.turns[0].user_text.as_deref(), Some("hi"));
}

/// The error `name` holding `text` gets, read from a directory of its own (removed after).
fn error_of(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("plimsoll-workload-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    let e = from_files(std::slice::from_ref(&p));
    let _ = std::fs::remove_dir_all(&dir);
    e.unwrap_err()
        .to_string()
        .replace(&format!("{}", p.display()), name)
}

#[test]
fn malformed_input_gets_one_error_naming_file_line_and_field() {
    let good = r#"{"resourceSpans":[]}"#;
    let bad_time = r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"01","startTimeUnixNano":true,"endTimeUnixNano":"2"}]}]}]}"#;
    assert_eq!(
        error_of("t.jsonl", &format!("{good}\n{bad_time}\n")),
        "t.jsonl:2: resourceSpans.0.scopeSpans.0.spans.0.startTimeUnixNano: expected unix nanoseconds as a string of digits (got true)"
    );
    let no_id = r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"01","startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}"#;
    assert_eq!(
        error_of("u.jsonl", no_id),
        "u.jsonl:1: resourceSpans.0.scopeSpans.0.spans.0.traceId: missing; every span needs its traceId and spanId in hex"
    );
    // One document over many lines: the line of the span at fault.
    let pretty = "{\n  \"resourceSpans\": [{\"scopeSpans\": [{\"spans\": [\n    {\"traceId\": \"ab\", \"spanId\": \"0a\", \"startTimeUnixNano\": \"1\", \"endTimeUnixNano\": \"2\"},\n    {\"traceId\": \"ab\", \"spanId\": \"0b\", \"startTimeUnixNano\": \"5\", \"endTimeUnixNano\": \"3\"}\n  ]}]}]\n}\n";
    assert_eq!(
        error_of("p.json", pretty),
        "p.json:4: resourceSpans.0.scopeSpans.0.spans.1.endTimeUnixNano: ends before it starts"
    );
    assert_eq!(
        error_of("c.jsonl", "{\"session\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"content\": \"x\"}]}\n"),
        "c.jsonl:1: messages.1.role: missing: every message needs a role"
    );
    assert_eq!(
        error_of("d.jsonl", "{\"session\": \"a\", \"messages\": [{\"role\": \"user\", \"timestamp\": \"noon\"}]}\n"),
        "d.jsonl:1: messages.0.timestamp: \"noon\" is not RFC 3339 (2026-01-31T12:00:00.250Z) nor a number"
    );
    let e = error_of("n.jsonl", "{\"session\": \"a\"}\n{oops\n");
    assert!(e.starts_with("n.jsonl:1: neither an OTLP request"), "{e}");
    let e = error_of("m.jsonl", "\n\n{oops\n");
    assert!(e.starts_with("m.jsonl:3: not JSON"), "{e}");
}
