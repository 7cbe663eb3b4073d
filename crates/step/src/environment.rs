//! Where a run happened: the machine, its kernel, the cap method, the core partition,
//! the SUT's git commit and command — stored with every run so an old one can be read.

use crate::options::StepOptions;
use experiment::Config;
use result::environment::{EnvCap, EnvPartition, EnvProbe, EnvService, Environment};

/// Where Plimsoll ran and what it ran (machine, kernel, cap method, partition, the
/// SUT's git commit and command), stored with every run of a ramp or a soak.
pub fn describe(cfg: &Config, opts: &StepOptions) -> Environment {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let mem_gb = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| (kb / 1048576.0 * 10.0).round() / 10.0);
    let git = std::process::Command::new("git")
        .arg("-C")
        .arg(&cfg.cwd)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    Environment {
        machine: probe::machine::fingerprint(),
        memory_gb: mem_gb,
        kernel: read("/proc/sys/kernel/osrelease"),
        // The method a step's cap will use, found the way a step finds it (and removed again).
        cap: opts.cap.map(|c| EnvCap {
            cpus: c.cpus,
            mem_bytes: c.mem_bytes,
            method: cap::Cap::create(c, "probe").method.to_string(),
            cpu_by: Some(c.by.name().into()),
        }),
        sut_git_commit: git,
        partition: opts.partition.as_ref().map(|p| EnvPartition {
            harness: probe::affinity::list(&p.harness),
            sut: probe::affinity::list(&p.sut),
            method: "affinity".into(),
        }),
        plimsoll_version: env!("CARGO_PKG_VERSION").into(),
        sut_command: cfg.command.clone(),
        sut_env: cfg.env.clone(),
        arm: cfg.arm.clone(),
        replicas: cfg.replicas,
        services: cfg
            .services
            .iter()
            .map(|s| EnvService {
                name: s.name.clone(),
                command: s.command.clone(),
            })
            .collect(),
        probes: cfg
            .watches
            .iter()
            .map(|w| EnvProbe {
                name: w.name.clone(),
                target: w.target.describe(),
            })
            .collect(),
        ..Environment::default()
    }
}
