//! session.toml: what loads, what is refused and with which words.

use super::*;
use crate::template::render;

#[test]
fn a_json_body_that_is_not_json_once_filled_is_warned_about() {
    let text = "url = \"{{base}}/turn\"\nbody = '{\"session\": {{session}}}'\n[headers]\ncontent-type = \"application/json\"\n";
    let s = SessionSpec::parse(text, "session.toml").unwrap();
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(
        s.warnings[0].starts_with("session.toml:2: warning: body 1 is not JSON once filled"),
        "{:?}",
        s.warnings
    );
    let ok = "url = \"{{base}}/turn\"\nbody = '{\"session\": \"{{session}}\"}'\n[headers]\ncontent-type = \"application/json\"\n";
    assert!(SessionSpec::parse(ok, "session.toml")
        .unwrap()
        .warnings
        .is_empty());
}

#[test]
fn a_body_written_under_headers_is_an_error_naming_its_line() {
    let text =
        "url = \"{{base}}/turn\"\n[headers]\ncontent-type = \"application/json\"\nbody = '{}'\n";
    let e = SessionSpec::parse(text, "session.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("session.toml:4: header \"body\" is a session setting")
            && e.contains("move `body = …` above [headers]"),
        "{e}"
    );
}

#[test]
fn parses_and_defaults() {
    let s = SessionSpec::parse("url = \"{{base}}/turn\"\nturns = 2\n[extract]\nid = \"/id\"\n[[check]]\npointer = \"/ok\"\nequals = true\n", "s.toml").unwrap();
    assert_eq!(
        (s.protocol, s.turns, s.turn[0].method.as_str()),
        (Protocol::Http, 2, "POST")
    );
    assert_eq!(s.turn[0].bodies, vec![DEFAULT_BODY.to_string()]);
    assert_eq!(
        s.turn[0].checks,
        vec![Check::Equals("/ok".into(), serde_json::json!(true))]
    );
    assert_eq!(
        render(
            "{{base}}/t/{{ id }}/{{x",
            &[("base", "http://h"), ("id", "7")]
        ),
        "http://h/t/7/{{x"
    );
}

#[test]
fn errors_name_line_and_fix() {
    let e = SessionSpec::parse("url = \"{{base}}/t\"\nturns = 0\n", "s.toml")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "s.toml:2: turns must be between 1 and 100000 (got 0)");
    let e = SessionSpec::parse("url = \"{{base}}/{{sesion}}\"\n", "s.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("s.toml:1: unknown placeholder {{sesion}}; use session"),
        "{e}"
    );
    let e = SessionSpec::parse("url = \"{{base}}\"\nprotocol = \"ws\"\n", "s.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("s.toml:1: url must start with ws:// or {{ws_base}}"),
        "{e}"
    );
    let e = SessionSpec::parse("turns = 2\n", "s.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing field `url`"), "{e}");
}

const THREADS: &str = r#"turns = 2
[headers]
x-api-key = "k"
[[setup]]
name = "create"
url = "{{base}}/threads"
body = '{"id": "{{uuid}}"}'
extract = { thread = "/thread_id", loc = { header = "location", default = "" } }
[[turn]]
name = "run"
url = "{{base}}/threads/{{thread}}/runs"
body = '{"input": "turn {{turn}}", "req": "{{request_uuid}}"}'
extract = { run = "/run_id" }
[[turn]]
name = "poll"
method = "get"
url = "{{base}}/threads/{{thread}}/runs/{{run}}"
until = { pointer = "/status", equals = "done", interval_ms = 5 }
[[turn.check]]
pointer = "/messages/-1/content"
contains = "turn"
[[teardown]]
name = "delete"
method = "DELETE"
url = "{{base}}/threads/{{thread}}"
"#;

