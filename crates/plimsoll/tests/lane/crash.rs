//! A SUT that dies at start-up with a long, repeated traceback (LiteLLM without a master
//! key, as a new user met it): `run` and `check` lead with its exception line, show a
//! short context with the repeated frames collapsed, and name the file of its whole output.

use crate::common::*;
use std::process::Command;

/// 37 times the same two frames, ANSI-coloured log lines, the cause last, exit 3.
const DYING: &str = r#"printf '\033[32mINFO\033[0m:     Started server process\n\033[31mERROR\033[0m:    Traceback (most recent call last):\n'; for i in $(seq 37); do printf '  File "/venv/starlette/routing.py", line 694, in lifespan\n    async with self.lifespan_context(app) as maybe_state:\n'; done; printf 'litellm.proxy._types.UnsafeMasterKeyError: no master key is set\n\033[31mERROR\033[0m:    Application startup failed. Exiting.\n'; exit 3"#;

fn assert_cause_first(err: &str) {
    let at = err
        .find("the SUT exited during start-up (exit status: 3); cause: litellm.proxy._types.UnsafeMasterKeyError: no master key is set")
        .unwrap_or_else(|| panic!("{err}"));
    let rest = &err[at..];
    assert!(rest.contains("… 36 similar frames"), "{err}");
    assert!(!rest.contains('\u{1b}'), "{err}");
    assert!(rest.lines().count() < 40, "{err}");
    let path = rest
        .lines()
        .find_map(|l| l.trim().strip_prefix("its whole output: "))
        .unwrap_or_else(|| panic!("{err}"));
    let whole = std::fs::read_to_string(path).unwrap();
    assert_eq!(whole.matches("in lifespan").count(), 37);
    let _ = std::fs::remove_file(path);
}

#[test]
fn a_sut_dying_at_start_up_gives_its_exception_first_and_its_log_path() {
    let cmd = format!("[\"sh\", \"-c\", {DYING:?}]");
    let cfg = config("dying", &cmd, "");
    let r = run(&cfg, &["--concurrency", "1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_cause_first(&r.stderr);
    let out = tmp_in_scratch(&mut Command::new(BIN), &cfg)
        .args(["check", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_cause_first(&String::from_utf8_lossy(&out.stderr));
}
