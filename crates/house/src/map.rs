//! The house as `docs/architecture.md` shows it, made from the tree itself: each floor, each
//! crate's job (the first sentence of its lib.rs), what it depends on, and which of
//! `result`'s document types it uses — the typed hand-offs between crates.

use crate::Rules;
use std::collections::BTreeSet;
use std::path::Path;

/// The types `result` declares (`pub struct` / `pub enum`).
fn document_types(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for f in crate::source::files(&root.join("crates/result/src")) {
        for line in &f.code {
            let t = line.trim();
            let rest = t
                .strip_prefix("pub struct ")
                .or_else(|| t.strip_prefix("pub enum "));
            if let Some(r) = rest {
                let name: String = r.chars().take_while(|c| c.is_alphanumeric()).collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// The document types a crate's code (tests left out) takes from `result`: the names in
/// its `use result::…` statements and `result::…` paths.
fn uses(dir: &Path, types: &BTreeSet<String>) -> Vec<String> {
    let mut out = BTreeSet::new();
    for f in crate::source::files(&dir.join("src"))
        .iter()
        .filter(|f| !f.test)
    {
        let cut = f
            .code
            .iter()
            .position(|l| l.trim_start().starts_with("#[cfg(test)]"))
            .unwrap_or(f.code.len());
        let mut statement = String::new();
        for line in &f.code[..cut] {
            let open = !statement.is_empty();
            if open || line.contains("result::") {
                statement.push_str(line);
                statement.push(' ');
            }
            let ends = !line.trim_start().starts_with("use ") || line.contains(';');
            if !statement.is_empty() && (ends || !open && !line.trim_start().starts_with("use ")) {
                for w in statement.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                    if !w.is_empty() && types.contains(w) {
                        out.insert(w.to_string());
                    }
                }
                statement.clear();
            }
        }
    }
    out.into_iter().collect()
}

/// The first sentence of a crate's lib.rs (or main.rs) doc.
fn job(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("src/lib.rs"))
        .or_else(|_| std::fs::read_to_string(dir.join("src/main.rs")))
        .unwrap_or_default();
    let doc: Vec<&str> = text
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .map(|l| l.trim_start_matches("//!").trim())
        .collect();
    let para = doc.join(" ");
    match para.find(". ") {
        Some(i) => para[..=i].to_string(),
        None => para,
    }
}

/// The map, as a Markdown block.
pub fn render(root: &Path, rules: &Rules) -> String {
    let types = document_types(root);
    let all = crate::crates(root);
    let names: Vec<String> = all.iter().map(|(n, _)| n.clone()).collect();
    let mut out = String::new();
    for (i, floor) in rules.floor.iter().enumerate() {
        out.push_str(&format!("\n### Floor {i}: {}\n\n", floor.name));
        for name in &floor.crates {
            let Some((_, dir)) = all.iter().find(|(n, _)| n == name) else {
                continue;
            };
            out.push_str(&format!("* **`{name}`** — {}\n", job(dir)));
            let deps = crate::dependencies(dir, &names);
            if !deps.is_empty() {
                out.push_str(&format!("  depends on: {}\n", deps.join(", ")));
            }
            if name != "result" {
                let used = uses(dir, &types);
                if !used.is_empty() {
                    out.push_str(&format!("  documents: {}\n", used.join(", ")));
                }
            }
        }
    }
    out
}

/// The markers between which `docs/architecture.md` holds the map.
pub const BEGIN: &str =
    "<!-- the map: made by crates/house from the tree (PLIMSOLL_BLESS=1 cargo test -p house) -->";
pub const END: &str = "<!-- end of the map -->";

/// The page with its map replaced by `map`; None when the markers are missing.
pub fn with_map(page: &str, map: &str) -> Option<String> {
    let b = page.find(BEGIN)? + BEGIN.len();
    let e = page[b..].find(END)? + b;
    Some(format!(
        "{}\n{}\n{}",
        &page[..b],
        map.trim_end(),
        &page[e..]
    ))
}
