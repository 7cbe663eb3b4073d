//! session.toml: what loads, what is refused and with which words.

use super::*;

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
        (s.protocol, s.turns, s.method.as_str()),
        (Protocol::Http, 2, "POST")
    );
    assert_eq!(s.bodies, vec![DEFAULT_BODY.to_string()]);
    assert_eq!(
        s.checks,
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