#[test]
fn a_sequence_of_named_requests_loads() {
    let s = SessionSpec::parse(THREADS, "s.toml").unwrap();
    assert!(s.sequence);
    let names: Vec<&str> = s.requests().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["create", "run", "poll", "delete"]);
    let run = &s.turn[0];
    assert_eq!(run.at, "s.toml:11");
    // Top-level headers reach every request; a JSON body gets its content-type.
    assert!(run.headers.contains(&("x-api-key".into(), "k".into())));
    assert!(run
        .headers
        .contains(&("content-type".into(), "application/json".into())));
    assert_eq!(s.turn[1].method, "GET");
    assert!(s.turn[1].bodies.is_empty());
    assert_eq!(s.turn[1].until.as_ref().unwrap().interval_ms, 5);
    assert_eq!(s.turn[1].until.as_ref().unwrap().timeout_ms, 60_000);
    assert_eq!(
        s.setup[0].extract[0],
        Extract {
            name: "loc".into(),
            from: Source::Header("location".into()),
            default: Some(String::new())
        }
    );
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

#[test]
fn sequence_mistakes_name_their_line() {
    let err = |t: &str| SessionSpec::parse(t, "s.toml").unwrap_err().to_string();
    // A setup request using a name only a turn extracts.
    let t = THREADS.replace(
        "url = \"{{base}}/threads\"",
        "url = \"{{base}}/threads/{{run}}\"",
    );
    assert_eq!(
        err(&t),
        "s.toml:6: {{run}} is used by setup request \"create\" before any earlier request extracts it"
    );
    let t = THREADS.replace("{{thread}}/runs\"", "{{thraed}}/runs\"");
    assert!(
        err(&t).starts_with("s.toml:11: unknown placeholder {{thraed}}"),
        "{}",
        err(&t)
    );
    let t = format!("url = \"{{{{base}}}}/x\"\n{THREADS}");
    assert!(
        err(&t).starts_with("s.toml:1: top-level url is the one-request form"),
        "{}",
        err(&t)
    );
    let t = THREADS.replace("name = \"poll\"", "name = \"run\"");
    assert!(
        err(&t).starts_with("s.toml:17: two requests are named \"run\""),
        "{}",
        err(&t)
    );
    let t = THREADS.replace("interval_ms = 5", "interval_ms = 0");
    assert!(
        err(&t).contains("until.interval_ms must be between 1"),
        "{}",
        err(&t)
    );
    let t = THREADS.replace(
        "extract = { run = \"/run_id\" }",
        "extract = { run = { header = \"x\", pointer = \"/y\" } }",
    );
    assert!(
        err(&t).starts_with("s.toml:13: extract.run: give pointer"),
        "{}",
        err(&t)
    );
    let t = THREADS.replace("contains = \"turn\"", "text_contains = \"turn\"");
    assert!(
        err(&t).contains("text_contains reads a stream's text deltas"),
        "{}",
        err(&t)
    );
    let t = THREADS.replace("name = \"poll\"", "name = \"poll\"\nttft_event = \"end\"");
    assert!(
        err(&t).contains("ttft_event applies to a stream"),
        "{}",
        err(&t)
    );
    let t = "[[setup]]\nurl = \"{{base}}/x\"\n";
    assert!(
        err(t).starts_with("s.toml:1: [[setup]] and [[teardown]] need"),
        "{}",
        err(t)
    );
    let t = "protocol = \"ws\"\n[[turn]]\nurl = \"{{base}}/x\"\n";
    assert!(
        err(t).contains("[[turn]] requests speak protocol = \"http\" or \"sse\""),
        "{}",
        err(t)
    );
    let t = "[[turn]]\nurl = \"{{base}}/x\"\n[turn.headers]\nbody = \"{}\"\n";
    assert!(
        err(t).starts_with(
            "s.toml:4: header \"body\" is a session setting written after [turn.headers]"
        ),
        "{}",
        err(t)
    );
}

#[test]
fn streams_take_their_first_token_and_end_events() {
    let t = "protocol = \"sse\"\nurl = \"{{base}}/s\"\nttft_event = { event = \"messages/partial\", pointer = \"/0/content\" }\ndone_event = \"end\"\n[[check]]\ntext_contains = \"fact\"\n";
    let s = SessionSpec::parse(t, "s.toml").unwrap();
    let r = &s.turn[0];
    assert!(r.stream && !s.sequence);
    assert_eq!(
        r.ttft_event.as_ref().unwrap().name.as_deref(),
        Some("messages/partial")
    );
    assert_eq!(r.done_event.as_ref().unwrap().name.as_deref(), Some("end"));
    assert_eq!(r.checks, vec![Check::TextContains("fact".into())]);
}
