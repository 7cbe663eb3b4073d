//! The tables of `plimsoll.toml` beside `[sut]`: what the SUT depends on and the
//! variants of it an experiment compares.
//!
//! ```toml
//! [[service]]               # started fresh for every step, before the SUT, stopped after it
//! name = "redis"
//! command = ["redis-server", "--port", "{{port}}", "--save", "", "--appendonly", "no"]
//! ready = "port"            # "port" (default), "http" (ready_path answers 2xx) or "log"
//! export = { REDIS_URL = "redis://127.0.0.1:{{port}}" }   # handed to the SUT
//!
//! [[probe]]                 # a process Plimsoll does not start, sampled beside the SUT
//! name = "postgres"
//! pid_file = "/var/run/postgresql/15-main.pid"   # or pattern = "^postgres: ", or cgroup = "/sys/fs/cgroup/…"
//!
//! [[arm]]                   # a variant of the SUT; `plimsoll ramp` runs every arm at every level
//! name = "pool-of-4"
//! env = { POOL_SIZE = "4" } # over [sut] env; command too when given
//! ```
//!
//! In a service's `command`, `env` and `export`, `{{port}}` is a free port picked for it
//! and `{{scratch}}` its own scratch directory; the SUT's command and env may name it as
//! `{{redis.port}}`.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// How Plimsoll knows a program is ready: an HTTP path answers 2xx, its port accepts, or
/// its output has a line containing the text.
#[derive(Clone, Debug, PartialEq)]
pub enum ReadyKind {
    Http(String),
    Port,
    Log(String),
}

/// A program the SUT needs (a database, a cache, a broker), started fresh each step.
#[derive(Clone, Debug)]
pub struct Service {
    pub name: String,
    pub command: Vec<String>,
    pub ready: ReadyKind,
    pub ready_timeout_s: f64,
    pub cwd: PathBuf,
    /// Its own environment.
    pub env: Vec<(String, String)>,
    /// Variables handed to the SUT (templates over the service's port and scratch).
    pub export: Vec<(String, String)>,
}

/// A process Plimsoll does not start, sampled like the SUT.
#[derive(Clone, Debug)]
pub struct Watch {
    pub name: String,
    pub target: probe::external::Target,
}

