//! `plimsoll k8s`: the manifests of a sharded run on a Kubernetes cluster.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct K8sArgs {
    /// The experiment file; it, its session file and its scenario go into a ConfigMap.
    #[arg(long, default_value = "plimsoll.toml")]
    pub config: PathBuf,
    /// Driver shards: pods of the Indexed Job, each driving every N-th session.
    #[arg(long, value_name = "N")]
    pub shards: usize,
    /// The SUT's URL inside the cluster (it is deployed already), e.g. http://agent.default.svc:8080.
    #[arg(long, value_name = "URL")]
    pub target: String,
    /// An image with `plimsoll` on its PATH: by default the one the repository's
    /// Dockerfile builds (`docker build -t plimsoll:VERSION .`); push it where the cluster
    /// pulls from and name it here.
    #[arg(long, default_value = DEFAULT_IMAGE)]
    pub image: String,
    /// The run's name (Kubernetes names carry it); default r-UNIX_SECONDS.
    #[arg(long, value_name = "NAME")]
    pub run_id: Option<String>,
    /// The namespace every manifest is put in (default: none, i.e. kubectl's current one).
    #[arg(long)]
    pub namespace: Option<String>,
    /// The Service the SUT reaches the mock by: its OPENAI_BASE_URL is http://SERVICE:8700/v1.
    #[arg(long, default_value = "plimsoll-mock", value_name = "SERVICE")]
    pub mock_service: String,
    /// Sessions of the whole run (overrides [step] concurrency).
    #[arg(long, short = 'c')]
    pub concurrency: Option<usize>,
    /// Open model: sessions arrive at this rate per second across all shards.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Watch the run live: every driver pod pushes its figures (labelled with its shard)
    /// to this collector's OTLP/HTTP receiver, e.g. http://otel-collector.monitoring:4318.
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// Watch the run live: every driver pod serves its figures on /metrics (port 9466),
    /// annotated prometheus.io/scrape for a Prometheus that discovers pods.
    #[arg(long)]
    pub prometheus: bool,
    /// A Secret (in the run's namespace) whose keys become every driver pod's environment:
    /// what the session reads from it and should not sit in the ConfigMap, such as a
    /// LiveKit server's LIVEKIT_API_KEY and LIVEKIT_API_SECRET for calls into its rooms.
    #[arg(long, value_name = "SECRET")]
    pub env_secret: Option<String>,
    /// Write the manifests here instead of stdout.
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
}

/// The tag the repository's Dockerfile is built with (docs/kubernetes.md).
pub const DEFAULT_IMAGE: &str = concat!("plimsoll:", env!("CARGO_PKG_VERSION"));

pub fn run(a: K8sArgs) -> anyhow::Result<u8> {
    let cfg = experiment::Config::load(&a.config)?;
    if a.shards == 0 {
        anyhow::bail!("--shards must be at least 1");
    }
    let run = a.run_id.clone().unwrap_or_else(|| {
        let s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        format!("r-{s}")
    });
    k8s::check_run(&run).map_err(anyhow::Error::msg)?;
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p).map_err(|e| anyhow::anyhow!("reading {}: {e}", p.display()))
    };
    let mut files = vec![
        ("plimsoll.toml".to_string(), read(&a.config)?),
        ("session.toml".to_string(), read(&cfg.session_file)?),
    ];
    if let Some(s) = &cfg.scenario {
        files.push(("scenario.toml".to_string(), read(s)?));
    }
    let plan = k8s::Plan {
        run: run.clone(),
        shards: a.shards,
        image: a.image,
        target: a.target,
        namespace: a.namespace,
        mock_service: a.mock_service.clone(),
        files,
        seed: cfg.seed,
        concurrency: a.concurrency,
        rate: a.rate,
        timeout_s: cfg.timeout_s,
        watch: k8s::Watch {
            otlp: a.otlp.clone(),
            scrape: a.prometheus,
        },
        env_secret: a.env_secret.clone(),
    };
    if let Some(u) = &a.otlp {
        live::otlp::target(u)?;
    }
    let header = format!(
        "Plimsoll run {run}: {} driver shards against {}, one shared mock.\nImage: {image}{built}\nPoint the SUT at the mock: OPENAI_BASE_URL=http://{}:{}/v1 (ANTHROPIC_BASE_URL without /v1).\nkubectl apply -f THIS_FILE; then kubectl logs -f job/plimsoll-{run}-merge prints the RESULT.\nAfterwards: kubectl delete all,configmap -l plimsoll.dev/run={run}",
        plan.shards, plan.target, a.mock_service, k8s::MOCK_PORT,
        image = plan.image,
        built = if plan.image == DEFAULT_IMAGE {
            format!(" — the repository's Dockerfile: docker build -t {DEFAULT_IMAGE} . (then tag and push it where the cluster pulls from, and pass --image)")
        } else {
            String::new()
        },
    );
    let text = k8s::to_stream(&k8s::render(&plan), &header);
    match &a.out {
        Some(p) => {
            std::fs::write(p, text).map_err(|e| anyhow::anyhow!("writing {}: {e}", p.display()))?;
            eprintln!(
                "wrote {} (run {run}, image {}); apply it with kubectl apply -f {}",
                p.display(),
                plan.image,
                p.display()
            );
        }
        None => print!("{text}"),
    }
    Ok(0)
}
