//! A SUT whose cpuset is larger than its quota (issue 49): the demo at a 0.5-core cap
//! holds the floor agent to one core under half a core of quota, so the kernel throttles
//! it. That is the cap at work: the verdict says "throttled", names no busy machine and
//! no wait for a CPU, and no step is marked busy. On a 16-core machine the same misreading
//! called an idle machine busy.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_plimsoll");

#[test]
fn a_throttled_sut_is_the_cap_at_work_not_a_busy_machine() {
    let out = std::env::temp_dir().join(format!("plimsoll-quota-test-{}", std::process::id()));
    let o = Command::new(BIN)
        .args(["demo", "--cpus", "0.5", "--ladder", "4,8,16", "--out"])
        .arg(&out)
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    // The demo tells its table and verdict on stderr, as a ramp does.
    let stdout = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{stdout}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    let steps = doc["steps"].as_array().unwrap();
    let cap = &steps[0]["cap"];
    if cap["method"] == "affinity" {
        eprintln!("skipped: no writable cgroup here, so no quota to throttle the SUT");
        return;
    }
    assert_eq!(cap["cpu_by"], "cpuset", "{cap}");
    // At 16 sessions the floor agent wants far more than half a core: throttled.
    let top = steps.last().unwrap();
    assert!(top["cpu_throttled"].as_f64().unwrap() >= 0.5, "{top}");
    // A hypervisor that stole a tenth of the VM's cores made a step busy for real: then
    // only the throttling's words are checked, not the absence of "busy".
    let stolen = steps
        .iter()
        .any(|s| s["interference"]["steal_share"].as_f64().unwrap_or(0.0) >= 0.1);
    if stolen {
        eprintln!("the hypervisor stole ≥ 10 % of the cores in a step: busy for real, not checked");
    }
    for s in steps.iter().filter(|_| !stolen) {
        assert_eq!(s["interference"]["contaminated"], false, "{s}");
    }
    let verdict = stdout
        .lines()
        .find(|l| l.starts_with("verdict: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(verdict.contains("wall: CPU (0.5-core cap"), "{verdict}");
    assert!(stolen || !verdict.contains("busy"), "{verdict}");
    let told: String = stdout
        .lines()
        .skip_while(|l| !l.starts_with("verdict: "))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(told.contains("throttled in"), "{told}");
    assert!(
        told.contains("by a 0.5-core quota on a cpuset of 1 core"),
        "{told}"
    );
    let wrong: &[&str] = match stolen {
        false => &["machine busy", "busy:", "for a CPU", "queue for the cores"],
        true => &["queue for the cores"],
    };
    for w in wrong {
        assert!(!told.contains(w), "{w:?} in:\n{told}");
    }
}