/// A variant of the SUT: its own command and environment, the rest of the config shared.
#[derive(Clone, Debug, PartialEq)]
pub struct Arm {
    pub name: String,
    pub command: Option<Vec<String>>,
    pub env: Vec<(String, String)>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawService {
    /// The service's name (letters, digits, - and _), unique.
    #[schemars(with = "String")]
    name: Spanned<String>,
    /// Its command, as argv.
    #[schemars(with = "Vec<String>")]
    command: Spanned<Vec<String>>,
    /// How Plimsoll knows it is ready: "port" (the default: its port accepts), "http"
    /// (ready_path answers 2xx) or "log" (a line of output contains ready_log).
    #[schemars(with = "Option<String>")]
    ready: Option<Spanned<String>>,
    /// With ready = "http": the path that answers 2xx.
    ready_path: Option<String>,
    /// With ready = "log": a line of output containing this.
    ready_log: Option<String>,
    /// Seconds to wait for it to be ready.
    #[schemars(with = "Option<f64>")]
    ready_timeout_s: Option<Spanned<f64>>,
    /// The directory it starts in.
    cwd: Option<String>,
    /// Environment variables for it.
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// Template values it gives the SUT and later services, e.g. { redis_url =
    /// "redis://127.0.0.1:{{port}}" }.
    #[serde(default)]
    export: BTreeMap<String, String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProbe {
    /// The process's name in the report (letters, digits, - and _), unique.
    #[schemars(with = "String")]
    name: Spanned<String>,
    /// A file holding its pid.
    pid_file: Option<String>,
    /// A regex matched against running processes' command lines.
    #[schemars(with = "Option<String>")]
    pattern: Option<Spanned<String>>,
    /// A cgroup whose processes are sampled together.
    cgroup: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawArm {
    /// The arm's name (letters, digits, - and _), unique; `--arm NAME` picks it.
    #[schemars(with = "String")]
    name: Spanned<String>,
    /// Its command, over [sut]'s.
    #[schemars(with = "Option<Vec<String>>")]
    command: Option<Spanned<Vec<String>>>,
    /// Its environment, over [sut]'s.
    #[serde(default)]
    env: BTreeMap<String, String>,
}

type Err<'a> = &'a dyn Fn(Option<std::ops::Range<usize>>, String) -> spans::FileError;

/// A name for a row of a report and a template: letters, digits, `-` and `_`, unique.
fn name_ok(
    what: &str,
    name: &Spanned<String>,
    seen: &mut Vec<String>,
    err: Err,
) -> Result<String, spans::FileError> {
    let n = name.get_ref();
    let fine = !n.is_empty()
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !fine {
        return Err(err(
            Some(name.span()),
            format!("{what}.name must be letters, digits, '-' or '_' (got {n:?}), e.g. name = \"redis\""),
        ));
    }
    if seen.contains(n) {
        return Err(err(
            Some(name.span()),
            format!("{what}.name {n:?} is used twice: give each its own name"),
        ));
    }
    seen.push(n.clone());
    Ok(n.clone())
}

pub(crate) fn services(
    raw: &[RawService],
    dir: &Path,
    err: Err,
    seen: &mut Vec<String>,
) -> Result<Vec<Service>, spans::FileError> {
    raw.iter()
        .map(|r| {
            let name = name_ok("service", &r.name, seen, err)?;
            if r.command.get_ref().first().is_none_or(|c| c.is_empty()) {
                return Err(err(
                    Some(r.command.span()),
                    format!("service {name:?}: command must name a program, e.g. [\"redis-server\", \"--port\", \"{{{{port}}}}\"]"),
                ));
            }
            let ready = match r.ready.as_ref().map(|x| (x.get_ref().as_str(), x.span())) {
                None | Some(("port", _)) => ReadyKind::Port,
                Some(("http", _)) => {
                    ReadyKind::Http(r.ready_path.clone().unwrap_or_else(|| "/health".into()))
                }
                Some(("log", s)) => ReadyKind::Log(r.ready_log.clone().ok_or_else(|| {
                    err(Some(s), format!("service {name:?}: ready = \"log\" needs ready_log = \"text to wait for\""))
                })?),
                Some((other, s)) => {
                    return Err(err(
                        Some(s),
                        format!("service {name:?}: ready must be \"port\", \"http\" or \"log\" (got {other:?})"),
                    ))
                }
            };
            let ready_timeout_s = match &r.ready_timeout_s {
                None => 30.0,
                Some(t) if t.get_ref().is_finite() && *t.get_ref() > 0.0 => *t.get_ref(),
                Some(t) => {
                    return Err(err(
                        Some(t.span()),
                        format!("service {name:?}: ready_timeout_s must be > 0 (got {})", t.get_ref()),
                    ))
                }
            };
            Ok(Service {
                name,
                command: r.command.get_ref().clone(),
                ready,
                ready_timeout_s,
                cwd: r.cwd.as_deref().map_or_else(|| dir.to_path_buf(), |c| dir.join(c)),
                env: r.env.clone().into_iter().collect(),
                export: r.export.clone().into_iter().collect(),
            })
        })
        .collect()
}

pub(crate) fn watches(
    raw: &[Spanned<RawProbe>],
    dir: &Path,
    err: Err,
    seen: &mut Vec<String>,
) -> Result<Vec<Watch>, spans::FileError> {
    use probe::external::Target;
    raw.iter()
        .map(|s| {
            let r = s.get_ref();
            let name = name_ok("probe", &r.name, seen, err)?;
            let target = match (&r.pid_file, &r.pattern, &r.cgroup) {
                (Some(f), None, None) => Target::PidFile(dir.join(f)),
                (None, Some(p), None) => {
                    Target::Pattern(regex::Regex::new(p.get_ref()).map_err(|e| {
                        let first = e.to_string().lines().last().unwrap_or("").trim().to_string();
                        err(
                            Some(p.span()),
                            format!("probe {name:?}: pattern is not a regular expression ({first}), e.g. pattern = \"^postgres: \""),
                        )
                    })?)
                }
                (None, None, Some(c)) => Target::Cgroup(PathBuf::from(c)),
                _ => {
                    return Err(err(
                        Some(s.span()),
                        format!("probe {name:?}: give exactly one of pid_file = \"…\", pattern = \"…\" or cgroup = \"/sys/fs/cgroup/…\""),
                    ))
                }
            };
            Ok(Watch { name, target })
        })
        .collect()
}

pub(crate) fn arms(raw: &[RawArm], err: Err) -> Result<Vec<Arm>, spans::FileError> {
    let mut seen = Vec::new();
    raw.iter()
        .map(|r| {
            let name = name_ok("arm", &r.name, &mut seen, err)?;
            let command = match &r.command {
                None => None,
                Some(c) if c.get_ref().first().is_some_and(|w| !w.is_empty()) => {
                    Some(c.get_ref().clone())
                }
                Some(c) => {
                    return Err(err(
                        Some(c.span()),
                        format!("arm {name:?}: command must name a program (or leave it out to keep [sut] command)"),
                    ))
                }
            };
            Ok(Arm {
                name,
                command,
                env: r.env.clone().into_iter().collect(),
            })
        })
        .collect()
}
