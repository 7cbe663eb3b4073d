//! A run that cannot start says so before it starts, and a run that fails is recorded as
//! failed with its reason (issue 40): a `plimsoll.toml` whose session file is missing is
//! refused before the budget and the table's header are printed, with nothing recorded;
//! a SUT that cannot start fails the run, and `plimsoll history` lists it as failed, not
//! as `interrupted?` with 0 steps.

use crate::common::*;
use std::process::Command;

fn dir(name: &str) -> Scratch {
    Scratch::new("preflight", name)
}

fn ramp(d: &std::path::Path) -> (i32, String) {
    let o = tmp_in_scratch(&mut Command::new(BIN), d)
        .args([
            "ramp",
            "--ladder",
            "2,4",
            "--no-partition",
            "--history",
            "h.db",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

fn history(d: &std::path::Path) -> String {
    let o = Command::new(BIN)
        .args(["history", "--db", "h.db"])
        .current_dir(d)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr)
}

#[test]
fn a_missing_session_file_is_refused_before_the_first_step() {
    let d = dir("missing");
    std::fs::write(
        d.join("plimsoll.toml"),
        "[sut]\ncommand = [\"{{plimsoll}}\", \"floor\", \"--listen\", \"127.0.0.1:{{port}}\"]\n[session]\nfile = \"../leaky/session.toml\"\n",
    )
    .unwrap();
    let (code, err) = ramp(&d);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("../leaky/session.toml: not found"), "{err}");
    assert!(
        !err.contains("budget:") && !err.contains("| sessions |"),
        "the table began before the error:\n{err}"
    );
    let h = history(&d);
    assert!(!h.contains("interrupted") && !h.contains("running"), "{h}");
    // `check` and `run` refuse it the same way, before anything starts.
    for cmd in [
        &["check", "--no-partition"][..],
        &["run", "--no-partition"][..],
    ] {
        let o = Command::new(BIN)
            .args(cmd)
            .current_dir(&d)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            e.contains("../leaky/session.toml: not found"),
            "{cmd:?}: {e}"
        );
        assert!(!e.contains("plimsoll check: two sessions"), "{cmd:?}: {e}");
    }
}

#[test]
fn a_run_whose_sut_cannot_start_is_recorded_as_failed_with_its_reason() {
    let d = dir("nosut");
    std::fs::copy(
        root().join("examples/floor/session.toml"),
        d.join("session.toml"),
    )
    .unwrap();
    std::fs::write(
        d.join("plimsoll.toml"),
        "[sut]\ncommand = [\"/nonexistent/agent\"]\nready_timeout_s = 5\n",
    )
    .unwrap();
    let (code, err) = ramp(&d);
    assert_ne!(code, 0, "{err}");
    let h = history(&d);
    let row = h
        .lines()
        .find(|l| l.trim_start().starts_with('1'))
        .unwrap_or_else(|| panic!("{h}"));
    assert!(row.contains("failed"), "{h}");
    assert!(row.contains("the SUT exited during start-up"), "{h}");
    let o = Command::new(BIN)
        .args(["report", "1", "--db", "h.db"])
        .current_dir(&d)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("run 1 failed: step at 2 sessions: starting the SUT"),
        "{e}"
    );
}

#[test]
fn a_new_user_without_files_is_told_where_it_looked_and_what_writes_them() {
    let d = dir("first-hour");
    let said = |cmd: &str| {
        let o = Command::new(BIN).arg(cmd).current_dir(&d).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let here = d.canonicalize().unwrap();
    for cmd in ["run", "ramp", "check"] {
        let (code, err) = said(cmd);
        assert_eq!(code, Some(1), "{err}");
        let looked = format!(
            "plimsoll.toml: not found (looked for {}",
            here.join("plimsoll.toml").display()
        );
        assert!(
            err.contains(&looked) && err.contains("plimsoll init --command"),
            "{cmd}: {err}"
        );
    }
    std::fs::write(d.join("plimsoll.toml"), "[sut]\ncommand = [\"true\"]\n").unwrap();
    let (code, err) = said("check");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("session.toml: not found") && err.contains("[session] file names it"),
        "{err}"
    );
    std::fs::write(d.join("session.toml"), "url = \"{{base}}/chat\"\n").unwrap();
    std::fs::write(
        d.join("plimsoll.toml"),
        "[sut]\ncommand = [\"true\"]\n[mock]\nscenario = \"s.toml\"\n",
    )
    .unwrap();
    let (code, err) = said("check");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("s.toml: not found") && err.contains("built-in defaults"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
