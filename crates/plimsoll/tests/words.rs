//! The step line says what ran: `--set turns=10` runs 10 turns a session and says so.

mod common;

use common::*;

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
