//! `plimsoll compare` end to end: two builds, interleaved and repeated.

use crate::common::*;
use std::process::Command;

#[test]
fn compare_calls_a_thread_per_session_worse_and_a_build_against_itself_unchanged() {
    let cfg = fast_config("compare");
    let branch = format!("{FLOOR} --thread-per-session");
    let (code, doc, err) = compare(
        &cfg,
        &[
            "--base-cmd",
            FLOOR,
            "--branch-cmd",
            &branch,
            "--ladder",
            "6",
            "--repeat",
            "6",
            "--no-cap",
            "--fail-on",
            "peak_threads>+0",
        ],
    );
    assert_eq!(code, 2, "{err}");
    let m = &doc["levels"][0]["metrics"];
    assert_eq!(m["peak_threads"]["verdict"], "worse", "{m}");
    assert!(m["peak_threads"]["ratio"].as_f64().unwrap() > 1.5);
    assert!(err.contains("FAIL: 6 sessions: peak_threads"), "{err}");
    assert!(err.contains("| 6 | peak_threads |"), "{err}");

    let (code, doc, err) = compare(
        &cfg,
        &[
            "--base-cmd",
            FLOOR,
            "--branch-cmd",
            FLOOR,
            "--ladder",
            "6",
            "--repeat",
            "6",
            "--no-cap",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let m = doc["levels"][0]["metrics"].as_object().unwrap();
    assert_eq!(m.len(), 7);
    for (name, v) in m {
        assert_eq!(v["verdict"], "no significant change", "{name}: {v}");
    }
    let (_, doc, _) = compare(
        &cfg,
        &[
            "--base-cmd",
            FLOOR,
            "--branch-cmd",
            FLOOR,
            "--ladder",
            "6",
            "--repeat",
            "2",
            "--no-cap",
        ],
    );
    assert_eq!(
        doc["levels"][0]["metrics"]["peak_threads"]["verdict"],
        "too few repetitions"
    );
}

#[test]
fn compare_builds_git_refs_in_worktrees_and_removes_them() {
    let repo = std::env::temp_dir().join(format!("plimsoll-compare-repo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&repo);
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.email", "t@example.invalid"]);
    git(&["config", "user.name", "t"]);
    // The "build" writes the flag the agent starts with; the branch turns threads on.
    std::fs::write(repo.join("build.sh"), "echo '' > flags\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "base"]);
    std::fs::write(
        repo.join("build.sh"),
        "echo '--thread-per-session' > flags\n",
    )
    .unwrap();
    git(&["commit", "-q", "-am", "branch: a thread per session"]);
    let cfg = fast_config("compare-refs");
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "command = [\"true\"]",
        &format!("command = [\"sh\", \"-c\", \"exec {} floor --listen 127.0.0.1:$PORT $(cat flags)\"]\ncwd = {:?}", BIN, repo.display()),
    );
    std::fs::write(&cfg, text).unwrap();
    let (code, doc, err) = compare(
        &cfg,
        &[
            "--base",
            "main~1",
            "--branch",
            "main",
            "--build",
            "sh build.sh",
            "--ladder",
            "6",
            "--repeat",
            "6",
            "--no-cap",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        doc["levels"][0]["metrics"]["peak_threads"]["verdict"], "worse",
        "{doc}"
    );
    let list = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["worktree", "list"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&list.stdout).lines().count(),
        1,
        "worktrees left behind"
    );
    let _ = std::fs::remove_dir_all(&repo);
}
