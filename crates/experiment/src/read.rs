//! Reading `plimsoll.toml` into a [`Config`]: each table by a function of its own, every
//! mistake an error naming its line and the fix.

use crate::config::{Config, ConfigError, ReadyKind};
use crate::raw::{Raw, RawStep, RawSut, RawThresholds};
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The file being read: its spans (for errors at a line) and its directory (paths in it
/// count from there).
struct Reader<'a> {
    spans: spans::Spans<'a>,
    dir: PathBuf,
}

type Read<T> = Result<T, ConfigError>;

impl Reader<'_> {
    fn err(&self, span: Option<Range<usize>>, message: String) -> ConfigError {
        self.spans.err(span, message)
    }

    fn rel(&self, p: &str) -> PathBuf {
        if Path::new(p).is_absolute() {
            PathBuf::from(p)
        } else {
            self.dir.join(p)
        }
    }

    /// A number above 0 (or 0 itself with `zero_ok`), `default` when absent.
    fn pos(&self, v: &Option<Spanned<f64>>, name: &str, default: f64, zero_ok: bool) -> Read<f64> {
        match v {
            None => Ok(default),
            Some(x)
                if x.get_ref().is_finite()
                    && (*x.get_ref() > 0.0 || zero_ok && *x.get_ref() == 0.0) =>
            {
                Ok(*x.get_ref())
            }
            Some(x) => Err(self.err(
                Some(x.span()),
                format!(
                    "{name} must be {} (got {})",
                    if zero_ok { "≥ 0" } else { "> 0" },
                    x.get_ref()
                ),
            )),
        }
    }

    fn int(
        &self,
        v: &Option<Spanned<i64>>,
        name: &str,
        lo: i64,
        hi: i64,
        default: i64,
    ) -> Read<i64> {
        self.spans.int(v, name, (lo, hi), default)
    }
}

impl Config {
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let spans = spans::Spans::new(text, path.display().to_string());
        let raw: Raw = toml::from_str(text).map_err(|e| spans.toml(&e, ""))?;
        // `plimsoll.toml` alone has the empty path as its parent: that is the current directory.
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let r = Reader { spans, dir };
        let harness = harness(&r, &raw)?;
        let default_sut = Spanned::new(0..0, RawSut::default());
        let sut_spanned = match (&raw.sut, &harness) {
            (Some(s), _) => s,
            (None, Some(_)) => &default_sut,
            (None, None) => {
                return Err(r.err(
                    None,
                    "give the system under test as [sut] command = [...] (Plimsoll drives it) or [harness] command = [...] (it drives itself and prints RESULT)".into(),
                ))
            }
        };
        let sut = sut_spanned.get_ref();
        let err = |span, message: String| r.err(span, message);
        let mut names = Vec::new();
        let (error_rate, p99_session_ms, peak_rss_mb, harness_lag_ms) =
            thresholds(&r, &raw.thresholds)?;
        let mut c = Config {
            services: crate::parts::services(&raw.service, &r.dir, &err, &mut names)?,
            watches: crate::parts::watches(&raw.probe, &r.dir, &err, &mut names)?,
            arms: crate::parts::arms(&raw.arm, &err)?,
            arm: None,
            replicas: r.int(&sut.replicas, "sut.replicas", 1, 256, 1)? as usize,
            replicas_command: replicas_command(&r, sut)?,
            file: path.to_path_buf(),
            log_pattern: log_pattern(&r, sut)?,
            command: sut_command(&r, sut_spanned, harness.is_some())?,
            harness,
            ready: ready(&r, sut)?,
            ready_timeout_s: r.pos(&sut.ready_timeout_s, "sut.ready_timeout_s", 30.0, false)?,
            stop_grace_s: r.pos(&sut.stop_grace_s, "sut.stop_grace_s", 5.0, true)?,
            port: sut.port.unwrap_or(0),
            cwd: sut
                .cwd
                .as_deref()
                .map_or_else(|| r.dir.clone(), |p| r.rel(p)),
            env: sut.env.clone().into_iter().collect(),
            scenario: raw.mock.scenario.as_deref().map(|p| r.rel(p)),
            seed: raw.mock.seed.unwrap_or(1),
            session_file: r.rel(raw.session.file.as_deref().unwrap_or("session.toml")),
            concurrency: 0,
            timeout_s: 0.0,
            sample_ms: 0,
            arrival_rate: None,
            slow: None,
            keep_audio: Default::default(),
            keep_audio_calls: 0,
            probe_path: None,
            resident: None,
            error_rate,
            p99_session_ms,
            peak_rss_mb,
            harness_lag_ms,
            budget: raw.budget,
            workload: crate::replay::read(raw.workload.as_ref(), &r.spans, |p| r.rel(p))?,
            prices: match &raw.cost.prices {
                Some(p) => std::sync::Arc::new(crate::prices::load(&r.rel(p))?),
                None => std::sync::Arc::new(crate::prices::shipped()),
            },
        };
        step(&r, &raw.step, &mut c)?;
        Ok(c)
    }
}

