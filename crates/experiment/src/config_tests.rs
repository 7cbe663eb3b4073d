//! Known answers for reading plimsoll.toml: defaults, relative paths, and every
//! mistake named at its line.

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
        e.starts_with("p.toml:3: sut.replicas_command must pass the worker count as {{replicas}}"),
        "{e}"
    );
    let bad = |t: &str| {
        Config::parse(t, Path::new("p.toml"))
            .unwrap_err()
            .to_string()
    };
    let e = bad("[sut]\ncommand = [\"a\"]\n[[service]]\nname = \"re dis\"\ncommand = [\"r\"]\n");
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
