//! `plimsoll.toml`: a whole experiment. Every field has a default; paths are relative
//! to the file.
//!
//! ```toml
//! [sut]
//! command = ["{{plimsoll}}", "floor", "--listen", "127.0.0.1:{{port}}"]
//! ready = "http"            # "http" (GET ready_path answers 2xx), "port", or "log"
//! ready_path = "/health"
//! ready_log = "listening"   # with ready = "log": a line of output containing this
//! ready_timeout_s = 30
//! stop_grace_s = 5
//! port = 0                  # 0: Plimsoll picks a free port, passed as {{port}}, PORT and PLIMSOLL_SUT_PORT
//! cwd = "."
//! env = { LOG_LEVEL = "warn" }
//! # Its own log is read for warnings and errors (Python logging, Go log/slog, Rust
//! # tracing, JSON lines with a level); lines matching this regex count as warnings too.
//! log_pattern = "heartbeat .* (timeout|deadline)"
//!
//! [mock]
//! scenario = "../../scenarios/memory.toml"   # default: the built-in chat defaults
//! seed = 1
//!
//! [session]
//! file = "session.toml"
//!
//! [step]
//! concurrency = 20
//! timeout_s = 300
//! sample_ms = 50
//! # arrival_rate = 20      # open model: `concurrency` sessions arrive at 20/s instead of all at once
//! # probe_path = "/health" # a GET every 100 ms beside the load: probe_p50_ms, probe_p99_ms
//! # slow_share = 0.1       # slow consumers: this share of the sessions read replies slowly
//! # slow_read_bps = 65536  # at this many bytes a second
//! # resident = 200         # 200 sessions opened first ([[setup]]), `concurrency` of them active at a time
//!
//! [thresholds]
//! error_rate = 0.0          # failed sessions / sessions above this: outcome "error_rate"
//! p99_session_ms = 0        # 0 = no limit; above it: exit code 2
//! peak_rss_mb = 0           # 0 = no limit; above it: exit code 2
//! harness_lag_ms = 10       # mock lateness or driver lag p99 above this (and above 5 % of
//!                           # the p50 turn): harness-bound
//!
//! [budget]                  # what "holds" means for a ramp's verdict (--budget overrides)
//! latency_inflation = 2.0   # p50 session time / the mock's own time
//! # latency_vs_single = 2.0 # p50 session time / the same SUT's at the first level
//! # p99_turn_ms = 800
//! # p99_ttft_ms = 500
//! error_rate = 0.0          # failed sessions / sessions
//! # rss_mb = 512            # peak RSS of the SUT's process tree
//! ```
//!
//! In `command` and `env`, `{{port}}` is the SUT's port, `{{mock}}` the mock's base URL
//! and `{{plimsoll}}` this executable.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// A plimsoll.toml that cannot be used, with where and why.
pub type ConfigError = spans::FileError;

#[derive(Clone, Debug, PartialEq)]
pub enum ReadyKind {
    Http(String),
    Port,
    Log(String),
}