fn harness(r: &Reader, raw: &Raw) -> Read<Option<Vec<String>>> {
    match &raw.harness {
        Some(h) if h.command.get_ref().first().is_some_and(|c| !c.is_empty()) => {
            Ok(Some(h.command.get_ref().clone()))
        }
        Some(h) => Err(r.err(
            Some(h.command.span()),
            "harness.command must name a program, e.g. [\"python3\", \"harness.py\"]".into(),
        )),
        None => Ok(None),
    }
}

fn sut_command(r: &Reader, sut: &Spanned<RawSut>, harness: bool) -> Read<Vec<String>> {
    match &sut.get_ref().command {
        None if harness => Ok(Vec::new()),
        Some(c) if !c.get_ref().is_empty() && !c.get_ref()[0].is_empty() => Ok(c.get_ref().clone()),
        Some(c) => Err(r.err(
            Some(c.span()),
            "sut.command must name a program, e.g. [\"python3\", \"agent.py\"]".into(),
        )),
        None => Err(r.err(
            Some(sut.span()),
            "sut.command is required, e.g. command = [\"python3\", \"agent.py\"]".into(),
        )),
    }
}

fn ready(r: &Reader, sut: &RawSut) -> Read<ReadyKind> {
    match sut.ready.as_ref().map(|x| (x.get_ref().as_str(), x.span())) {
        None | Some(("http", _)) => Ok(ReadyKind::Http(
            sut.ready_path.clone().unwrap_or_else(|| "/health".into()),
        )),
        Some(("port", _)) => Ok(ReadyKind::Port),
        Some(("log", s)) => Ok(ReadyKind::Log(sut.ready_log.clone().ok_or_else(|| {
            r.err(
                Some(s),
                "sut.ready = \"log\" needs sut.ready_log = \"text to wait for\"".into(),
            )
        })?)),
        Some((other, s)) => Err(r.err(
            Some(s),
            format!("sut.ready must be \"http\", \"port\" or \"log\" (got {other:?})"),
        )),
    }
}

fn log_pattern(r: &Reader, sut: &RawSut) -> Read<Option<regex::Regex>> {
    let Some(p) = &sut.log_pattern else {
        return Ok(None);
    };
    regex::Regex::new(p.get_ref()).map(Some).map_err(|e| {
        let first = e.to_string().lines().last().unwrap_or("").trim().to_string();
        r.err(
            Some(p.span()),
            format!("sut.log_pattern is not a regular expression ({first}); write e.g. \"heartbeat .* timeout\""),
        )
    })
}

fn replicas_command(r: &Reader, sut: &RawSut) -> Read<Option<Vec<String>>> {
    match &sut.replicas_command {
        None => Ok(None),
        Some(c) if c.get_ref().iter().any(|w| w.contains("{{replicas}}")) => {
            Ok(Some(c.get_ref().clone()))
        }
        Some(c) => Err(r.err(
            Some(c.span()),
            "sut.replicas_command must pass the worker count as {{replicas}}, e.g. [\"uvicorn\", \"app:app\", \"--workers\", \"{{replicas}}\", \"--port\", \"{{port}}\"]".into(),
        )),
    }
}

