//! Checks the project's own rules of construction on its tree — no import circle between a
//! crate's modules, no dependency on a crate of a higher floor, no source file or function
//! over its length limit outside tests — against `house.toml`, which names the floors and
//! every allowed exception with its reason. It reads source text only; it builds nothing.

pub mod map;
pub mod modules;
pub mod paths;
pub mod source;

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `house.toml`.
#[derive(Debug, Deserialize)]
pub struct Rules {
    /// The floors, lowest first.
    pub floor: Vec<Floor>,
    pub limits: Limits,
    #[serde(default)]
    pub allow: Vec<Allow>,
}

#[derive(Debug, Deserialize)]
pub struct Floor {
    pub name: String,
    pub crates: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct Limits {
    pub file_lines: usize,
    pub function_lines: usize,
}

/// One exception to a rule, and why it is one.
#[derive(Debug, Deserialize)]
pub struct Allow {
    pub rule: String,
    pub item: String,
    pub why: String,
}

impl Rules {
    pub fn load(path: &Path) -> Result<Rules, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Each crate's floor (0 the lowest).
    pub fn floor_of(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for (i, f) in self.floor.iter().enumerate() {
            for c in &f.crates {
                out.insert(c.clone(), i);
            }
        }
        out
    }

    fn allowed(&self, rule: &str, item: &str) -> bool {
        self.allow
            .iter()
            .any(|a| a.rule == rule && a.item == item && !a.why.is_empty())
    }
}

/// A rule broken: which, where, and what to do.
#[derive(Clone, Debug, PartialEq)]
pub struct Breach {
    pub rule: &'static str,
    pub item: String,
    pub what: String,
}

/// The workspace's crates: (name, directory).
pub fn crates(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| {
            (
                p.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .to_string(),
                p,
            )
        })
        .collect();
    out.sort();
    out
}

/// The workspace crates a crate depends on (not its dev-dependencies).
pub fn dependencies(dir: &Path, workspace: &[String]) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    let doc: toml::Table = toml::from_str(&text).unwrap_or_default();
    let deps = doc.get("dependencies").and_then(|d| d.as_table());
    let mut out: Vec<String> = deps
        .into_iter()
        .flat_map(|t| t.keys())
        .filter(|k| workspace.contains(k))
        .cloned()
        .collect();
    out.sort();
    out
}

/// Every breach of the rules in the tree at `root`, allowed exceptions left out.
pub fn check(root: &Path, rules: &Rules) -> Vec<Breach> {
    let all = crates(root);
    let names: Vec<String> = all.iter().map(|(n, _)| n.clone()).collect();
    let floors = rules.floor_of();
    let mut out = Vec::new();
    for (name, dir) in &all {
        out.extend(arrows(name, dir, &names, &floors));
        let files = source::files(&dir.join("src"));
        out.extend(sizes(name, &files, &rules.limits));
        for circle in modules::circles(&files) {
            out.push(Breach {
                rule: "circle",
                item: format!("{name}: {}", circle.join(", ")),
                what: "these modules import each other in a circle: move the one item that causes it to a module of its own".into(),
            });
        }
    }
    out.retain(|b| !rules.allowed(b.rule, &b.item));
    out
}

fn arrows(
    name: &str,
    dir: &Path,
    names: &[String],
    floors: &BTreeMap<String, usize>,
) -> Vec<Breach> {
    let Some(&mine) = floors.get(name) else {
        return vec![Breach {
            rule: "arrow",
            item: name.to_string(),
            what: "this crate is on no floor: add it to a [[floor]] in house.toml".into(),
        }];
    };
    dependencies(dir, names)
        .into_iter()
        .filter(|d| floors.get(d).is_none_or(|&f| f >= mine))
        .map(|d| Breach {
            rule: "arrow",
            item: format!("{name} -> {d}"),
            what: format!("{name} depends on {d}, which is not on a lower floor: invert the dependency, or move the shared part down"),
        })
        .collect()
}

fn sizes(name: &str, files: &[source::File], limits: &Limits) -> Vec<Breach> {
    let mut out = Vec::new();
    for f in files {
        let rel = format!("{name}/src/{}", f.rel);
        if f.lines > limits.file_lines {
            out.push(Breach {
                rule: "file",
                item: rel.clone(),
                what: format!(
                    "{} lines (limit {}): split it by concept",
                    f.lines, limits.file_lines
                ),
            });
        }
        for func in f
            .functions
            .iter()
            .filter(|g| !g.test && g.lines > limits.function_lines)
        {
            out.push(Breach {
                rule: "function",
                item: format!("{rel}:{}", func.name),
                what: format!(
                    "{} lines at line {} (limit {}): give each step a function of its own",
                    func.lines, func.line, limits.function_lines
                ),
            });
        }
    }
    out
}
