//! The rules of `house.toml` on this tree: no import circle in a crate, no dependency on a
//! crate of a higher floor, no file over 500 lines and no function over 80 outside tests,
//! except where `house.toml` allows it and says why.

use std::path::Path;

#[test]
fn the_house_keeps_its_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let rules = house::Rules::load(&root.join("house.toml")).unwrap();
    let breaches = house::check(&root, &rules);
    let lines: Vec<String> = breaches
        .iter()
        .map(|b| format!("  {} {}: {}", b.rule, b.item, b.what))
        .collect();
    assert!(
        breaches.is_empty(),
        "{} breach(es) of house.toml:\n{}",
        breaches.len(),
        lines.join("\n")
    );
}

#[test]
fn every_crate_says_its_one_job() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (name, dir) in house::crates(&root) {
        let lib = dir.join("src/lib.rs");
        let main = dir.join("src/main.rs");
        let text = std::fs::read_to_string(&lib)
            .or_else(|_| std::fs::read_to_string(&main))
            .unwrap_or_default();
        let doc: Vec<&str> = text.lines().take_while(|l| l.starts_with("//!")).collect();
        assert!(
            doc.join(" ").split_whitespace().count() >= 12,
            "{name}: its lib.rs (or main.rs) must open with a //! paragraph saying its one job"
        );
    }
}

#[test]
fn the_architecture_page_shows_the_house_as_it_is() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let rules = house::Rules::load(&root.join("house.toml")).unwrap();
    let page_path = root.join("docs/architecture.md");
    let page = std::fs::read_to_string(&page_path).unwrap();
    let map = house::map::render(&root, &rules);
    let want = house::map::with_map(&page, &map).unwrap_or_else(|| {
        panic!(
            "docs/architecture.md has no map markers ({})",
            house::map::BEGIN
        )
    });
    if std::env::var_os("PLIMSOLL_BLESS").is_some() {
        std::fs::write(&page_path, &want).unwrap();
        return;
    }
    assert!(
        page == want,
        "docs/architecture.md's map is not the tree's: run PLIMSOLL_BLESS=1 cargo test -p house and read the change"
    );
}
