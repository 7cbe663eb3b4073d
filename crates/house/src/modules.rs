//! Import circles between the modules of one crate: an edge from a module to every
//! module its code names (test code left out) by any path Rust allows — `crate::`,
//! `super::`, `self::`, a bare child module (`tally::f()`), a name a `use` brought in —
//! with an item named through a re-export (`pub use tally::VoiceTally`) traced to the
//! module that defines it; and the strongly connected components of that graph (Tarjan)
//! with more than one module.

use crate::paths::{names, Import, Names};
use crate::source::File;
use std::collections::{BTreeMap, BTreeSet};

/// What the crate's modules name and re-export, to resolve paths with.
struct Crate {
    modules: BTreeSet<String>,
    names: BTreeMap<String, Names>,
}

fn join(parts: &[&str]) -> String {
    parts.join("::")
}

impl Crate {
    fn import<'a>(&'a self, module: &str, name: &str) -> Option<&'a Import> {
        self.names
            .get(module)?
            .imports
            .iter()
            .find(|i| i.name == name)
    }

    /// `path` as written in `current`, made absolute: module segments from the root.
    fn absolute(&self, current: &str, path: &[String], depth: usize) -> Option<Vec<String>> {
        let here: Vec<&str> = current.split("::").filter(|s| !s.is_empty()).collect();
        let first = path.first()?.as_str();
        let mut base: Vec<&str> = match first {
            "crate" => Vec::new(),
            "self" | "super" => here.clone(),
            _ => {
                let child: Vec<&str> = here.iter().copied().chain([first]).collect();
                if self.modules.contains(&join(&child)) {
                    here.clone()
                } else if let (Some(i), true) = (self.import(current, first), depth < 8) {
                    let mut p = self.absolute(current, &i.path, depth + 1)?;
                    p.extend(path[1..].iter().cloned());
                    return Some(p);
                } else {
                    return None;
                }
            }
        };
        let mut rest = path;
        if first == "crate" || first == "self" {
            rest = &path[1..];
        }
        while rest.first().is_some_and(|s| s == "super") {
            base.pop()?;
            rest = &rest[1..];
        }
        let mut out: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        out.extend(rest.iter().cloned());
        Some(out)
    }

    /// The module that defines what `path` names from `current`: the longest module it
    /// spells, followed through that module's re-exports.
    fn resolve(&self, current: &str, path: &[String], depth: usize) -> Option<String> {
        let abs = self.absolute(current, path, depth)?;
        let mut best = None;
        for i in 1..=abs.len() {
            if self.modules.contains(&abs[..i].join("::")) {
                best = Some(i);
            }
        }
        // An item the crate root re-exports (`crate::Budget` from `pub use budget::Budget`)
        // is traced through the root's import.
        let Some(n) = best else {
            let i = self
                .import("", abs.first()?)
                .filter(|i| i.public && depth < 8)?;
            let mut p = i.path.clone();
            p.extend(abs[1..].iter().cloned());
            return self.resolve("", &p, depth + 1);
        };
        let module = abs[..n].join("::");
        if let (Some(next), true) = (abs.get(n), depth < 8) {
            if let Some(i) = self.import(&module, next).filter(|i| i.public) {
                let mut p = i.path.clone();
                p.extend(abs[n + 1..].iter().cloned());
                return self.resolve(&module, &p, depth + 1).or(Some(module));
            }
        }
        Some(module)
    }
}

/// A module's code without its tests.
fn code(f: &File) -> String {
    let cut = f
        .code
        .iter()
        .position(|l| l.trim_start().starts_with("#[cfg(test)]"))
        .unwrap_or(f.code.len());
    f.code[..cut].join("\n")
}

