//! The SUT's dependencies over one step: each `[[service]]` started fresh on a port of
//! its own and ready before the SUT starts, stopped after it; each `[[probe]]` found by
//! pid file, pattern or cgroup. All are sampled like the SUT and reported on rows of
//! their own.

use experiment::{Config, ReadyKind};
use probe::{Ready, Sampler, Sut, SutSpec};
use result::round2;
use std::sync::Arc;
use std::time::Duration;

struct Running {
    name: String,
    port: u16,
    sut: Sut,
}

/// The dependencies of one step, from before the SUT starts until after it stops.
#[derive(Default)]
pub(crate) struct Deps {
    services: Vec<Running>,
    samplers: Vec<(String, &'static str, Sampler)>,
    /// When the SUT's own sampler started: the zero of every window.
    sut_started: Option<std::time::Instant>,
    /// Variables the services hand to the SUT.
    pub exports: Vec<(String, String)>,
}

fn free_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

impl Deps {
    /// Starts every service in turn, each ready before the next (a later one may need an
    /// earlier one's port: `{{redis.port}}`). `fill` fills `{{mock}}` and `{{plimsoll}}`.
    pub async fn start(cfg: &Config, fill: &dyn Fn(&str) -> String) -> anyhow::Result<Deps> {
        let mut deps = Deps::default();
        for s in &cfg.services {
            let port = free_port()?;
            // Its own `{{port}}` first: the rest (`{{port}}` included) is the SUT's.
            let f = |v: &str| deps.fill(&fill(&v.replace("{{port}}", &port.to_string())));
            let base = format!("http://127.0.0.1:{port}");
            let spec = SutSpec {
                command: s.command.iter().map(|c| f(c)).collect(),
                env: s.env.iter().map(|(k, v)| (k.clone(), f(v))).collect(),
                cwd: Some(s.cwd.clone()),
                ready: match &s.ready {
                    ReadyKind::Port => Ready::Port(port),
                    ReadyKind::Http(path) => Ready::Http(format!("{base}{path}")),
                    ReadyKind::Log(t) => Ready::Log(t.clone()),
                },
                ready_timeout: Duration::from_secs_f64(s.ready_timeout_s),
                stop_grace: Duration::from_secs(5),
                cores: Vec::new(),
                log_pattern: None,
                role: probe::Role::Service,
            };
            let exports: Vec<(String, String)> =
                s.export.iter().map(|(k, v)| (k.clone(), f(v))).collect();
            let sut = Sut::start(&spec).await.map_err(|e| {
                anyhow::anyhow!("[[service]] {:?} in {}: {}", s.name, cfg.file.display(), e)
            })?;
            let scratch = sut.scratch.display().to_string();
            deps.exports.extend(
                exports
                    .into_iter()
                    .map(|(k, v)| (k, v.replace("{{scratch}}", &scratch))),
            );
            deps.services.push(Running {
                name: s.name.clone(),
                port,
                sut,
            });
        }
        Ok(deps)
    }

    /// `{{NAME.port}}` of every service started so far.
    pub fn fill(&self, s: &str) -> String {
        let mut out = s.to_string();
        for r in &self.services {
            out = out.replace(&format!("{{{{{}.port}}}}", r.name), &r.port.to_string());
        }
        out
    }

    /// Every service started, by name and port (a session's `{{NAME.port}}`).
    pub fn ports(&self) -> Vec<(String, u16)> {
        self.services
            .iter()
            .map(|r| (r.name.clone(), r.port))
            .collect()
    }

    /// Which service, or which probed process, listens on a port.
    pub fn peer(&self, port: u16) -> Option<String> {
        let service = self.services.iter().find(|r| r.port == port);
        let probed = || {
            self.samplers
                .iter()
                .filter(|(_, kind, _)| *kind == "probe")
                .find(|(_, _, s)| s.summary().listening.contains(&port))
        };
        match service {
            Some(r) => Some(r.name.clone()),
            None => probed().map(|(name, _, _)| name.clone()),
        }
    }

    /// Starts sampling every service and every probe (from when the SUT is ready, its own
    /// sampler started at `sut_started`).
    pub fn sample(&mut self, cfg: &Config, interval: Duration, sut_started: std::time::Instant) {
        self.sut_started = Some(sut_started);
        for r in &self.services {
            let s = Sampler::start(r.sut.pid, interval);
            self.samplers.push((r.name.clone(), "service", s));
        }
        for w in &cfg.watches {
            let target = w.target.clone();
            let pids = target.pids();
            if pids.is_empty() {
                warn_once(format!(
                    "[[probe]] {:?} found no process ({}): its row will read 0",
                    w.name,
                    w.target.describe()
                ));
            }
            let root = pids.first().copied().unwrap_or(0);
            let s = Sampler::start_on(root, Arc::new(move || target.pids()), interval);
            self.samplers.push((w.name.clone(), "probe", s));
        }
    }

    /// Stops sampling and every service (after the SUT has stopped): a row each, its CPU
    /// read over `window` (seconds since the SUT's sampler started) when given, in which
    /// `turns` turns were served — not after the SUT stopped, when a database's backends
    /// have gone with their clients.
    /// Also the CPU seconds they used together over the window.
    pub async fn finish(
        self,
        window: Option<(f64, f64)>,
        turns: u64,
    ) -> (Vec<result::Dependency>, f64) {
        let mut exited: Vec<String> = Vec::new();
        let mut rows = Vec::new();
        let mut in_window = 0.0;
        for (name, kind, sampler) in self.samplers {
            let offset = self
                .sut_started
                .map_or(0.0, |t| sampler.started().duration_since(t).as_secs_f64());
            let s = sampler.finish();
            let cpu = window
                .and_then(|(a, b)| s.cpu_between(a - offset, b - offset))
                .unwrap_or(s.cpu_sec);
            in_window += cpu;
            rows.push(result::Dependency {
                name,
                kind: kind.to_string(),
                processes: s.peak_processes,
                peak_rss_mb: round2(s.peak_rss_kb as f64 / 1024.0),
                peak_threads: s.peak_threads,
                peak_fds: s.peak_fds,
                cpu_sec: round2(s.cpu_sec),
                cpu_ms_per_turn: (turns > 0).then(|| round2(cpu * 1000.0 / turns as f64)),
                peak_clients: s.peak_inbound,
                exited: false,
            });
        }
        for mut r in self.services {
            if r.sut.exited().is_some() {
                exited.push(r.name.clone());
            }
            r.sut.stop().await;
        }
        for row in rows.iter_mut() {
            row.exited = row.kind == "service" && exited.contains(&row.name);
        }
        (rows, in_window)
    }
}

/// Each warning once per process, not once per step of a ladder.
fn warn_once(w: String) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
    if !said.contains(&w) {
        eprintln!("{w}");
        said.push(w);
    }
}
