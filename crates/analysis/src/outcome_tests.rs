//! Known answers for the outcome rules: which witness wins, and the words each gives.

use super::*;

/// A cause in words, as the outputs say it.
fn w(c: &Cause) -> String {
    words::cause::said(c)
}

fn sessions(ok: u64, failed: u64) -> Evidence {
    Evidence {
        sessions_ok: ok,
        sessions_failed: failed,
        ..Evidence::default()
    }
}

fn exit(signal: Option<i32>, code: Option<i32>) -> Option<Exit> {
    Some(Exit {
        signal,
        code,
        text: match (signal, code) {
            (Some(s), _) => format!("signal: {s}"),
            (_, Some(c)) => format!("exit status: {c}"),
            _ => String::new(),
        },
    })
}

#[test]
fn the_kernel_outranks_every_other_witness() {
    assert_eq!(cgroup_oom(0), None);
    let e = Evidence {
        oom_kills: 2,
        timed_out: true,
        exit: exit(Some(9), None),
        violations: 3,
        ..sessions(0, 5)
    };
    let o = outcome(&e).unwrap();
    assert_eq!(o.0, Outcome::OomKilled);
    assert!(w(&o.1).contains("2 processes"), "{}", w(&o.1));
}

#[test]
fn a_full_scratch_disk_is_the_cause_when_something_failed() {
    let full = Scratch {
        free_min_bytes: Some(0),
        peak_bytes: 3 << 20,
        ..Scratch::default()
    };
    let with = |disk: Scratch, e: Evidence| Evidence {
        scratch: Some(disk),
        ..e
    };
    let o = outcome(&with(full.clone(), sessions(1, 3))).unwrap();
    assert_eq!(o.0, Outcome::DiskFull);
    assert!(w(&o.1).contains("filled up (3.0 MB"), "{}", w(&o.1));
    assert_eq!(outcome(&with(full, sessions(4, 0))), None, "nothing failed");
    let said = Evidence {
        tail: "OSError: [Errno 28] No space left on device".into(),
        exit: exit(None, Some(1)),
        ..sessions(0, 0)
    };
    assert_eq!(
        outcome(&said).unwrap().0,
        Outcome::DiskFull,
        "the crash's own words"
    );
    let inodes = Scratch {
        free_min_inodes: Some(0),
        fs_inodes: Some(64),
        free_min_bytes: Some(1 << 30),
        ..Scratch::default()
    };
    let o = outcome(&with(inodes, sessions(0, 2))).unwrap();
    assert!(
        o.0 == Outcome::DiskFull && w(&o.1).contains("ran out of inodes"),
        "{o:?}"
    );
}

#[test]
fn the_exit_status_names_kill_threads_or_crash() {
    assert_eq!(exited(None, ""), None);
    assert_eq!(
        exited(exit(Some(9), None).as_ref(), "").unwrap().0,
        Outcome::OomKilled
    );
    let threads = exited(
        exit(None, Some(1)).as_ref(),
        "RuntimeError: can't start new thread",
    );
    assert_eq!(threads.unwrap().0, Outcome::ThreadExhaustion);
    assert_eq!(
        exited(exit(None, Some(1)).as_ref(), "Traceback").unwrap().0,
        Outcome::Crashed
    );
}

