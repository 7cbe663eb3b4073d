use super::*;
use result::{CapInfo, Interference, Partition};

fn step(cap: f64, on: Option<&str>, part: &str, others: f64, throttled: f64) -> StepResult {
    StepResult {
        cap: Some(CapInfo {
            method: "cgroup-v2".into(),
            cpus: cap,
            mem_mb: 1024.0,
            cpu_by: None,
            on: on.map(str::to_string),
        }),
        partition: Some(Partition {
            harness: "0".into(),
            sut: part.into(),
            method: "cpuset".into(),
        }),
        cpu_throttled: Some(throttled),
        interference: Some(Interference {
            others_share: others,
            cores: cap,
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn the_cores_a_kernel_list_names() {
    assert_eq!(count_list("2-15"), 14);
    assert_eq!(count_list("0,3-4"), 3);
    assert_eq!(count_list("1"), 1);
    assert_eq!(count_list(""), 0);
}

#[test]
fn how_the_cap_was_held() {
    let s = |cap, on| step(cap, on, "2-15", 0.0, 0.0);
    assert_eq!(how(&s(1.0, None)).unwrap(), "a 1-core quota over 14 cores");
    assert_eq!(how(&s(1.0, Some("2"))).unwrap(), "a cpuset of 1 core");
    assert_eq!(
        how(&s(0.5, Some("2"))).unwrap(),
        "a 0.5-core quota on a cpuset of 1 core"
    );
    assert_eq!(how(&s(2.0, Some("2,3"))).unwrap(), "a cpuset of 2 cores");
    assert_eq!(how(&StepResult::default()), None);
}

#[test]
fn others_count_only_past_the_spare_cores() {
    // A tenth of a core on fourteen cores under a 1-core quota: nothing the SUT lost.
    assert_eq!(denied(&step(1.0, None, "2-15", 0.1, 0.9)), Some(0.0));
    // The same on a cpuset of one core: all of it was the SUT's.
    let one = step(1.0, Some("2"), "2-15", 0.18, 0.0);
    assert!((denied(&one).unwrap() - 0.18).abs() < 1e-9);
    assert!(contaminated(&one));
    // A 0.5-core quota on one core: others past the spare half core are the loss.
    let half = step(0.5, Some("1"), "1", 1.4, 0.9);
    assert!(
        (denied(&half).unwrap() - 0.4).abs() < 1e-9,
        "{:?}",
        denied(&half)
    );
    assert!(!contaminated(&step(0.5, Some("1"), "1", 0.9, 0.9)));
    // Throttling is the cap's: it is named, never a busy machine.
    let s = step(1.0, None, "2-15", 0.0, 0.93);
    assert_eq!(
        throttle_words(&s).unwrap(),
        "throttled in 93 % of its periods by a 1-core quota over 14 cores"
    );
    assert!(!contaminated(&s));
    assert!(throttled(&step(1.0, None, "2-15", 0.0, 0.02)).is_none());
}

#[test]
fn a_quota_as_large_as_its_cpuset_throttles_nothing_the_cores_do_not() {
    // A 1-core quota on a cpuset of one core: a throttled period is a full core, its
    // threads queue for it — the run queue's words stand, not the quota's.
    let s = step(1.0, Some("1"), "1", 0.0, 0.3);
    assert!(throttled(&s).is_none() && held_below_cores(&s).is_none());
    // Affinity alone holds no quota: no spare to subtract, nothing throttles.
    let mut a = step(0.5, Some("1"), "1", 0.3, 0.0);
    a.cap.as_mut().unwrap().method = "affinity".into();
    assert!((denied(&a).unwrap() - 0.3).abs() < 1e-9);
    // A 0.5-core quota on one core is a quota below its cores.
    let half = step(0.5, Some("1"), "1", 0.0, 0.6);
    assert_eq!(
        throttle_words(&half).unwrap(),
        "throttled in 60 % of its periods by a 0.5-core quota on a cpuset of 1 core"
    );
}

/// The wall's words say the quota's throttling as the finding's do (one phrase, in
/// `words`): a 1-core quota over 14 cores, throttled in 93 % of its periods.
#[test]
fn the_walls_reach_says_the_throttling_with_how_the_quota_held() {
    let mut s = step(1.0, None, "2-15", 0.0, 0.93);
    s.concurrency = 16;
    s.cpu_cores = Some(1.0);
    s.cpu_of_cap = Some(0.99);
    let said = reach_words(&crate::reading::sample(&s), 0.9);
    assert!(
        said.ends_with(", throttled in 93 % of its periods by a 1-core quota over 14 cores"),
        "{said}"
    );
    // No quota below its cores: no throttling said.
    let own = step(1.0, Some("1"), "1", 0.0, 0.93);
    assert!(!reach_words(&crate::reading::sample(&own), 0.9).contains("throttled"));
}
