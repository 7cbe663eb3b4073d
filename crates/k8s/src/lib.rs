//! The Kubernetes manifests of a sharded run (`plimsoll k8s`): a ConfigMap with the
//! experiment's files, the shared mock (a Deployment and the Service the SUT and the
//! shards reach it by), an Indexed Job of driver shards (`completionMode: Indexed`,
//! `backoffLimit: 0`, `podReplacementPolicy: Failed`: a shard that fails is not run again,
//! so no shard counts twice) and a merge Job that collects their files from the mock and
//! prints the one RESULT. Watched, each driver pushes its figures over OTLP or serves
//! them for Prometheus to scrape. A pure function from a plan to documents; nothing here talks
//! to a cluster.

use serde_json::{json, Value};

/// The port the mock serves on in its pod.
pub const MOCK_PORT: u16 = 8700;

/// What the manifests are made from.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The run's name: a DNS label (lowercase letters, digits, '-').
    pub run: String,
    pub shards: usize,
    /// An image with `plimsoll` on its PATH.
    pub image: String,
    /// The SUT's URL inside the cluster, e.g. `http://agent.default.svc:8080`.
    pub target: String,
    pub namespace: Option<String>,
    /// The Service the SUT reaches the mock by (its OPENAI_BASE_URL names it).
    pub mock_service: String,
    /// File name → text: plimsoll.toml, session.toml and (if any) scenario.toml.
    pub files: Vec<(String, String)>,
    pub seed: u64,
    /// Overrides of the config's load, passed to every shard.
    pub concurrency: Option<usize>,
    pub rate: Option<f64>,
    /// The step's timeout: what a shard may take once started.
    pub timeout_s: f64,
    /// How the run is watched while it runs, shard by shard.
    pub watch: Watch,
    /// A Secret whose keys become every driver pod's environment: what a step's session
    /// reads from it, kept out of the ConfigMap (a LiveKit server's LIVEKIT_API_KEY and
    /// LIVEKIT_API_SECRET, which its calls sign their tokens with).
    pub env_secret: Option<String>,
}

/// A sharded run watched live: each driver pod pushes its figures to a collector, or
/// serves them for Prometheus to scrape (labelled with its shard either way).
#[derive(Clone, Debug, Default)]
pub struct Watch {
    /// A collector's OTLP/HTTP receiver, e.g. `http://otel-collector.monitoring:4318`.
    pub otlp: Option<String>,
    /// Each driver serves /metrics on [`METRICS_PORT`], its pod annotated for scraping.
    pub scrape: bool,
}

/// The port a driver pod serves its live view on (`--live`), for Prometheus to scrape.
pub const METRICS_PORT: u16 = 9466;

/// Seconds a driver keeps serving its last figures after its shard ends: two scrapes of
/// Prometheus's default minute.
const LINGER_S: u64 = 120;

/// Why a run name cannot be used, if it cannot.
pub fn check_run(run: &str) -> Result<(), String> {
    let ok = (1..=40).contains(&run.len())
        && run
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !run.starts_with('-')
        && !run.ends_with('-');
    match ok {
        true => Ok(()),
        false => Err(format!("--run-id {run:?}: Kubernetes names need 1 to 40 lowercase letters, digits or '-', not at either end")),
    }
}

fn meta(p: &Plan, name: &str, component: &str) -> Value {
    let mut m = json!({
        "name": name,
        "labels": labels(p, component),
    });
    if let Some(ns) = &p.namespace {
        m["namespace"] = json!(ns);
    }
    m
}

fn labels(p: &Plan, component: &str) -> Value {
    json!({
        "app.kubernetes.io/name": "plimsoll",
        "app.kubernetes.io/component": component,
        "plimsoll.dev/run": p.run,
    })
}

fn name(p: &Plan, part: &str) -> String {
    format!("plimsoll-{}-{part}", p.run)
}

fn mock_url(p: &Plan) -> String {
    format!("http://{}:{MOCK_PORT}", p.mock_service)
}

/// The experiment's files, mounted at /experiment in every pod.
fn config_map(p: &Plan) -> Value {
    let data: serde_json::Map<String, Value> =
        p.files.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(p, &name(p, "experiment"), "experiment"),
        "data": data,
    })
}

fn experiment_volume(p: &Plan) -> Value {
    json!({"name": "experiment", "configMap": {"name": name(p, "experiment")}})
}

fn container(p: &Plan, name: &str, args: Vec<String>) -> Value {
    json!({
        "name": name,
        "image": p.image,
        "command": ["plimsoll"],
        "args": args,
        "volumeMounts": [{"name": "experiment", "mountPath": "/experiment", "readOnly": true}],
    })
}

