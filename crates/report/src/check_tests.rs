//! `check`'s problems against known answers: their order, what follows from what, and
//! what the SUT's own body names.

use super::*;
use result::StepResult;

const BODY: &str = r#"{"detail":[{"type":"missing","loc":["body","message"],"msg":"Field required","input":null}]}"#;

fn refused(json_keys: Option<Vec<String>>) -> Vec<String> {
    let r = StepReport {
        result: StepResult {
            sessions_failed: 1,
            outcome: Outcome::ErrorRate,
            ..Default::default()
        },
        cause: Some(result::cause::Cause::Recorded {
            said: "every session failed".into(),
        }),
        first_errors: vec![(
            "status_422".into(),
            format!("turn 1: HTTP 422 (expected a 2xx): {BODY}"),
        )],
        first_bodies: [("status_422".into(), BODY.into())].into(),
        ..Default::default()
    };
    let file = Path::new("session.toml");
    problems(
        &r,
        &Sent {
            file,
            json_keys,
            shared: Vec::new(),
        },
    )
}

#[test]
fn a_form_endpoint_sent_json_gets_the_form_hint_and_no_second_problem() {
    let p = refused(Some(vec!["message".into(), "session".into()]));
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].contains("the SUT names body.message: Field required"),
        "{}",
        p[0]
    );
    assert!(
        p[0].contains("this endpoint may take form fields: `form = { message = \"…\" }`"),
        "{}",
        p[0]
    );
    assert!(p[0].contains("so no LLM call reached the mock: that follows from this one"));
    assert!(!p.iter().any(|l| l.contains("never called the mock")));
}

/// The SUT's body is read from what the driver kept of it, not from the message: a
/// message that looks like a body names nothing.
#[test]
fn the_fields_named_are_the_sut_own_body_not_the_message_words() {
    let r = StepReport {
        result: StepResult {
            sessions_failed: 1,
            ..Default::default()
        },
        first_errors: vec![(
            "status_422".into(),
            format!("turn 1: HTTP 422 (expected a 2xx): {BODY}"),
        )],
        ..Default::default()
    };
    let sent = Sent {
        file: Path::new("session.toml"),
        json_keys: None,
        shared: Vec::new(),
    };
    let p = problems(&r, &sent);
    assert!(!p[0].contains("the SUT names"), "{p:#?}");
}

/// Sessions that all failed in their setup never reached a turn that would call the
/// LLM: no line says the SUT never called the mock. A turn's failure does not count.
#[test]
fn a_session_that_failed_in_setup_is_not_said_to_have_skipped_the_mock() {
    let step = |in_setup: u64| StepReport {
        result: StepResult {
            sessions_failed: 2,
            outcome: Outcome::ErrorRate,
            ..Default::default()
        },
        first_errors: vec![(
            "status_500".into(),
            "session s0 setup, request \"create\" (setup[0]): HTTP 500 (expected a 2xx): boom"
                .into(),
        )],
        sessions_failed_in_setup: in_setup,
        ..Default::default()
    };
    let sent = Sent {
        file: Path::new("session.toml"),
        json_keys: None,
        shared: Vec::new(),
    };
    let never = |p: &[String]| {
        p.iter()
            .any(|l| l.contains("the SUT never called the mock"))
    };
    assert!(!never(&problems(&step(2), &sent)));
    assert!(never(&problems(&step(1), &sent)), "one failed in a turn");
    assert!(never(&problems(&step(0), &sent)));
}

/// What follows from the first request failure is said under that failure, found by
/// its place, not by the words of the lines before it (a refusal of the mock's first).
#[test]
fn what_follows_is_said_under_the_first_failure_even_after_a_refusal() {
    let r = StepReport {
        result: StepResult {
            sessions_failed: 1,
            outcome: Outcome::ErrorRate,
            mock_refused: result::MockRefusals {
                kinds: vec![result::MockRefusal {
                    what: "speech".into(),
                    status: 400,
                    message: "\"mp3\" is not produced".into(),
                    count: 1,
                }],
                more: 0,
            },
            ..Default::default()
        },
        cause: Some(result::cause::Cause::Recorded {
            said: "every session failed".into(),
        }),
        first_errors: vec![(
            "status_422".into(),
            "turn 1: HTTP 422 (expected a 2xx): {}".into(),
        )],
        ..Default::default()
    };
    let sent = Sent {
        file: Path::new("session.toml"),
        json_keys: None,
        shared: Vec::new(),
    };
    let p = problems(&r, &sent);
    let under = p
        .iter()
        .position(|l| l.contains("that follows from this one"));
    let failure = p.iter().position(|l| l.contains("HTTP 422"));
    assert!(under.is_some() && under == failure, "{p:#?}");
    assert!(failure > Some(0), "the refusal is said first: {p:#?}");
}

