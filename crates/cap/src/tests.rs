use super::*;

#[test]
fn reads_the_throttled_share_of_periods() {
    let v1 = "nr_periods 200\nnr_throttled 150\nthrottled_time 9000000\n";
    assert_eq!(throttled_share(v1), Some(0.75));
    let v2 = "usage_usec 1\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n";
    assert_eq!(throttled_share(v2), None);
    assert_eq!(throttled_share(""), None);
}

#[test]
fn parses_sizes() {
    assert_eq!(parse_mem("2G").unwrap(), 2 << 30);
    assert_eq!(parse_mem("512m").unwrap(), 512 << 20);
    assert_eq!(parse_mem("1.5G").unwrap(), 3 << 29);
    assert_eq!(parse_mem("100").unwrap(), 100 << 20);
    assert!(parse_mem("lots").unwrap_err().contains("2G"));
    assert!(parse_mem("0").is_err());
}

#[test]
fn a_cpuset_cap_is_a_small_box_and_a_quota_spreads() {
    let spec = |cpus, by| CapSpec {
        cpus,
        mem_bytes: 1 << 30,
        by,
    };
    let sut: Vec<usize> = (2..16).collect();
    assert_eq!(cores_for(&spec(1.0, CpuBy::Cpuset), &sut), vec![2]);
    assert_eq!(cores_for(&spec(0.5, CpuBy::Cpuset), &sut), vec![2]);
    assert_eq!(cores_for(&spec(2.5, CpuBy::Cpuset), &sut), vec![2, 3, 4]);
    assert_eq!(cores_for(&spec(1.0, CpuBy::Quota), &sut), sut);
    // More cores asked than there are: every one; no partition: any core.
    assert_eq!(cores_for(&spec(4.0, CpuBy::Cpuset), &[1]), vec![1]);
    assert!(cores_for(&spec(1.0, CpuBy::Cpuset), &[]).is_empty());
    assert_eq!(CpuBy::parse("quota"), Ok(CpuBy::Quota));
    assert!(CpuBy::parse("spread").unwrap_err().contains("cpuset"));
}

#[test]
fn systemd_scope_is_used_only_when_a_trial_run_works() {
    let wrapped = Cap {
        method: "systemd-run",
        spec: CapSpec {
            cpus: 1.5,
            mem_bytes: 1 << 30,
            by: CpuBy::Quota,
        },
        dirs: vec![],
        cores: None,
        systemd_user: Some(true),
        cpuset: false,
        on: String::new(),
    }
    .wrap(&["agent".to_string(), "--x".to_string()]);
    assert_eq!(
        wrapped,
        [
            "systemd-run",
            "--user",
            "--scope",
            "--quiet",
            "-p",
            "MemoryMax=1073741824",
            "-p",
            "CPUQuota=150%",
            "--",
            "agent",
            "--x"
        ]
    );
    // Where the trial fails (no systemd as init, as on these machines), the next method is taken.
    if systemd_scope().is_none() {
        assert_ne!(
            Cap::create(CapSpec::default(), "probe").method,
            "systemd-run"
        );
    }
}

#[test]
fn creates_and_removes_its_cgroups() {
    let mut cap = Cap::create(
        CapSpec {
            cpus: 1.0,
            mem_bytes: 256 << 20,
            by: CpuBy::Cpuset,
        },
        "unit",
    );
    let dirs = cap.dirs.clone();
    if cap.method == "affinity" {
        assert!(cap.warning().unwrap().contains("MEMORY IS NOT CAPPED"));
        return;
    }
    assert!(dirs.iter().all(|d| d.exists()));
    let wrapped = cap.wrap(&["true".to_string()]);
    let st = std::process::Command::new(&wrapped[0])
        .args(&wrapped[1..])
        .status()
        .unwrap();
    assert!(st.success());
    cap.remove();
    assert!(dirs.iter().all(|d| !d.exists()));
}