fn has(p: &Plan, file: &str) -> bool {
    p.files.iter().any(|(k, _)| k == file)
}

/// The one shared mock: every shard's sessions and the SUT's calls meet here.
fn mock(p: &Plan) -> Vec<Value> {
    let mut args: Vec<String> = vec![
        "mock".into(),
        "--listen".into(),
        format!("0.0.0.0:{MOCK_PORT}"),
        "--allow-remote".into(),
        "--seed".into(),
        p.seed.to_string(),
    ];
    if has(p, "scenario.toml") {
        args.extend(["--scenario".into(), "/experiment/scenario.toml".into()]);
    }
    let mut c = container(p, "mock", args);
    c["ports"] = json!([{"name": "http", "containerPort": MOCK_PORT}]);
    c["readinessProbe"] =
        json!({"httpGet": {"path": "/plimsoll/health", "port": MOCK_PORT}, "periodSeconds": 2});
    c["resources"] = json!({"requests": {"cpu": "1", "memory": "512Mi"}});
    let select = labels(p, "mock");
    vec![
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta(p, &name(p, "mock"), "mock"),
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": select},
                "template": {
                    "metadata": {"labels": select},
                    "spec": {"containers": [c], "volumes": [experiment_volume(p)]},
                },
            },
        }),
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": meta(p, &p.mock_service, "mock"),
            "spec": {
                "selector": select,
                "ports": [{"name": "http", "port": MOCK_PORT, "targetPort": MOCK_PORT}],
            },
        }),
    ]
}

/// Seconds a shard may take: the barrier, then the step.
fn deadline_s(p: &Plan) -> u64 {
    (900.0 + p.timeout_s + 120.0).ceil() as u64
}

/// The Indexed Job: shard I is the pod with JOB_COMPLETION_INDEX = I.
fn drivers(p: &Plan) -> Value {
    let mut args: Vec<String> = [
        "run",
        "--config",
        "/experiment/plimsoll.toml",
        "--session",
        "/experiment/session.toml",
        "--allow-remote",
        "--barrier",
        "--upload",
        "--json",
    ]
    .map(String::from)
    .to_vec();
    if let Some(c) = p.concurrency {
        args.extend(["--concurrency".into(), c.to_string()]);
    }
    if let Some(r) = p.rate {
        args.extend(["--rate".into(), r.to_string()]);
    }
    if let Some(u) = &p.watch.otlp {
        args.extend(["--otlp".into(), u.clone()]);
    }
    if p.watch.scrape {
        args.extend([
            "--live".into(),
            format!("0.0.0.0:{METRICS_PORT}"),
            "--live-linger".into(),
            LINGER_S.to_string(),
        ]);
    }
    let mut c = container(p, "shard", args);
    if p.watch.scrape {
        c["ports"] = json!([{"name": "metrics", "containerPort": METRICS_PORT}]);
    }
    c["env"] = json!([
        {"name": "PLIMSOLL_SHARDS", "value": p.shards.to_string()},
        {"name": "PLIMSOLL_TARGET", "value": p.target},
        {"name": "PLIMSOLL_MOCK", "value": mock_url(p)},
        {"name": "PLIMSOLL_RUN_ID", "value": p.run},
        {"name": "PLIMSOLL_SHARD_DIR", "value": "/shards"},
    ]);
    if let Some(secret) = &p.env_secret {
        c["envFrom"] = json!([{"secretRef": {"name": secret}}]);
    }
    c["volumeMounts"]
        .as_array_mut()
        .expect("a list")
        .push(json!({"name": "shards", "mountPath": "/shards"}));
    c["resources"] = json!({"requests": {"cpu": "1", "memory": "256Mi"}});
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta(p, &name(p, "drivers"), "driver"),
        "spec": {
            "completionMode": "Indexed",
            "completions": p.shards,
            "parallelism": p.shards,
            "backoffLimit": 0,
            "podReplacementPolicy": "Failed",
            "activeDeadlineSeconds": deadline_s(p),
            "template": {
                "metadata": driver_pod_meta(p),
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [c],
                    "volumes": [experiment_volume(p), {"name": "shards", "emptyDir": {}}],
                },
            },
        },
    })
}

/// A driver pod's labels and, when it serves its metrics, the annotations Prometheus's
/// usual pod discovery reads (`prometheus.io/scrape`, `/port`, `/path`).
fn driver_pod_meta(p: &Plan) -> Value {
    let mut m = json!({"labels": labels(p, "driver")});
    if p.watch.scrape {
        m["annotations"] = json!({
            "prometheus.io/scrape": "true",
            "prometheus.io/port": METRICS_PORT.to_string(),
            "prometheus.io/path": "/metrics",
        });
    }
    m
}

