//! The Grafana dashboard in examples/grafana queries only what the live view exports.

use std::collections::BTreeSet;

#[test]
fn every_query_of_the_dashboard_names_an_exported_metric() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/grafana/plimsoll.json"
    );
    let text = std::fs::read_to_string(path).expect("examples/grafana/plimsoll.json");
    let dash: serde_json::Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let exprs: Vec<String> = dash["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .map(|t| {
            t["expr"]
                .as_str()
                .map(String::from)
                .expect("each target has an expr")
        })
        .collect();
    assert!(exprs.len() >= 10, "{exprs:?}");
    let mut named = BTreeSet::new();
    for e in &exprs {
        let mut rest = e.as_str();
        while let Some(at) = rest.find("plimsoll_") {
            let name: String = rest[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            rest = &rest[at + name.len()..];
            named.insert(name);
        }
    }
    let known = |n: &str| {
        live::metrics::FAMILIES.contains(&n)
            || ["_bucket", "_sum", "_count"]
                .iter()
                .any(|s| n.strip_suffix(s) == Some("plimsoll_turn_duration_seconds"))
    };
    let unknown: Vec<&String> = named.iter().filter(|n| !known(n)).collect();
    assert!(
        unknown.is_empty(),
        "the dashboard queries {unknown:?}, which Plimsoll does not export"
    );
    assert!(named.len() >= 10, "{named:?}");
}
