//! The fixtures every step has: a fresh mock (seeded, in-process, on threads of its own), the SUT's
//! dependencies (`[[service]]`, `[[probe]]`), the SUT's port, and the environment that
//! points the SUT at the mock and at its services.

use anyhow::Context;
use experiment::Config;

/// The fixtures every step has: the mock, the SUT's port and environment.
pub(crate) struct Rig {
    pub mock: mock::MockServer,
    pub port: u16,
    pub env: Vec<(String, String)>,
    pub concurrency: usize,
    pub deps: crate::deps::Deps,
    /// A recorded workload replayed: the mock answers by it, the driver paces by it.
    pub replay: Option<std::sync::Arc<workload::Replay>>,
    me: String,
}

impl Rig {
    pub async fn start(
        cfg: &Config,
        concurrency: usize,
        replay: Option<std::sync::Arc<workload::Replay>>,
        scenario: mock::Scenario,
    ) -> anyhow::Result<Rig> {
        let opts = mock::MockOptions {
            scenario,
            seed: Some(cfg.seed),
            replay: replay.clone(),
            ..Default::default()
        };
        // On threads of its own, so its CPU is told apart from the driver's.
        let workers = drive::cores();
        let mock = mock::MockServer::start_apart(opts, workers)
            .await
            .context("starting the mock")?;
        let port = match cfg.port {
            0 => {
                let l = std::net::TcpListener::bind("127.0.0.1:0")
                    .context("finding a free port for the SUT")?;
                l.local_addr()?.port()
            }
            p => p,
        };
        let me = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "plimsoll".into());
        let mut rig = Rig {
            mock,
            port,
            env: Vec::new(),
            concurrency,
            deps: crate::deps::Deps::default(),
            replay,
            me,
        };
        let deps = crate::deps::Deps::start(cfg, &|s| rig.fill(s)).await?;
        rig.deps = deps;
        let url = rig.mock.base_url();
        rig.env = vec![
            ("OPENAI_BASE_URL".into(), format!("{url}/v1")),
            ("ANTHROPIC_BASE_URL".into(), url.clone()),
            ("OPENAI_API_KEY".into(), "plimsoll-dummy-key".into()),
            ("ANTHROPIC_API_KEY".into(), "plimsoll-dummy-key".into()),
            ("PLIMSOLL_MOCK_URL".into(), url),
            ("PLIMSOLL_SUT_PORT".into(), port.to_string()),
            ("PORT".into(), port.to_string()),
            ("PLIMSOLL_CONCURRENCY".into(), concurrency.to_string()),
            ("PLIMSOLL_SEED".into(), cfg.seed.to_string()),
        ];
        let extra: Vec<(String, String)> = cfg
            .env
            .iter()
            .map(|(k, v)| (k.clone(), rig.fill(v)))
            .collect();
        rig.env.extend(rig.deps.exports.clone());
        rig.env.extend(extra);
        Ok(rig)
    }

    /// `{{port}}`, `{{mock}}`, `{{plimsoll}}` and a service's `{{NAME.port}}` in a
    /// command word or env value.
    pub fn fill(&self, s: &str) -> String {
        self.deps
            .fill(s)
            .replace("{{port}}", &self.port.to_string())
            .replace("{{mock}}", &self.mock.base_url())
            .replace("{{plimsoll}}", &self.me)
    }

    /// Who listens on a port the SUT connects to: the mock or a service.
    pub fn peer(&self, port: u16) -> Option<String> {
        match self.mock.addr.port() == port {
            true => Some("mock".into()),
            false => self.deps.peer(port),
        }
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}