/// Waits at the mock for every shard's files, merges them, prints the RESULT in its log.
fn merge(p: &Plan) -> Value {
    let args: Vec<String> = vec![
        "merge".into(),
        "--from".into(),
        mock_url(p),
        "--run-id".into(),
        p.run.clone(),
        "--wait".into(),
        deadline_s(p).to_string(),
        "--allow-remote".into(),
    ];
    let c = container(p, "merge", args);
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta(p, &name(p, "merge"), "merge"),
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": deadline_s(p) + 300,
            "template": {
                "metadata": {"labels": labels(p, "merge")},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [c],
                    "volumes": [experiment_volume(p)],
                },
            },
        },
    })
}

/// Every document, in the order to apply them.
pub fn render(p: &Plan) -> Vec<Value> {
    let mut docs = vec![config_map(p)];
    docs.extend(mock(p));
    docs.push(drivers(p));
    docs.push(merge(p));
    docs
}

/// A YAML stream (`kubectl apply -f` reads it): each document as JSON, which is YAML.
pub fn to_stream(docs: &[Value], header: &str) -> String {
    let mut out = String::new();
    for line in header.lines() {
        out.push_str(&format!("# {line}\n"));
    }
    for d in docs {
        out.push_str("---\n");
        out.push_str(&serde_json::to_string_pretty(d).expect("JSON values serialize"));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        Plan {
            run: "r1".into(),
            shards: 4,
            image: "img".into(),
            target: "http://agent:8080".into(),
            namespace: None,
            mock_service: "plimsoll-mock".into(),
            files: vec![
                ("plimsoll.toml".into(), "x".into()),
                ("session.toml".into(), "y".into()),
            ],
            seed: 1,
            concurrency: Some(400),
            rate: None,
            timeout_s: 300.0,
            watch: Watch::default(),
            env_secret: None,
        }
    }

    /// Issue 64: a LiveKit step's key pair reaches the driver pods from a Secret, not the
    /// ConfigMap; the session reads LIVEKIT_API_KEY and LIVEKIT_API_SECRET by default.
    #[test]
    fn a_secret_becomes_the_drivers_environment() {
        let c = |p: &Plan| drivers(p)["spec"]["template"]["spec"]["containers"][0].clone();
        assert!(c(&plan())["envFrom"].is_null());
        let p = Plan {
            env_secret: Some("livekit-keys".into()),
            ..plan()
        };
        assert_eq!(
            c(&p)["envFrom"],
            json!([{"secretRef": {"name": "livekit-keys"}}])
        );
        let docs = render(&p);
        let config = docs.iter().find(|d| d["kind"] == "ConfigMap").unwrap();
        assert!(
            !config.to_string().contains("livekit-keys"),
            "not in the ConfigMap"
        );
    }

    #[test]
    fn an_indexed_job_that_never_runs_a_shard_twice() {
        let docs = render(&plan());
        let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["ConfigMap", "Deployment", "Service", "Job", "Job"]);
        let job = &docs[3]["spec"];
        assert_eq!(job["completionMode"], "Indexed");
        assert_eq!(
            (job["completions"].as_u64(), job["backoffLimit"].as_u64()),
            (Some(4), Some(0))
        );
        assert_eq!(job["podReplacementPolicy"], "Failed");
        let args = job["template"]["spec"]["containers"][0]["args"].to_string();
        assert!(args.contains("--barrier") && args.contains("--upload") && args.contains("400"));
        assert!(
            !docs[1].to_string().contains("scenario.toml"),
            "no scenario, no flag"
        );
    }

    #[test]
    fn watched_drivers_push_and_serve_their_figures() {
        let mut p = plan();
        let job = |p: &Plan| drivers(p)["spec"]["template"].clone();
        let plain = job(&p);
        assert!(!plain.to_string().contains("--live") && !plain.to_string().contains("--otlp"));
        assert!(plain["metadata"]["annotations"].is_null());
        p.watch = Watch {
            otlp: Some("http://otel:4318".into()),
            scrape: true,
        };
        let t = job(&p);
        let args = t["spec"]["containers"][0]["args"].to_string();
        assert!(args.contains(r#""--otlp","http://otel:4318""#), "{args}");
        assert!(args.contains(r#""--live","0.0.0.0:9466""#), "{args}");
        assert_eq!(t["metadata"]["annotations"]["prometheus.io/port"], "9466");
        assert_eq!(
            t["spec"]["containers"][0]["ports"][0]["containerPort"],
            9466
        );
    }

    #[test]
    fn run_names_are_dns_labels() {
        assert!(check_run("r-20261124").is_ok());
        assert!(check_run("R1").is_err() && check_run("-x").is_err() && check_run("").is_err());
    }
}
