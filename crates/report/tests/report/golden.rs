//! Every renderer against documents recorded by real runs (a CPU-bound ramp, two arms with
//! a replicas axis, a sweep, a provider that refused calls, a soak, a comparison) and the
//! files the Plimsoll of that day wrote from them: a stored run renders byte for byte the
//! same again, whatever the code inside the renderers became.

use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn doc<T: serde::de::DeserializeOwned>(kind: &str, file: &str) -> T {
    let path = fixtures().join(kind).join(file);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn same(kind: &str, file: &str, rendered: &str) {
    let path = fixtures().join(kind).join(file);
    // A deliberate change of the words or the charts: PLIMSOLL_BLESS=1 writes what renders
    // now, and the diff of the fixtures is the change to read.
    if std::env::var_os("PLIMSOLL_BLESS").is_some() {
        std::fs::write(&path, rendered).unwrap();
    }
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
        let d: result::ladder::LadderDoc = doc(kind, "result.json");
        same(kind, "report.md", &report::markdown::ladder(&d));
        same(kind, "report.html", &report::html::render(&d));
    }
}

#[test]
fn arms_render_as_they_were_written() {
    let d: result::arms::ArmsDoc = doc("arms", "result.json");
    same("arms", "report.md", &report::arms::markdown(&d));
    same("arms", "report.html", &report::arms::html(&d));
}

#[test]
fn a_sweep_renders_as_it_was_written() {
    let d: result::sweep::SweepDoc = doc("sweep", "result.json");
    same("sweep", "report.md", &report::sweep::markdown(&d));
    same("sweep", "report.html", &report::sweep::html(&d));
}

#[test]
fn a_soak_renders_as_it_was_written() {
    let d: result::soak::SoakDoc = doc("soak", "soak.json");
    same("soak", "soak.md", &report::soak::markdown(&d));
    same("soak", "soak.html", &report::soak::html(&d));
}

#[test]
fn a_comparison_renders_as_it_was_written() {
    let d: result::compare::CompareDoc = doc("compare", "compare.json");
    same("compare", "compare.md", &report::markdown::compare(&d));
    same("compare", "compare.html", &report::html::render_compare(&d));
}

#[test]
fn documents_serialize_as_they_were_written() {
    fn again<T: serde::de::DeserializeOwned + serde::Serialize>(kind: &str, file: &str) {
        same(kind, file, &result::to_file_json(&doc::<T>(kind, file)));
    }
    again::<result::ladder::LadderDoc>("ladder", "result.json");
    again::<result::ladder::LadderDoc>("provider", "result.json");
    again::<result::arms::ArmsDoc>("arms", "result.json");
    again::<result::sweep::SweepDoc>("sweep", "result.json");
    again::<result::soak::SoakDoc>("soak", "soak.json");
}
