//! Every renderer against documents recorded by real runs (a CPU-bound ramp, two arms with
//! a replicas axis, a sweep, a provider that refused calls, a soak, a comparison) and the
//! files the Plimsoll of that day wrote from them: a stored run renders byte for byte the
//! same again, whatever the code inside the renderers became.

use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn doc(kind: &str, file: &str) -> serde_json::Value {
    let path = fixtures().join(kind).join(file);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn same(kind: &str, file: &str, rendered: &str) {
    let path = fixtures().join(kind).join(file);
    let want = std::fs::read_to_string(&path).unwrap();
    if rendered != want {
        let at = rendered
            .bytes()
            .zip(want.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(rendered.len().min(want.len()));
        let from = at.saturating_sub(120);
        panic!(
            "{}: differs at byte {at}\n got: …{}…\nwant: …{}…",
            path.display(),
            &rendered[from..(at + 120).min(rendered.len())],
            &want[from..(at + 120).min(want.len())]
        );
    }
}

#[test]
fn a_ladder_renders_as_it_was_written() {
    for kind in ["ladder", "provider"] {
        let d = doc(kind, "result.json");
        same(kind, "report.md", &report::markdown::ladder(&d));
        same(kind, "report.html", &report::html::render(&d));
    }
}

#[test]
fn arms_render_as_they_were_written() {
    let d = doc("arms", "result.json");
    same("arms", "report.md", &report::arms::markdown(&d));
    same("arms", "report.html", &report::arms::html(&d));
}

#[test]
fn a_sweep_renders_as_it_was_written() {
    let d = doc("sweep", "result.json");
    same("sweep", "report.md", &report::sweep::markdown(&d));
    same("sweep", "report.html", &report::sweep::html(&d));
}

#[test]
fn a_soak_renders_as_it_was_written() {
    let d = doc("soak", "soak.json");
    same("soak", "soak.md", &report::soak::markdown(&d));
    same("soak", "soak.html", &report::soak::html(&d));
}

#[test]
fn a_comparison_renders_as_it_was_written() {
    let d = doc("compare", "compare.json");
    same("compare", "compare.md", &report::markdown::compare(&d));
    same("compare", "compare.html", &report::html::render_compare(&d));
}

#[test]
fn documents_serialize_as_they_were_written() {
    for (kind, file) in [
        ("ladder", "result.json"),
        ("arms", "result.json"),
        ("sweep", "result.json"),
        ("provider", "result.json"),
        ("soak", "soak.json"),
    ] {
        same(
            kind,
            file,
            &serde_json::to_string_pretty(&doc(kind, file)).unwrap(),
        );
    }
}