#[derive(Clone, Debug)]
pub struct Config {
    pub file: PathBuf,
    /// The SUT (empty when only a harness is given).
    pub command: Vec<String>,
    /// Harness mode: this command drives its own sessions and prints a RESULT line.
    pub harness: Option<Vec<String>>,
    pub ready: ReadyKind,
    pub ready_timeout_s: f64,
    pub stop_grace_s: f64,
    pub port: u16,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    /// Lines of the SUT's log matching this count as warnings.
    pub log_pattern: Option<regex::Regex>,
    pub scenario: Option<PathBuf>,
    pub seed: u64,
    pub session_file: PathBuf,
    pub concurrency: usize,
    pub timeout_s: f64,
    pub sample_ms: u64,
    /// Open model: sessions per second (`concurrency` sessions arrive at this rate).
    pub arrival_rate: Option<f64>,
    /// Resident sessions: this many opened first, `concurrency` of them active at a time.
    pub resident: Option<usize>,
    /// The responsiveness probe's path on the SUT (`/health`).
    pub probe_path: Option<String>,
    /// Slow consumers: (share of the sessions, bytes a second they read).
    pub slow: Option<(f64, f64)>,
    pub error_rate: f64,
    pub p99_session_ms: f64,
    pub peak_rss_mb: f64,
    pub harness_lag_ms: f64,
    /// What "holds" means for a ramp's verdict.
    pub budget: analysis::budget::Budget,
    /// `[[service]]`: programs started fresh for each step before the SUT.
    pub services: Vec<crate::parts::Service>,
    /// `[[probe]]`: processes Plimsoll does not start, sampled beside the SUT.
    pub watches: Vec<crate::parts::Watch>,
    /// `[[arm]]`: variants of the SUT that a ramp runs side by side.
    pub arms: Vec<crate::parts::Arm>,
    /// The arm this config runs (set by `with_arm`).
    pub arm: Option<String>,
    /// Instances of the SUT, each its own process on its own port, sessions spread over
    /// them sticky by session (`[sut] replicas`, or a ramp's `--replicas`).
    pub replicas: usize,
    /// With replicas: one process that runs `{{replicas}}` workers itself (a server that
    /// takes a worker count), instead of one process a replica.
    pub replicas_command: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    sut: Option<Spanned<RawSut>>,
    harness: Option<RawHarness>,
    #[serde(default)]
    mock: RawMock,
    #[serde(default)]
    session: RawSession,
    #[serde(default)]
    step: RawStep,
    #[serde(default)]
    thresholds: RawThresholds,
    #[serde(default)]
    budget: analysis::budget::Budget,
    #[serde(default)]
    service: Vec<crate::parts::RawService>,
    #[serde(default)]
    probe: Vec<Spanned<crate::parts::RawProbe>>,
    #[serde(default)]
    arm: Vec<crate::parts::RawArm>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSut {
    command: Option<Spanned<Vec<String>>>,
    ready: Option<Spanned<String>>,
    ready_path: Option<String>,
    ready_log: Option<String>,
    ready_timeout_s: Option<Spanned<f64>>,
    stop_grace_s: Option<Spanned<f64>>,
    port: Option<u16>,
    cwd: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    log_pattern: Option<Spanned<String>>,
    replicas: Option<Spanned<i64>>,
    replicas_command: Option<Spanned<Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHarness {
    command: Spanned<Vec<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawMock {
    scenario: Option<String>,
    seed: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSession {
    file: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawStep {
    concurrency: Option<Spanned<i64>>,
    timeout_s: Option<Spanned<f64>>,
    sample_ms: Option<Spanned<i64>>,
    arrival_rate: Option<Spanned<f64>>,
    resident: Option<Spanned<i64>>,
    probe_path: Option<Spanned<String>>,
    slow_share: Option<Spanned<f64>>,
    slow_read_bps: Option<Spanned<f64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawThresholds {
    error_rate: Option<Spanned<f64>>,
    p99_session_ms: Option<Spanned<f64>>,
    peak_rss_mb: Option<Spanned<f64>>,
    harness_lag_ms: Option<Spanned<f64>>,
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            spans::unreadable(
                path,
                &e,
                " (write one with the [sut] and [session] tables; see examples/floor/plimsoll.toml)",
            )
        })?;
        Config::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let spans = spans::Spans::new(text, file.clone());
        let err = |span, message: String| spans.err(span, message);
        let raw: Raw = toml::from_str(text).map_err(|e| spans.toml(&e, ""))?;
        // `plimsoll.toml` alone has the empty path as its parent: that is the current directory.
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let rel = |p: &str| {
            if Path::new(p).is_absolute() {
                PathBuf::from(p)
            } else {
                dir.join(p)
            }
        };
        let harness = match &raw.harness {
            Some(h) if h.command.get_ref().first().is_some_and(|c| !c.is_empty()) => {
                Some(h.command.get_ref().clone())
            }
            Some(h) => {
                return Err(err(
                    Some(h.command.span()),
                    "harness.command must name a program, e.g. [\"python3\", \"harness.py\"]"
                        .into(),
                ))
            }
            None => None,
        };
        let default_sut = Spanned::new(0..0, RawSut::default());
        let sut_spanned = match (&raw.sut, &harness) {
            (Some(s), _) => s,
            (None, Some(_)) => &default_sut,
            (None, None) => {
                return Err(err(
                    None,
                    "give the system under test as [sut] command = [...] (Plimsoll drives it) or [harness] command = [...] (it drives itself and prints RESULT)".into(),
                ))
            }
        };
        let sut = sut_spanned.get_ref();
        let command = match &sut.command {
            None if harness.is_some() => Vec::new(),
            Some(c) if !c.get_ref().is_empty() && !c.get_ref()[0].is_empty() => c.get_ref().clone(),
            Some(c) => {
                return Err(err(
                    Some(c.span()),
                    "sut.command must name a program, e.g. [\"python3\", \"agent.py\"]".into(),
                ))
            }
            None => {
                return Err(err(
                    Some(sut_spanned.span()),
                    "sut.command is required, e.g. command = [\"python3\", \"agent.py\"]".into(),
                ))
            }
        };
        let ready = match sut.ready.as_ref().map(|r| (r.get_ref().as_str(), r.span())) {
            None | Some(("http", _)) => {
                ReadyKind::Http(sut.ready_path.clone().unwrap_or_else(|| "/health".into()))
            }
            Some(("port", _)) => ReadyKind::Port,
            Some(("log", s)) => ReadyKind::Log(sut.ready_log.clone().ok_or_else(|| {
                err(
                    Some(s),
                    "sut.ready = \"log\" needs sut.ready_log = \"text to wait for\"".into(),
                )
            })?),
            Some((other, s)) => {
                return Err(err(
                    Some(s),
                    format!("sut.ready must be \"http\", \"port\" or \"log\" (got {other:?})"),
                ))
            }
        };
        let pos = |v: &Option<Spanned<f64>>, name: &str, default: f64, zero_ok: bool| match v {
            None => Ok(default),
            Some(x)
                if x.get_ref().is_finite()
                    && (*x.get_ref() > 0.0 || zero_ok && *x.get_ref() == 0.0) =>
            {
                Ok(*x.get_ref())
            }
            Some(x) => Err(err(
                Some(x.span()),
                format!(
                    "{name} must be {} (got {})",
                    if zero_ok { "≥ 0" } else { "> 0" },
                    x.get_ref()
                ),
            )),
        };
        let int = |v: &Option<Spanned<i64>>, name: &str, lo: i64, hi: i64, default: i64| {
            spans.int(v, name, (lo, hi), default)
        };
        let error_rate = pos(
            &raw.thresholds.error_rate,
            "thresholds.error_rate",
            0.0,
            true,
        )?;
        if error_rate > 1.0 {
            return Err(err(
                raw.thresholds.error_rate.as_ref().map(|s| s.span()),
                format!("thresholds.error_rate is a fraction between 0 and 1 (got {error_rate})"),
            ));
        }
        let log_pattern = match &sut.log_pattern {
            None => None,
            Some(p) => Some(regex::Regex::new(p.get_ref()).map_err(|e| {
                let first = e.to_string().lines().last().unwrap_or("").trim().to_string();
                err(
                    Some(p.span()),
                    format!("sut.log_pattern is not a regular expression ({first}); write e.g. \"heartbeat .* timeout\""),
                )
            })?),
        };
        let mut names = Vec::new();
        let services = crate::parts::services(&raw.service, &dir, &err, &mut names)?;
        let watches = crate::parts::watches(&raw.probe, &dir, &err, &mut names)?;
        let arms = crate::parts::arms(&raw.arm, &err)?;
        Ok(Config {
            services,
            watches,
            arms,
            arm: None,
            replicas: int(&sut.replicas, "sut.replicas", 1, 256, 1)? as usize,
            replicas_command: match &sut.replicas_command {
                None => None,
                Some(c) if c.get_ref().iter().any(|w| w.contains("{{replicas}}")) => {
                    Some(c.get_ref().clone())
                }
                Some(c) => {
                    return Err(err(
                        Some(c.span()),
                        "sut.replicas_command must pass the worker count as {{replicas}}, e.g. [\"uvicorn\", \"app:app\", \"--workers\", \"{{replicas}}\", \"--port\", \"{{port}}\"]".into(),
                    ))
                }
            },
            file: path.to_path_buf(),
            log_pattern,
            command,
            harness,
            ready,
            ready_timeout_s: pos(&sut.ready_timeout_s, "sut.ready_timeout_s", 30.0, false)?,
            stop_grace_s: pos(&sut.stop_grace_s, "sut.stop_grace_s", 5.0, true)?,
            port: sut.port.unwrap_or(0),
            cwd: sut.cwd.as_deref().map(rel).unwrap_or_else(|| dir.clone()),
            env: sut.env.clone().into_iter().collect(),
            scenario: raw.mock.scenario.as_deref().map(rel),
            seed: raw.mock.seed.unwrap_or(1),
            session_file: rel(raw.session.file.as_deref().unwrap_or("session.toml")),
            concurrency: int(&raw.step.concurrency, "step.concurrency", 1, 1_000_000, 10)? as usize,
            timeout_s: pos(&raw.step.timeout_s, "step.timeout_s", 300.0, false)?,
            sample_ms: int(&raw.step.sample_ms, "step.sample_ms", 5, 60_000, 50)? as u64,
            arrival_rate: match &raw.step.arrival_rate {
                None => None,
                Some(_) => Some(pos(
                    &raw.step.arrival_rate,
                    "step.arrival_rate",
                    1.0,
                    false,
                )?),
            },
            slow: match &raw.step.slow_share {
                None => None,
                Some(s) if (0.0..=1.0).contains(s.get_ref()) => Some((
                    *s.get_ref(),
                    pos(
                        &raw.step.slow_read_bps,
                        "step.slow_read_bps",
                        65536.0,
                        false,
                    )?,
                )),
                Some(s) => {
                    return Err(err(
                        Some(s.span()),
                        format!(
                            "step.slow_share is a share of the sessions, from 0 to 1 (got {})",
                            s.get_ref()
                        ),
                    ))
                }
            },
            probe_path: match &raw.step.probe_path {
                Some(p) if !p.get_ref().starts_with('/') => {
                    return Err(err(
                        Some(p.span()),
                        format!(
                            "step.probe_path is a path on the SUT such as \"/health\" (got {:?})",
                            p.get_ref()
                        ),
                    ))
                }
                p => p.as_ref().map(|p| p.get_ref().clone()),
            },
            resident: match &raw.step.resident {
                None => None,
                Some(_) => {
                    Some(int(&raw.step.resident, "step.resident", 1, 10_000_000, 1)? as usize)
                }
            },
            error_rate,
            p99_session_ms: pos(
                &raw.thresholds.p99_session_ms,
                "thresholds.p99_session_ms",
                0.0,
                true,
            )?,
            peak_rss_mb: pos(
                &raw.thresholds.peak_rss_mb,
                "thresholds.peak_rss_mb",
                0.0,
                true,
            )?,
            harness_lag_ms: pos(
                &raw.thresholds.harness_lag_ms,
                "thresholds.harness_lag_ms",
                10.0,
                false,
            )?,
            budget: raw.budget,
        })
    }
}

impl Config {
    /// This config with an arm's command and environment over `[sut]`'s; None when it has
    /// no arm of that name.
    pub fn with_arm(&self, name: &str) -> Option<Config> {
        let arm = self.arms.iter().find(|a| a.name == name)?;
        let mut c = self.clone();
        if let Some(cmd) = &arm.command {
            c.command = cmd.clone();
        }
        for (k, v) in &arm.env {
            c.env.retain(|(k2, _)| k2 != k);
            c.env.push((k.clone(), v.clone()));
        }
        c.arm = Some(arm.name.clone());
        Some(c)
    }

    /// The SUT's command for a step, `{{replicas}}` filled, and how many processes of it
    /// to start: one a replica, or one running every replica (`replicas_command`).
    pub fn sut_command(&self) -> (Vec<String>, usize) {
        let fill = |w: &Vec<String>| -> Vec<String> {
            w.iter()
                .map(|x| x.replace("{{replicas}}", &self.replicas.to_string()))
                .collect()
        };
        match &self.replicas_command {
            Some(c) if self.replicas > 1 => (fill(c), 1),
            _ => (fill(&self.command), self.replicas),
        }
    }

    /// This config with `n` replicas of the SUT.
    pub fn with_replicas(&self, n: usize) -> Config {
        Config {
            replicas: n.max(1),
            ..self.clone()
        }
    }

    /// The arms' names, for a message naming what there is.
    pub fn arm_names(&self) -> String {
        match self.arms.len() {
            0 => format!("{} has no [[arm]] tables", self.file.display()),
            _ => format!(
                "its arms are {}",
                self.arms
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_default_and_a_misspelt_one_names_its_line() {
        let c = Config::parse("[sut]\ncommand = [\"a\"]\n", Path::new("plimsoll.toml")).unwrap();
        assert_eq!(c.budget, analysis::Budget::default());
        // A config in the current directory runs its SUT there, not in "".
        assert_eq!(c.cwd, PathBuf::from("."));
        let c = Config::parse(
            "[sut]\ncommand = [\"a\"]\n[budget]\np99_turn_ms = 800\n",
            Path::new("p.toml"),
        )
        .unwrap();
        assert_eq!(c.budget.p99_turn_ms, Some(800.0));
        assert_eq!(
            c.budget.latency_inflation,
            Some(2.0),
            "the others keep their default"
        );
        let e = Config::parse(
            "[sut]\ncommand = [\"a\"]\n[budget]\nlatency_inflaton = 2\n",
            Path::new("p.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("p.toml:4:") && e.contains("latency_inflaton"),
            "{e}"
        );
    }

    #[test]
    fn services_probes_and_arms_are_read_and_their_mistakes_named() {
        let p = Path::new("/x/p.toml");
        let c = Config::parse(
            r#"[sut]
command = ["agent"]
env = { POOL = "64", KEEP = "1" }
[[service]]
name = "redis"
command = ["redis-server", "--port", "{{port}}"]
export = { REDIS_URL = "redis://127.0.0.1:{{port}}" }
[[probe]]
name = "pg"
pid_file = "pg.pid"
[[arm]]
name = "small-pool"
env = { POOL = "4" }
[[arm]]
name = "other"
command = ["agent2"]
"#,
            p,
        )
        .unwrap();
        assert_eq!(c.services.len(), 1);
        assert_eq!(c.services[0].ready, ReadyKind::Port);
        assert_eq!(c.services[0].cwd, PathBuf::from("/x"));
        assert_eq!(c.watches[0].target.describe(), "pid file /x/pg.pid");
        let small = c.with_arm("small-pool").unwrap();
        assert_eq!(small.command, vec!["agent"]);
        assert!(small.env.contains(&("POOL".into(), "4".into())));
        assert!(!small.env.contains(&("POOL".into(), "64".into())));
        assert!(small.env.contains(&("KEEP".into(), "1".into())));
        assert_eq!(c.with_arm("other").unwrap().command, vec!["agent2"]);
        assert!(c.with_arm("nope").is_none());
        assert_eq!(c.arm_names(), "its arms are small-pool, other");
        assert_eq!(c.sut_command(), (vec!["agent".to_string()], 1));
        assert_eq!(c.with_replicas(3).sut_command().1, 3, "a process a replica");
        let w = Config::parse(
            "[sut]\ncommand = [\"a\"]\nreplicas_command = [\"a\", \"--workers\", \"{{replicas}}\"]\n",
            p,
        )
        .unwrap();
        assert_eq!(
            w.sut_command(),
            (vec!["a".to_string()], 1),
            "one replica: [sut] command"
        );
        assert_eq!(
            w.with_replicas(4).sut_command(),
            (vec!["a".into(), "--workers".into(), "4".into()], 1)
        );
        let e = Config::parse(
            "[sut]\ncommand = [\"a\"]\nreplicas_command = [\"a\", \"-w\", \"4\"]\n",
            Path::new("p.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with(
                "p.toml:3: sut.replicas_command must pass the worker count as {{replicas}}"
            ),
            "{e}"
        );
        let bad = |t: &str| {
            Config::parse(t, Path::new("p.toml"))
                .unwrap_err()
                .to_string()
        };
        let e =
            bad("[sut]\ncommand = [\"a\"]\n[[service]]\nname = \"re dis\"\ncommand = [\"r\"]\n");
        assert!(
            e.starts_with("p.toml:4: service.name must be letters"),
            "{e}"
        );
        let e = bad("[sut]\ncommand = [\"a\"]\n[[service]]\nname = \"r\"\ncommand = [\"r\"]\n[[probe]]\nname = \"r\"\npattern = \"x\"\n");
        assert!(
            e.starts_with("p.toml:7: probe.name \"r\" is used twice"),
            "{e}"
        );
        let e = bad("[sut]\ncommand = [\"a\"]\n[[probe]]\nname = \"pg\"\npattern = \"x\"\ncgroup = \"/y\"\n");
        assert!(e.contains("probe \"pg\": give exactly one of"), "{e}");
        let e = bad("[sut]\ncommand = [\"a\"]\n[[probe]]\nname = \"pg\"\npattern = \"(\"\n");
        assert!(
            e.starts_with("p.toml:5: probe \"pg\": pattern is not a regular expression"),
            "{e}"
        );
        let e = bad("[sut]\ncommand = [\"a\"]\n[[arm]]\nname = \"a\"\ncomand = [\"b\"]\n");
        assert!(e.contains("unknown field `comand`"), "{e}");
        let e = bad("[sut]\ncommand = [\"a\"]\n[[service]]\nname = \"r\"\ncommand = [\"r\"]\nready = \"tcp\"\n");
        assert!(
            e.starts_with("p.toml:6: service \"r\": ready must be"),
            "{e}"
        );
    }

    #[test]
    fn defaults_and_relative_paths() {
        let c = Config::parse(
            "[sut]\ncommand = [\"agent\"]\n[mock]\nscenario = \"s.toml\"\n",
            Path::new("/x/y/plimsoll.toml"),
        )
        .unwrap();
        assert_eq!(c.ready, ReadyKind::Http("/health".into()));
        assert_eq!(c.scenario, Some(PathBuf::from("/x/y/s.toml")));
        assert_eq!(c.session_file, PathBuf::from("/x/y/session.toml"));
        assert_eq!((c.concurrency, c.seed, c.error_rate), (10, 1, 0.0));
    }

    #[test]
    fn errors_name_line_and_fix() {
        let p = Path::new("p.toml");
        let e = Config::parse("[sut]\ncommand = [\"a\"]\n[step]\nconcurrency = 0\n", p)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "p.toml:4: step.concurrency must be between 1 and 1000000 (got 0)"
        );
        let e = Config::parse("[sut]\nready = \"log\"\ncommand = [\"a\"]\n", p)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("p.toml:2: sut.ready = \"log\" needs sut.ready_log"),
            "{e}"
        );
        let e = Config::parse("[sut]\n", p).unwrap_err().to_string();
        assert!(e.contains("sut.command is required"), "{e}");
        let e = Config::parse("[mock]\nseed = 2\n", p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("[harness] command"), "{e}");
        assert!(Config::parse("[harness]\ncommand = [\"h\"]\n", p)
            .unwrap()
            .harness
            .is_some());
        let e = Config::parse(
            "[sut]\ncommand = [\"a\"]\n[thresholds]\nerror_rate = 2\n",
            p,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("p.toml:4: thresholds.error_rate is a fraction"),
            "{e}"
        );
        let e = Config::parse("[sut]\ncommand = [\"a\"]\nbogus = 1\n", p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `bogus`"), "{e}");
    }
}
