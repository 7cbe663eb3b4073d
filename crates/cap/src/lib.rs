//! Caps the CPU and memory of one step's system under test without Docker — a cgroup
//! (v2, a systemd scope, or v1) made for it, or CPU affinity alone when none can be —
//! and removes the cap afterwards.
//!
//! Detection order: cgroup v2 with the `memory` and `cpu` controllers available and
//! writable; `systemd-run --scope` (a transient scope with MemoryMax and CPUQuota, used
//! when a trial run of it succeeds: it needs systemd as init, or a user manager);
//! cgroup v1 `memory` and `cpu` hierarchies; else CPU affinity only (the SUT is pinned
//! to the first N cores) with a loud warning that memory is not capped. The SUT is moved
//! into a cgroup by a `sh` wrapper that writes its own pid to `cgroup.procs` and then
//! `exec`s the command; systemd removes its transient scope by itself when the SUT ends.

use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapSpec {
    pub cpus: f64,
    pub mem_bytes: u64,
    /// How the CPU cap is held on a machine with more cores than the cap.
    pub by: CpuBy,
}

impl Default for CapSpec {
    fn default() -> Self {
        CapSpec {
            cpus: 2.0,
            mem_bytes: 2 << 30,
            by: CpuBy::Cpuset,
        }
    }
}

/// How a CPU cap of `cpus` cores is held where the SUT could run on more cores than that.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CpuBy {
    /// A small box: the SUT runs on ceil(cpus) cores of its own (a cpuset), under a quota
    /// of `cpus` too, which binds only where `cpus` is a fraction of a core. Its threads
    /// queue for those cores as on a machine of that size, so the line does not move with
    /// the size of the machine it ran on.
    #[default]
    Cpuset,
    /// A quota (`cpu.max`) over every core the SUT may use, as `docker run --cpus` and
    /// Kubernetes CPU limits do: its threads run on many cores at once in bursts, then
    /// wait out the rest of each 100 ms period throttled.
    Quota,
}

impl CpuBy {
    /// "cpuset" or "quota": the name RESULT and `--cpu-by` use.
    pub fn name(self) -> &'static str {
        match self {
            CpuBy::Cpuset => "cpuset",
            CpuBy::Quota => "quota",
        }
    }

    /// From its name; the error says which names there are.
    pub fn parse(s: &str) -> Result<CpuBy, String> {
        match s {
            "cpuset" => Ok(CpuBy::Cpuset),
            "quota" => Ok(CpuBy::Quota),
            _ => Err(format!(
                "--cpu-by {s:?}: write cpuset (ceil(--cpus) cores of its own, a small box) or quota (a quota over every core it may use, as docker --cpus and Kubernetes limits)"
            )),
        }
    }
}

