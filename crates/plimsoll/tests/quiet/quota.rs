//! A SUT whose cpuset is larger than its quota (issue 49): the demo at a 0.5-core cap
//! holds the floor agent to one core under half a core of quota, so the kernel throttles
//! it. That is the cap at work: the verdict says "throttled", names no busy machine and
//! no wait for a CPU, and no step is marked busy. On a 16-core machine the same misreading
//! called an idle machine busy.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_plimsoll");

/// Seconds of CPU the whole machine spent busy so far (/proc/stat: every state but idle
/// and iowait), and what this test's waited-for children used (the demo and its SUT).
fn busy_and_ours() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<f64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let busy: f64 = ticks
        .iter()
        .enumerate()
        .filter(|(i, _)| !matches!(i, 3 | 4 | 8 | 9)) // idle, iowait; guest is in user
        .map(|(_, t)| t)
        .sum::<f64>()
        / hz;
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (busy, secs(ru.ru_utime) + secs(ru.ru_stime))
}

#[test]
fn a_throttled_sut_is_the_cap_at_work_not_a_busy_machine() {
    let out = std::env::temp_dir().join(format!("plimsoll-quota-test-{}", std::process::id()));
    // What else ran on the machine meanwhile, measured here: a machine that really was
    // busy (another build, another test) makes "busy" the right verdict, not a wrong one.
    let ((busy0, ours0), t0) = (busy_and_ours(), std::time::Instant::now());
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
    let (busy1, ours1) = busy_and_ours();
    let others = (busy1 - busy0 - (ours1 - ours0)).max(0.0) / t0.elapsed().as_secs_f64();
    let stolen = steps
        .iter()
        .any(|s| s["interference"]["steal_share"].as_f64().unwrap_or(0.0) >= 0.1);
    if stolen {
        eprintln!("the hypervisor stole ≥ 10 % of the cores in a step: busy for real, not checked");
    }
    // Others used a quarter of a core or more on average over the run: busy for real.
    let stolen = stolen || others >= 0.25;
    if others >= 0.25 {
        eprintln!(
            "other processes used {others:.2} cores during the run: busy for real, not checked"
        );
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
