//! `plimsoll report RUN` on a history recorded by an earlier Plimsoll (a CPU-bound ramp,
//! an arm of a replicas axis, a sweep, a soak, a provider that refused calls): each run
//! renders byte for byte the files that Plimsoll wrote from it then. One side of a
//! comparison is said to be one, not rendered as a ladder that "collapsed at once".

use crate::common::*;
use std::path::Path;
use std::process::Command;

fn fixture() -> std::path::PathBuf {
    root().join("crates/plimsoll/tests/fixtures/history")
}

/// The history copied where the test may write (SQLite opens it for writing).
fn history(dir: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let db = dir.join("history.db");
    std::fs::copy(fixture().join("history.db"), &db).unwrap();
    db
}

#[test]
fn stored_runs_render_as_they_were_written() {
    let dir = std::env::temp_dir().join(format!("plimsoll-history-{}", std::process::id()));
    let db = history(&dir);
    for run in [1, 2, 6, 7, 12] {
        let out = dir.join(format!("run-{run}"));
        let o = Command::new(BIN)
            .args(["report", &run.to_string(), "--db"])
            .arg(&db)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "run {run}: {err}");
        let want = fixture().join(format!("run-{run}"));
        for f in std::fs::read_dir(&want).unwrap() {
            let name = f.unwrap().file_name();
            let got = std::fs::read(out.join(&name)).unwrap();
            if std::env::var_os("PLIMSOLL_BLESS").is_some() {
                std::fs::write(want.join(&name), &got).unwrap();
            }
            let expected = std::fs::read(want.join(&name)).unwrap();
            assert!(
                got == expected,
                "run {run}: {} differs from what was written then\n{err}",
                name.to_string_lossy()
            );
        }
    }
    let o = Command::new(BIN)
        .args(["report", "8", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("run 8 is the base side of a comparison (the other side: run 9)"),
        "{err}"
    );
    assert!(!err.contains("collapsed"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