/// `[thresholds]`: (error_rate, p99_session_ms, peak_rss_mb, harness_lag_ms).
fn thresholds(r: &Reader, t: &RawThresholds) -> Read<(f64, f64, f64, f64)> {
    let error_rate = r.pos(&t.error_rate, "thresholds.error_rate", 0.0, true)?;
    if error_rate > 1.0 {
        return Err(r.err(
            t.error_rate.as_ref().map(|s| s.span()),
            format!("thresholds.error_rate is a fraction between 0 and 1 (got {error_rate})"),
        ));
    }
    Ok((
        error_rate,
        r.pos(&t.p99_session_ms, "thresholds.p99_session_ms", 0.0, true)?,
        r.pos(&t.peak_rss_mb, "thresholds.peak_rss_mb", 0.0, true)?,
        r.pos(&t.harness_lag_ms, "thresholds.harness_lag_ms", 10.0, false)?,
    ))
}

/// `[step]`: the load of one step.
fn step(r: &Reader, s: &RawStep, c: &mut Config) -> Read<()> {
    c.concurrency = r.int(&s.concurrency, "step.concurrency", 1, 1_000_000, 10)? as usize;
    c.timeout_s = r.pos(&s.timeout_s, "step.timeout_s", 300.0, false)?;
    c.sample_ms = r.int(&s.sample_ms, "step.sample_ms", 5, 60_000, 50)? as u64;
    if s.arrival_rate.is_some() {
        c.arrival_rate = Some(r.pos(&s.arrival_rate, "step.arrival_rate", 1.0, false)?);
    }
    c.slow = match &s.slow_share {
        None => None,
        Some(x) if (0.0..=1.0).contains(x.get_ref()) => Some((
            *x.get_ref(),
            r.pos(&s.slow_read_bps, "step.slow_read_bps", 65536.0, false)?,
        )),
        Some(x) => {
            return Err(r.err(
                Some(x.span()),
                format!(
                    "step.slow_share is a share of the sessions, from 0 to 1 (got {})",
                    x.get_ref()
                ),
            ))
        }
    };
    c.probe_path = match &s.probe_path {
        Some(p) if !p.get_ref().starts_with('/') => {
            return Err(r.err(
                Some(p.span()),
                format!(
                    "step.probe_path is a path on the SUT such as \"/health\" (got {:?})",
                    p.get_ref()
                ),
            ))
        }
        p => p.as_ref().map(|p| p.get_ref().clone()),
    };
    if s.resident.is_some() {
        c.resident = Some(r.int(&s.resident, "step.resident", 1, 10_000_000, 1)? as usize);
    }
    c.keep_audio = match s
        .keep_audio
        .as_ref()
        .map(|x| (x.get_ref().as_str(), x.span()))
    {
        None | Some(("failed", _)) => crate::KeepAudio::Failed,
        Some(("all", _)) => crate::KeepAudio::All,
        Some(("none", _)) => crate::KeepAudio::None,
        Some((other, span)) => {
            return Err(r.err(
                Some(span),
                format!("step.keep_audio must be \"failed\", \"all\" or \"none\" (got {other:?})"),
            ))
        }
    };
    c.keep_audio_calls =
        r.int(&s.keep_audio_calls, "step.keep_audio_calls", 1, 100_000, 20)? as usize;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{Config, ReadyKind};
    use std::path::{Path, PathBuf};

    #[test]
    fn budgets_default_and_a_misspelt_one_names_its_line() {
        let c = Config::parse("[sut]\ncommand = [\"a\"]\n", Path::new("plimsoll.toml")).unwrap();
        assert_eq!(c.budget, result::Budget::default());
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
        let e = bad(
            "[sut]\ncommand = [\"a\"]\n[[probe]]\nname = \"pg\"\npattern = \"x\"\ncgroup = \"/y\"\n",
        );
        assert!(e.contains("probe \"pg\": give exactly one of"), "{e}");
        let e = bad("[sut]\ncommand = [\"a\"]\n[[probe]]\nname = \"pg\"\npattern = \"(\"\n");
        assert!(
            e.starts_with("p.toml:5: probe \"pg\": pattern is not a regular expression"),
            "{e}"
        );
        let e = bad("[sut]\ncommand = [\"a\"]\n[[arm]]\nname = \"a\"\ncomand = [\"b\"]\n");
        assert!(e.contains("unknown field `comand`"), "{e}");
        let e = bad(
            "[sut]\ncommand = [\"a\"]\n[[service]]\nname = \"r\"\ncommand = [\"r\"]\nready = \"tcp\"\n",
        );
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
