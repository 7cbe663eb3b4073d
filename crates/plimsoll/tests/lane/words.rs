//! The step line says what ran: `--set turns=10` runs 10 turns a session and says so.

use crate::common::*;

#[test]
fn the_step_line_prints_the_turns_actually_run() {
    let r = run(
        &root().join("examples/floor/plimsoll.toml"),
        &["--concurrency", "1", "--set", "turns=10"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("step: 1 concurrent session × 10 turns — 1 ok"),
        "{}",
        r.stderr
    );
    assert_eq!(r.result.unwrap()["turns"], 10);
}

/// A request the mock refuses is said first, with its count and the mock's words: the
/// sessions' failures follow from it (the floor asks for a model the scenario lacks).
#[test]
fn a_request_the_mock_refuses_is_said_before_anything_else() {
    let cfg = config(
        "refused",
        "[\"{{plimsoll}}\", \"floor\", \"--listen\", \"127.0.0.1:{{port}}\", \"--model\", \"nope\"]",
        "[step]\nconcurrency = 2\n",
    );
    let dir = cfg.parent().unwrap().to_path_buf();
    let scenario = std::fs::read_to_string(root().join("scenarios/memory.toml")).unwrap();
    std::fs::write(
        dir.join("refusing.toml"),
        format!("unknown_model = \"error\"\n{scenario}"),
    )
    .unwrap();
    let text = std::fs::read_to_string(&cfg).unwrap();
    let text: Vec<String> = text
        .lines()
        .map(|l| match l.starts_with("scenario = ") {
            true => "scenario = \"refusing.toml\"".to_string(),
            false => l.to_string(),
        })
        .collect();
    std::fs::write(&cfg, text.join("\n")).unwrap();
    let r = run(&cfg, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_ne!(r.code, 0, "{}", r.stderr);
    let first = r.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("the mock refused ")
            && first.contains(
                " chat completions with 404: model: \"nope\" does not exist in this scenario"
            ),
        "{}",
        r.stderr
    );
    let refused = &r.result.unwrap()["mock_refused"]["kinds"][0];
    assert_eq!(refused["what"], "chat completion");
    assert!(refused["count"].as_u64().unwrap() >= 2, "{refused}");
}