#[test]
fn timeouts_integrity_and_errors_in_that_order() {
    let late = Evidence {
        timed_out: true,
        timeout_s: Some(300.0),
        violations: 1,
        ..sessions(1, 1)
    };
    let t = outcome(&late).unwrap();
    assert_eq!(t.0, Outcome::Timeout);
    assert!(
        w(&t.1).contains("after the step timeout of 300 s"),
        "{}",
        w(&t.1)
    );
    let corrupt = Evidence {
        violations: 1,
        ..sessions(1, 1)
    };
    assert_eq!(outcome(&corrupt).unwrap().0, Outcome::Integrity);
    let reasoning = Evidence {
        violations: 2,
        violations_by_kind: vec![("reasoning".to_string(), 2)],
        ..sessions(1, 1)
    };
    let r = outcome(&reasoning).unwrap();
    assert!(
        w(&r.1).starts_with("2 integrity violations (2 reasoning: thinking blocks"),
        "{}",
        w(&r.1)
    );
    // Isolation violations while every session sent one conversation id: the session
    // file's doing, said so, pointing at the fix (issue 40).
    let shared = Evidence {
        violations: 4,
        violations_by_kind: vec![("isolation".to_string(), 4)],
        shared_values: vec![
            "`session` = \"plimsoll\" in the JSON body of request `turn` (session.toml:4)".into(),
        ],
        ..sessions(2, 0)
    };
    let s = outcome(&shared).unwrap();
    assert_eq!(s.0, Outcome::Integrity);
    assert!(
        w(&s.1).starts_with("4 integrity violations (4 isolation): every session sent the same value in a field that names a conversation (`session` = \"plimsoll\" in the JSON body of request `turn` (session.toml:4)), so the SUT kept one conversation for all of them — the session file's doing"),
        "{}",
        w(&s.1)
    );
    // History violations alone are the SUT's, shared value or not.
    let history = Evidence {
        violations_by_kind: vec![("history".to_string(), 4)],
        ..shared
    };
    assert!(w(&outcome(&history).unwrap().1).ends_with("the SUT's conversations were corrupted"));
    let e = outcome(&sessions(1, 1)).unwrap();
    assert_eq!(e.0, Outcome::ErrorRate);
    assert!(w(&e.1).contains("1 of 2 sessions failed"), "{}", w(&e.1));
    assert_eq!(outcome(&sessions(2, 0)), None);
    assert_eq!(error_rate(&sessions(0, 0)), None, "no sessions, no rate");
    let within = Evidence {
        error_rate: 0.2,
        ..sessions(9, 1)
    };
    assert_eq!(error_rate(&within), None, "within the threshold");
    let calls = Evidence {
        first_errors: vec![(
            "timeout".to_string(),
            "call c1 turn 1: never answered".to_string(),
        )],
        unit: result::words::Unit::Call,
        ..sessions(0, 2)
    };
    let said = w(&error_rate(&calls).unwrap().1);
    assert!(
        said.starts_with("2 of 2 calls failed")
            && said.ends_with("(threshold 0); first: timeout: call c1 turn 1: never answered"),
        "{said}"
    );
}

#[test]
fn shards_that_are_not_one_run_are_unknown_before_anything_else() {
    let e = Evidence {
        unknown: Some("shard 2 of 4 missing".into()),
        timed_out: true,
        ..sessions(0, 3)
    };
    assert_eq!(
        outcome(&e),
        Some((
            Outcome::Unknown,
            Cause::Unknown {
                why: "shard 2 of 4 missing".into()
            }
        ))
    );
    let where_ = Evidence {
        timed_out: true,
        timeout_where: Some("shard 1".into()),
        ..sessions(3, 0)
    };
    assert!(w(&outcome(&where_).unwrap().1).ends_with("timeout (shard 1)"));
}

#[test]
fn a_bus_loses_duplicates_and_reorders_only_when_order_was_promised() {
    let b = Bus {
        lost: 2,
        duplicated: 1,
        out_of_order: 5,
        ..Bus::default()
    };
    let kinds = bus_violations(&b);
    assert_eq!(kinds.len(), 2);
    let ordered = bus_violations(&Bus { ordered: true, ..b });
    assert_eq!(ordered[2], ("out of order".to_string(), 5));
    let o = outcome(&Evidence {
        violations: 3,
        violations_by_kind: kinds,
        ..sessions(4, 0)
    })
    .unwrap();
    assert!(
        w(&o.1).ends_with("the bus lost, duplicated or reordered messages"),
        "{}",
        w(&o.1)
    );
}

#[test]
fn late_mock_or_driver_makes_a_step_harness_bound() {
    use result::Bound;
    assert_eq!(harness_bound(1.0, 1.0, 25.0, Some(100.0)), Bound::Sut);
    assert_eq!(harness_bound(30.0, 1.0, 25.0, Some(100.0)), Bound::Harness);
    assert_eq!(harness_bound(1.0, 30.0, 25.0, None), Bound::Harness);
    // 15 ms late on 7.8-second turns is not material.
    assert_eq!(harness_bound(15.0, 1.0, 10.0, Some(7800.0)), Bound::Sut);
}
