//! Documents written by real runs (the report crate's golden fixtures) read into their
//! types and written again byte for byte: a stored run loses nothing by being typed.

use std::path::{Path, PathBuf};

fn fixture(kind: &str, file: &str) -> (PathBuf, String) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/fixtures")
        .join(kind)
        .join(file);
    let text = std::fs::read_to_string(&p).unwrap();
    (p, text)
}

fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(kind: &str, file: &str) {
    let (path, text) = fixture(kind, file);
    let doc: T = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let again = result::to_file_json(&doc);
    if again != text {
        let at = again
            .bytes()
            .zip(text.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let from = at.saturating_sub(200);
        panic!(
            "{} differs at {at}:\n got …{}\nwant …{}",
            path.display(),
            &again[from..(at + 100).min(again.len())],
            &text[from..(at + 100).min(text.len())]
        );
    }
}

#[test]
fn ladders_arms_sweeps_and_soaks_round_trip() {
    round_trip::<result::ladder::LadderDoc>("ladder", "result.json");
    round_trip::<result::ladder::LadderDoc>("provider", "result.json");
    round_trip::<result::arms::ArmsDoc>("arms", "result.json");
    round_trip::<result::sweep::SweepDoc>("sweep", "result.json");
    round_trip::<result::soak::SoakDoc>("soak", "soak.json");
}

#[test]
fn a_comparison_round_trips() {
    let (path, text) = fixture("compare", "compare.json");
    let doc: result::compare::CompareDoc =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_value(&doc).unwrap(), v);
}
