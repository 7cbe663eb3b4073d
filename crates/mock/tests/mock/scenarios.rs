//! Every scenario the repository ships loads: the ones in scenarios/ and the examples'.

use mock::Scenario;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scenario_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    for e in std::fs::read_dir(root().join("examples")).unwrap() {
        let s = e.unwrap().path().join("scenario.toml");
        if s.exists() {
            out.push(s);
        }
    }
    out.sort();
    out
}

#[test]
fn every_shipped_scenario_loads() {
    let files = scenario_files();
    assert!(files.len() >= 7, "{files:?}");
    for f in &files {
        if let Err(e) = Scenario::load(f) {
            panic!("{}: {e}", f.display());
        }
    }
}

#[test]
fn the_provider_tier_example_pushes_back_per_model() {
    let s = Scenario::load(&root().join("scenarios/provider-tier.toml")).unwrap();
    let cap = s.provider.capacity.expect("provider slots");
    assert_eq!((cap.max_in_flight, cap.max_queue), (64, Some(256)));
    let mini = s.model("gpt-4o-mini").unwrap();
    let q = mini.limits.quota.expect("a quota");
    assert_eq!(
        (q.rpm, q.tpm, q.burst_s),
        (Some(500.0), Some(200_000.0), 1.0)
    );
    let claude = s.model("claude-plimsoll-1").unwrap();
    let q = claude.limits.quota.expect("a quota");
    assert_eq!((q.itpm, q.otpm), (Some(30_000.0), Some(8_000.0)));
    assert!(
        s.model("gpt-5").is_none(),
        "unknown models are errors there"
    );
}
