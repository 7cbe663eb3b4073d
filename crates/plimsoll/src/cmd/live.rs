//! `--live`, `--otlp` and `--events`: a run watched while it runs — its page and Prometheus
//! metrics served from a board the run writes to (the `live` crate), on loopback unless an
//! address says otherwise, its metrics pushed to an OpenTelemetry collector, and what
//! happens written to a file as JSON lines.

use std::time::Duration;

/// The live view's flags, on every command that runs a ladder.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct LiveArgs {
    /// Watch the run while it runs: a page (the report's verdict, charts and table filling
    /// in, the level running now each second) and Prometheus metrics on /metrics, served at
    /// ADDR — 127.0.0.1:9466 when none is given, `:PORT` for loopback, `127.0.0.1:0` for
    /// any free port. An address that is not loopback serves the run to whoever reaches it.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "")]
    pub live: Option<String>,
    /// With --live: keep serving the final figures this many seconds after the run ends
    /// (a last look, a last scrape), then stop.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub live_linger: f64,
    /// Push the same metrics to an OpenTelemetry collector's OTLP/HTTP receiver (JSON
    /// encoding) every --otlp-every seconds and at the end, e.g. http://127.0.0.1:4318.
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// With --otlp: seconds between pushes.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub otlp_every: f64,
    /// Write what happens, as it happens, to FILE as JSON lines, for another tool to follow
    /// (`tail -f`): the run, each level as it begins, each of its seconds, each step with
    /// its RESULT, a soak's samples, the verdict, the end. Every line has `event` and
    /// `t_s`; docs/live.md lists the fields.
    #[arg(long, value_name = "FILE")]
    pub events: Option<std::path::PathBuf>,
}

/// A live view (a page, a push, or both), and the board its run writes to.
pub struct Live {
    pub board: live::Board,
    server: Option<live::Server>,
    pusher: Option<live::push::Pusher>,
    linger: Duration,
}

/// What the view names its run by.
pub struct Named<'a> {
    pub run: &'a str,
    pub config: &'a str,
    pub unit: result::words::Unit,
    pub budget: &'a analysis::Budget,
    pub cap: Option<f64>,
}

fn seconds(flag: &str, x: f64, min: f64) -> anyhow::Result<Duration> {
    if !(x >= min && x <= 3600.0) {
        anyhow::bail!("{flag} {x}: give seconds from {min} to 3600");
    }
    Ok(Duration::from_secs_f64(x))
}

impl LiveArgs {
    /// Whether `--live`, `--otlp` or `--events` was given.
    pub fn wanted(&self) -> bool {
        self.live.is_some() || self.otlp.is_some() || self.events.is_some()
    }

    /// Starts the view when `--live`, `--otlp` or `--events` was given, and says where it is.
    pub fn start(&self, rt: &tokio::runtime::Runtime, n: Named) -> anyhow::Result<Option<Live>> {
        if !self.wanted() {
            return Ok(None);
        }
        let linger = seconds("--live-linger", self.live_linger, 0.0)?;
        let every = seconds("--otlp-every", self.otlp_every, 1.0)?;
        let target = self.otlp.as_deref().map(live::otlp::target).transpose()?;
        let events = self
            .events
            .as_deref()
            .map(live::events::Events::create)
            .transpose()?;
        let mut board = live::Board::new(n.run, n.config, n.unit, n.budget);
        board.cap(n.cap);
        if let Some(e) = events {
            board = board.with_events(e);
        }
        let server = match &self.live {
            Some(given) => {
                let addr = live::serve::address(given)?;
                let server = rt.block_on(live::serve(addr, board.clone()))?;
                if !server.addr.ip().is_loopback() {
                    eprintln!("warning: --live {}: not loopback — anyone who reaches this address sees the run", server.addr);
                }
                eprintln!(
                    "live: {} (the page), {}metrics (Prometheus)",
                    server.url(),
                    server.url()
                );
                Some(server)
            }
            None => None,
        };
        let pusher = target.map(|t| {
            eprintln!(
                "otlp: pushing to http://{}:{}{} every {} s",
                t.host,
                t.port,
                t.path,
                every.as_secs_f64()
            );
            let _enter = rt.enter();
            live::push::start(t, board.clone(), every)
        });
        Ok(Some(Live {
            board,
            server,
            pusher,
            linger,
        }))
    }
}

impl Live {
    /// A level of `concurrency` begins: what its step calls every second.
    pub fn begin(&self, concurrency: usize) -> step::options::OnTick {
        self.board.level(concurrency, false);
        let board = self.board.clone();
        step::options::OnTick(std::sync::Arc::new(move |t| board.tick(t)))
    }

    /// A driver against a SUT it did not start ended (a shard, `run --target`): its last
    /// second's figures pushed and served `linger` longer — not at all when it failed.
    pub fn finish_figures(mut self, rt: &tokio::runtime::Runtime, failed: bool) {
        if failed {
            self.linger = Duration::ZERO;
        }
        self.finish(rt, &[]);
    }

    /// The run ended with `docs`: the final figures pushed, served `linger` longer, then
    /// stopped — at once on Ctrl-C, or when the run was interrupted.
    pub fn finish(self, rt: &tokio::runtime::Runtime, docs: &[result::ladder::LadderDoc]) {
        self.board.done(docs);
        let interrupted = docs.iter().any(|d| d.interrupted == Some(true));
        let linger = if interrupted {
            Duration::ZERO
        } else {
            self.linger
        };
        rt.block_on(async {
            let close = async {
                if let Some(p) = self.pusher {
                    p.close().await;
                }
                if let Some(s) = self.server {
                    if !linger.is_zero() {
                        eprintln!(
                            "live: serving the final figures for {:.0} s more (--live-linger; Ctrl-C ends it)",
                            linger.as_secs_f64()
                        );
                    }
                    s.close(linger).await;
                }
            };
            tokio::select! {
                _ = close => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        });
    }
}