#[test]
fn causes_come_before_what_follows_from_them() {
    let r = StepReport {
        result: StepResult {
            sessions_failed: 1,
            ..Default::default()
        },
        first_errors: vec![
            ("check_failed".into(), "turn 1: /reply missing".into()),
            (
                "status_500".into(),
                "turn 2: HTTP 500 (expected a 2xx): boom".into(),
            ),
            ("config".into(), "turn 1: {{x}} has no value".into()),
        ],
        ..Default::default()
    };
    let p = problems(
        &r,
        &Sent {
            file: Path::new("s.toml"),
            json_keys: None,
            shared: Vec::new(),
        },
    );
    assert!(p[0].contains("— config:"), "{p:#?}");
    assert!(p[1].contains("— status_500:"), "{p:#?}");
    assert!(p[2].contains("— check_failed:"), "{p:#?}");
    // A 5xx may well be the LLM call failing elsewhere: that stays a problem of its own.
    assert!(p[3].contains("the SUT never called the mock"), "{p:#?}");
}

/// A Realtime bot that sent call s1's reply out of call s0's output: s1's turn timed
/// out and s0 failed its words. The cross-talk is the cause, said first; the timeout says
/// what it may follow from; the failed turn and a 500 stay problems of their own.
#[test]
fn crosstalk_comes_before_the_timeout_it_may_have_caused() {
    let voice = result::VoiceCalls {
        turns: 2,
        words_checked: 2,
        words_wrong: 1,
        crosstalk: vec![result::Crosstalk {
            heard_on: "s0".into(),
            owner: "s1".into(),
            with_own: true,
            owner_heard_own: false,
            by_sound: true,
        }],
        stages: Some(result::VoiceStages {
            stt_calls: 2,
            tts_calls: 2,
            ..Default::default()
        }),
        ..Default::default()
    };
    let r = StepReport {
        result: StepResult {
            sessions_ok: 1,
            sessions_failed: 2,
            llm_calls: 2,
            voice: Some(voice),
            ..Default::default()
        },
        marked_sessions: 2,
        first_errors: vec![
            (
                "timeout".into(),
                "session s1 turn 1: the bot never answered".into(),
            ),
            (
                "words".into(),
                "session s0 call s0 heard the reply to call s1".into(),
            ),
            ("status_500".into(), "turn 2: HTTP 500: boom".into()),
        ],
        ..Default::default()
    };
    let sent = Sent {
        file: Path::new("s.toml"),
        json_keys: None,
        shared: Vec::new(),
    };
    let p = problems(&r, &sent);
    assert_eq!(p.len(), 4, "{p:#?}");
    assert!(
        p[0].starts_with("1 of 2 replies were heard on another call"),
        "{p:#?}"
    );
    assert!(p[1].contains("— status_500:"), "{p:#?}");
    let timeout = "— timeout: session s1 turn 1: the bot never answered\n     if it is call s1's, it follows from the cross-talk above: its reply was heard on call s0";
    assert!(p[2].ends_with(timeout), "{p:#?}");
    assert!(p[3].contains("— words: session s0"), "{p:#?}");
}

/// Two sessions sent `"session": "plimsoll"` (issue 40): the violations follow from
/// the session file, said once, pointing at it — not one line each blaming the SUT.
#[test]
fn violations_with_a_shared_conversation_value_point_at_the_session_file() {
    let r = StepReport {
        result: StepResult {
            sessions_ok: 2,
            turns: 6,
            llm_calls: 6,
            integrity_violations: 4,
            outcome: Outcome::Integrity,
            ..Default::default()
        },
        marked_sessions: 2,
        violations: vec![
            serde_json::json!({"kind": "isolation", "detail": "message of session 3f-s0 in this conversation"}),
        ],
        ..Default::default()
    };
    let shared = vec![
        "`session` = \"plimsoll\" in the JSON body of request `turn` (session.toml:4)".to_string(),
    ];
    let p = problems(
        &r,
        &Sent {
            file: Path::new("session.toml"),
            json_keys: None,
            shared,
        },
    );
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].starts_with("every session sent the same value in a field that names a conversation: `session` = \"plimsoll\""), "{}", p[0]);
    assert!(
        p[0].contains("(4 integrity violations follow from this, not from the SUT)"),
        "{}",
        p[0]
    );
    assert!(
        p[0].ends_with("`{{session}}`, or `{{uuid}}` where the SUT wants a UUID, in session.toml"),
        "{}",
        p[0]
    );
    // Without a shared value the violations are the SUT's, each said.
    let own = problems(
        &r,
        &Sent {
            file: Path::new("session.toml"),
            json_keys: None,
            shared: Vec::new(),
        },
    );
    assert!(
        own[0].starts_with("integrity: message of session 3f-s0"),
        "{own:#?}"
    );
}