/// The import graph of a crate's modules (the crate root left out: everything reaches it).
pub fn graph(files: &[File]) -> BTreeMap<String, BTreeSet<String>> {
    let files: Vec<&File> = files.iter().filter(|f| !f.test).collect();
    let krate = Crate {
        modules: files.iter().map(|f| f.module.clone()).collect(),
        names: files
            .iter()
            .map(|f| (f.module.clone(), names(&code(f))))
            .collect(),
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = krate
        .modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for (module, n) in &krate.names {
        // A re-export the module does not use itself is passed on, not imported: whoever
        // names it is traced through to where it is defined.
        let own = n.imports.iter().filter(|i| !i.public || n.uses(&i.name));
        let named = own.map(|i| &i.path).chain(&n.paths);
        for p in named {
            if let Some(t) = krate.resolve(module, p, 0) {
                if t != *module && !t.is_empty() {
                    edges.entry(module.clone()).or_default().insert(t);
                }
            }
        }
    }
    edges
}

/// The circles: modules that reach each other, each sorted.
pub fn circles(files: &[File]) -> Vec<Vec<String>> {
    let g = graph(files);
    let mut t = Tarjan::default();
    for v in g.keys() {
        if !t.index.contains_key(v) {
            t.visit(v, &g);
        }
    }
    t.found
}

#[derive(Default)]
struct Tarjan {
    index: BTreeMap<String, usize>,
    low: BTreeMap<String, usize>,
    stack: Vec<String>,
    on: BTreeSet<String>,
    next: usize,
    found: Vec<Vec<String>>,
}

impl Tarjan {
    fn visit(&mut self, v: &str, g: &BTreeMap<String, BTreeSet<String>>) {
        self.index.insert(v.into(), self.next);
        self.low.insert(v.into(), self.next);
        self.next += 1;
        self.stack.push(v.into());
        self.on.insert(v.into());
        for w in g.get(v).into_iter().flatten() {
            if !self.index.contains_key(w) {
                self.visit(w, g);
                let lw = self.low[w];
                let lv = self.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if self.on.contains(w) {
                let iw = self.index[w];
                let lv = self.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if self.low[v] == self.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on.remove(&w);
                let done = w == v;
                comp.push(w);
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                self.found.push(comp);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(module: &str, code: &str) -> File {
        File {
            rel: format!("{module}.rs"),
            module: module.into(),
            lines: 1,
            code: crate::source::strip(code),
            functions: Vec::new(),
            test: false,
        }
    }

    #[test]
    fn a_circle_through_crate_and_super_paths_is_found() {
        let files = vec![
            file("", "mod a; mod b; mod c;"),
            file("a", "use crate::b::Thing;"),
            file("b", "use super::{c, x};\nfn f() { crate::a::g() }"),
            file(
                "c",
                "use crate::a; // crate::b\n#[cfg(test)]\nuse crate::b;",
            ),
        ];
        assert_eq!(circles(&files), vec![vec!["a", "b", "c"]]);
        let broken = vec![
            file("", "mod a; mod b;"),
            file("a", "use crate::b::Thing;"),
            file("b", "fn f() -> &'static str { \"crate::a\" }"),
        ];
        assert!(circles(&broken).is_empty());
    }

    /// drive's circle of issue 50: call::tally took the histogram from run::recorder,
    /// which took the voice tally from call's re-export, all by bare or grouped paths.
    fn drive(recorder: &str) -> Vec<File> {
        vec![
            file("", "mod call;\nmod run;"),
            file("call", "mod tally;\npub use tally::VoiceTally;"),
            file(
                "call::tally",
                "use crate::run::{\n    recorder::{self, Hist},\n};\npub struct VoiceTally(Hist);",
            ),
            file("run", "pub mod recorder;\npub use recorder::Hist;"),
            file("run::recorder", recorder),
        ]
    }

    #[test]
    fn a_circle_through_a_bare_path_and_a_re_export_is_found() {
        let files = drive("use crate::call;\npub struct Hist;\nfn f(t: call::VoiceTally) {}");
        assert_eq!(circles(&files), vec![vec!["call::tally", "run::recorder"]]);
        // The same through a grouped use over several lines with a rename.
        let files = drive("use crate::{\n    call::{VoiceTally as V},\n};\npub struct Hist;");
        assert_eq!(circles(&files), vec![vec!["call::tally", "run::recorder"]]);
        // A bare child path in code: run uses recorder::f(), recorder names run's parent's child.
        let files = vec![
            file("", "mod a;\nmod b;"),
            file("a", "mod inner;\nfn g() { inner::f() }"),
            file("a::inner", "fn f() { super::super::b::h() }"),
            file("b", "use crate::a;\nfn h() {}\nfn k() { a::g() }"),
        ];
        assert_eq!(circles(&files), vec![vec!["a", "a::inner", "b"]]);
        // The histogram given a home below both: no circle.
        let files = vec![
            file("", "mod call;\nmod hist;\nmod run;"),
            file("call", "mod tally;\npub use tally::VoiceTally;"),
            file(
                "call::tally",
                "use crate::hist::Hist;\npub struct VoiceTally(Hist);",
            ),
            file("hist", "pub struct Hist;"),
            file("run", "pub mod recorder;"),
            file(
                "run::recorder",
                "use crate::{call::VoiceTally, hist};\nfn f(h: hist::Hist) {}",
            ),
        ];
        assert!(circles(&files).is_empty(), "{:?}", graph(&files));
    }

    #[test]
    fn a_re_export_alone_is_no_import_of_the_parent() {
        // mod.rs passes on its child's item and the child uses its parent's type: the
        // parent imports nothing of the child, so this is no circle.
        let files = vec![
            file("", "mod call;"),
            file(
                "call",
                "mod tally;\npub use tally::VoiceTally;\npub struct Spec;",
            ),
            file(
                "call::tally",
                "use super::Spec;\npub struct VoiceTally(Spec);",
            ),
        ];
        assert!(circles(&files).is_empty(), "{:?}", graph(&files));
        // Once the parent uses it too, the two import each other.
        let files = vec![
            file("", "mod call;"),
            file(
                "call",
                "mod tally;\npub use tally::VoiceTally;\npub struct Spec;\nfn f(v: VoiceTally) {}",
            ),
            file(
                "call::tally",
                "use super::Spec;\npub struct VoiceTally(Spec);",
            ),
        ];
        assert_eq!(circles(&files), vec![vec!["call", "call::tally"]]);
    }

    #[test]
    fn an_item_the_crate_root_re_exports_is_traced_to_its_module() {
        let files = vec![
            file("", "mod budget;\nmod verdict;\npub use budget::Budget;"),
            file("budget", "use crate::verdict::Line;\npub struct Budget;"),
            file("verdict", "pub struct Line;\nfn f(b: crate::Budget) {}"),
        ];
        assert_eq!(circles(&files), vec![vec!["budget", "verdict"]]);
    }
}