/// Cores as the kernel reads them in cpuset.cpus and taskset: "2,3,4".
fn joined(cores: &[usize]) -> String {
    cores
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The cores a cap holds the SUT to, out of the cores it may use (`cores`, in order): the
/// first ceil(cpus) of them for a cpuset, every one for a quota. Empty `cores` (the SUT
/// shares the machine with Plimsoll, no partition) stays empty: any core.
pub fn cores_for(spec: &CapSpec, cores: &[usize]) -> Vec<usize> {
    match spec.by {
        CpuBy::Quota => cores.to_vec(),
        CpuBy::Cpuset => {
            let n = (spec.cpus.ceil() as usize).max(1);
            cores[..n.min(cores.len())].to_vec()
        }
    }
}

/// Parses `2G`, `512M`, `1.5G`, `2048` (MiB without a unit).
pub fn parse_mem(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_uppercase();
    let (num, mult) = match t.chars().last() {
        Some('G') => (&t[..t.len() - 1], 1u64 << 30),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('K') => (&t[..t.len() - 1], 1 << 10),
        _ => (t.as_str(), 1 << 20),
    };
    let v: f64 = num
        .trim_end_matches('B')
        .parse()
        .map_err(|_| format!("--mem {s:?}: write a size such as 2G or 512M"))?;
    if v.is_nan() || v <= 0.0 {
        return Err(format!("--mem {s:?}: must be more than 0"));
    }
    Ok((v * mult as f64) as u64)
}

/// A cap in force for one step.
#[derive(Debug)]
pub struct Cap {
    pub method: &'static str,
    pub spec: CapSpec,
    /// cgroup directories to join (one for v2; memory and cpu for v1).
    dirs: Vec<PathBuf>,
    /// CPU affinity fallback: pin to these cores.
    pub cores: Option<usize>,
    /// systemd-run: whether to use the user manager (`--user`) rather than the system one.
    systemd_user: Option<bool>,
    /// The SUT's cores are held by a cgroup cpuset (v1 or v2), not only by its affinity.
    pub cpuset: bool,
    /// The cores asked for (a kernel core list; empty: any).
    on: String,
}

fn writable_dir(parent: &Path, name: &str) -> Option<PathBuf> {
    let dir = parent.join(name);
    std::fs::create_dir(&dir).ok()?;
    // Should Plimsoll die before it removes the cgroup, its watchdog does it.
    guard::add(&guard::Item::Cgroup(dir.clone()));
    Some(dir)
}

/// Removes a cgroup directory (its processes gone); withdraws it from the watchdog.
fn remove_cgroup(dir: &Path) -> bool {
    let gone = std::fs::remove_dir(dir).is_ok() || !dir.exists();
    if gone {
        guard::remove(&guard::Item::Cgroup(dir.to_path_buf()));
    }
    gone
}

/// A cgroup v1 cpuset named `name` holding `cores` (with the root's memory nodes),
/// added to `dirs`; false when none could be made.
fn v1_cpuset(name: &str, cores: &str, dirs: &mut Vec<PathBuf>) -> bool {
    let root = Path::new("/sys/fs/cgroup/cpuset");
    match writable_dir(root, name) {
        Some(d) => {
            let mems = std::fs::read_to_string(root.join("cpuset.mems")).unwrap_or_default();
            let ok =
                write(&d.join("cpuset.mems"), mems.trim()) && write(&d.join("cpuset.cpus"), cores);
            if ok {
                dirs.push(d);
            } else {
                remove_cgroup(&d);
            }
            ok
        }
        None => false,
    }
}

fn write(p: &Path, v: &str) -> bool {
    std::fs::write(p, v).is_ok()
}

impl Cap {
    /// Creates a fresh cgroup named after this process and `tag`; falls back as the
    /// module says. Never fails: the weakest fallback is "no cap" with a warning.
    pub fn create(spec: CapSpec, tag: &str) -> Cap {
        Cap::create_on(spec, tag, &[])
    }

    /// As `create`, and with `cores` (empty for any) the SUT is held to the cores the cap
    /// gives it out of them ([`cores_for`]): by a cpuset, where the kernel offers one,
    /// and by its affinity.
    pub fn create_on(spec: CapSpec, tag: &str, cores: &[usize]) -> Cap {
        let list = joined(&cores_for(&spec, cores));
        let name = format!("plimsoll-{}-{tag}", std::process::id());
        let quota = (spec.cpus * 100_000.0).round().max(1_000.0) as u64;
        if let Some(cap) = Cap::cgroup_v2(spec, &name, quota, &list) {
            return cap;
        }
        if let Some(user) = systemd_scope() {
            let mut cap = Cap::plain("systemd-run", spec, Vec::new(), &list);
            cap.systemd_user = Some(user);
            return cap;
        }
        if let Some(cap) = Cap::cgroup_v1(spec, &name, quota, &list) {
            return cap;
        }
        // Affinity alone holds no quota: pin to ceil(cpus) cores, whichever way was asked.
        let small = cores_for(
            &CapSpec {
                by: CpuBy::Cpuset,
                ..spec
            },
            cores,
        );
        let online = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut cap = Cap::plain("affinity", spec, Vec::new(), &joined(&small));
        cap.cores = Some(match small.len() {
            0 => (spec.cpus.ceil() as usize).clamp(1, online),
            n => n,
        });
        cap
    }

    /// The cores the cap holds the SUT to (a kernel core list; empty: any).
    pub fn on(&self) -> &str {
        &self.on
    }

    /// A cap by `method` joining `dirs`, with no affinity, scope or cpuset (yet).
    fn plain(method: &'static str, spec: CapSpec, dirs: Vec<PathBuf>, on: &str) -> Cap {
        Cap {
            method,
            spec,
            dirs,
            cores: None,
            systemd_user: None,
            cpuset: false,
            on: on.to_string(),
        }
    }

    /// A cgroup v2 named `name` with memory.max and cpu.max (and a cpuset for `cores`),
    /// where a root offers the memory and cpu controllers and lets us write.
    fn cgroup_v2(spec: CapSpec, name: &str, quota: u64, cores: &str) -> Option<Cap> {
        for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
            let root = Path::new(root);
            let ctl = std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
            if !(ctl.split_whitespace().any(|c| c == "memory")
                && ctl.split_whitespace().any(|c| c == "cpu"))
            {
                continue;
            }
            let _ = write(&root.join("cgroup.subtree_control"), "+memory +cpu");
            let Some(dir) = writable_dir(root, name) else {
                continue;
            };
            let ok = write(&dir.join("memory.max"), &spec.mem_bytes.to_string())
                && write(&dir.join("cpu.max"), &format!("{quota} 100000"));
            let _ = write(&dir.join("memory.swap.max"), "0");
            if ok {
                let cpuset = !cores.is_empty()
                    && ctl.split_whitespace().any(|c| c == "cpuset")
                    && write(&root.join("cgroup.subtree_control"), "+cpuset")
                    && write(&dir.join("cpuset.cpus"), cores);
                let mut cap = Cap::plain("cgroup-v2", spec, vec![dir], cores);
                cap.cpuset = cpuset;
                return Some(cap);
            }
            remove_cgroup(&dir);
        }
        None
    }

    /// cgroup v1 `memory` and `cpu` groups named `name` (and a `cpuset` one for `cores`).
    fn cgroup_v1(spec: CapSpec, name: &str, quota: u64, cores: &str) -> Option<Cap> {
        let (mem_root, cpu_root) = (
            Path::new("/sys/fs/cgroup/memory"),
            Path::new("/sys/fs/cgroup/cpu"),
        );
        let (Some(m), Some(c)) = (writable_dir(mem_root, name), writable_dir(cpu_root, name))
        else {
            return None;
        };
        let ok = write(
            &m.join("memory.limit_in_bytes"),
            &spec.mem_bytes.to_string(),
        ) && write(&c.join("cpu.cfs_period_us"), "100000")
            && write(&c.join("cpu.cfs_quota_us"), &quota.to_string());
        let _ = write(
            &m.join("memory.memsw.limit_in_bytes"),
            &spec.mem_bytes.to_string(),
        );
        if !ok {
            remove_cgroup(&m);
            remove_cgroup(&c);
            return None;
        }
        let mut dirs = vec![m, c];
        let cpuset = !cores.is_empty() && v1_cpuset(name, cores, &mut dirs);
        let mut cap = Cap::plain("cgroup-v1", spec, dirs, cores);
        cap.cpuset = cpuset;
        Some(cap)
    }

    /// A warning to print, when the cap is weaker than asked.
    pub fn warning(&self) -> Option<String> {
        (self.method == "affinity").then(|| {
            format!(
                "WARNING: no writable cgroup here (run as root, or enable the memory and cpu controllers): \
                 the SUT is only pinned to {} and its MEMORY IS NOT CAPPED",
                match self.cores.unwrap_or(1) {
                    1 => "1 core".to_string(),
                    n => format!("{n} cores"),
                }
            )
        })
    }

    /// The SUT's command, wrapped so it joins the cgroup (or pins its cores) first.
    pub fn wrap(&self, command: &[String]) -> Vec<String> {
        if let Some(user) = self.systemd_user {
            let mut out = vec!["systemd-run".to_string()];
            if user {
                out.push("--user".into());
            }
            out.extend(systemd_props(self.spec));
            out.push("--".into());
            out.extend(command.iter().cloned());
            return out;
        }
        let mut script = String::new();
        for d in &self.dirs {
            script.push_str(&format!(
                "echo $$ > '{}/cgroup.procs' || exit 97; ",
                d.display()
            ));
        }
        if let Some(n) = self.cores {
            if which("taskset") {
                // On a partitioned machine the SUT's own cores; else the first n.
                let list = if self.on.is_empty() {
                    format!("0-{}", n - 1)
                } else {
                    self.on.clone()
                };
                script.push_str(&format!("exec taskset -c {list} \"$@\""));
            } else {
                script.push_str("exec \"$@\"");
            }
        } else {
            script.push_str("exec \"$@\"");
        }
        let mut out = vec![
            "sh".to_string(),
            "-c".to_string(),
            script,
            "plimsoll-cap".to_string(),
        ];
        out.extend(command.iter().cloned());
        out
    }

    /// The share of CPU periods in which the kernel throttled the cgroup (cpu.stat's
    /// nr_throttled / nr_periods, v1 and v2); None without a cgroup or before a period.
    pub fn cpu_throttled(&self) -> Option<f64> {
        self.dirs.iter().find_map(|d| {
            let text = std::fs::read_to_string(d.join("cpu.stat")).ok()?;
            throttled_share(&text)
        })
    }

    /// The cgroup's own CPU pressure file (cgroup v2), when it has one.
    pub fn pressure_file(&self) -> Option<PathBuf> {
        (self.method == "cgroup-v2")
            .then(|| self.dirs.first().map(|d| d.join("cpu.pressure")))
            .flatten()
            .filter(|f| f.exists())
    }

    /// Removes the cgroups (after the SUT has been stopped and reaped).
    pub fn remove(&mut self) {
        for d in self.dirs.drain(..) {
            // A cgroup can only go once its last process is gone; give the kernel a moment.
            for _ in 0..50 {
                if remove_cgroup(&d) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
}

impl Drop for Cap {
    fn drop(&mut self) {
        self.remove();
    }
}

fn systemd_props(spec: CapSpec) -> Vec<String> {
    vec![
        "--scope".into(),
        "--quiet".into(),
        "-p".into(),
        format!("MemoryMax={}", spec.mem_bytes),
        "-p".into(),
        format!("CPUQuota={}%", (spec.cpus * 100.0).round() as u64),
    ]
}

/// Whether a transient scope can be made here: `Some(user)` after a trial run of
/// `systemd-run --scope … true` succeeded (system manager as root, else the user one).
/// Probed once per process.
fn systemd_scope() -> Option<bool> {
    static PROBE: std::sync::OnceLock<Option<bool>> = std::sync::OnceLock::new();
    *PROBE.get_or_init(|| {
        if !which("systemd-run") {
            return None;
        }
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let tries: &[bool] = if root { &[false, true] } else { &[true] };
        tries.iter().copied().find(|&user| {
            let mut cmd = std::process::Command::new("systemd-run");
            if user {
                cmd.arg("--user");
            }
            cmd.args(systemd_props(CapSpec {
                cpus: 1.0,
                mem_bytes: 64 << 20,
                by: CpuBy::Quota,
            }))
            .arg("true")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
            let Ok(mut child) = cmd.spawn() else {
                return false;
            };
            // A bus that does not answer must not stall the ramp: 3 s, then give up.
            for _ in 0..150 {
                if let Ok(Some(status)) = child.try_wait() {
                    return status.success();
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
            false
        })
    })
}

/// nr_throttled / nr_periods from a cpu.stat text.
fn throttled_share(cpu_stat: &str) -> Option<f64> {
    let field = |name: &str| {
        cpu_stat.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == name).then(|| v.trim().parse::<f64>().ok()).flatten()
        })
    };
    let periods = field("nr_periods")?;
    (periods > 0.0).then(|| field("nr_throttled").unwrap_or(0.0) / periods)
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

#[cfg(test)]
mod tests;
