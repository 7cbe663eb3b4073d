//! Import circles between the modules of one crate: an edge from a module to every
//! module its code names by a `crate::`, `super::` or `self::` path (test code left out),
//! and the strongly connected components of that graph (Tarjan) with more than one module.

use crate::source::File;
use std::collections::{BTreeMap, BTreeSet};

/// The module a path names, the longest one that exists (`crate::a::b::Item` → `a::b`).
fn resolve(current: &str, path: &[&str], modules: &BTreeSet<String>) -> Option<String> {
    let (base, rest): (Vec<&str>, &[&str]) = match *path.first()? {
        "crate" => (Vec::new(), &path[1..]),
        "super" => {
            let mut b: Vec<&str> = current.split("::").filter(|s| !s.is_empty()).collect();
            b.pop();
            (b, &path[1..])
        }
        "self" => (
            current.split("::").filter(|s| !s.is_empty()).collect(),
            &path[1..],
        ),
        _ => return None,
    };
    let mut best = None;
    for i in 1..=rest.len() {
        let mut parts = base.clone();
        parts.extend(&rest[..i]);
        let m = parts.join("::");
        if modules.contains(&m) {
            best = Some(m);
        }
    }
    best
}

/// The paths a line names: `crate::a::b`, and each name of `use crate::{a, b::c}`.
fn paths(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let at_word = i == 0
            || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == ':');
        let rest: String = chars[i..].iter().collect();
        let head = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|h| rest.starts_with(h));
        if let (true, Some(h)) = (at_word, head) {
            let root = h.trim_end_matches("::").to_string();
            let after = &rest[h.len()..];
            if let Some(group) = after.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                for name in inner.split(',') {
                    let mut p = vec![root.clone()];
                    p.extend(words(name.trim()));
                    out.push(p);
                }
            } else {
                let mut p = vec![root];
                p.extend(words(after));
                out.push(p);
            }
            i += h.len();
        } else {
            i += 1;
        }
    }
    out
}

/// `a::b::C;` → [a, b, C].
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in s.split("::") {
        let w: String = part
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if w.is_empty() {
            break;
        }
        let whole = w.len() == part.len();
        out.push(w);
        if !whole {
            break;
        }
    }
    out
}

/// The import graph of a crate's modules (the crate root left out: everything reaches it).
pub fn graph(files: &[File]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = files.iter().map(|f| f.module.clone()).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for f in files.iter().filter(|f| !f.test) {
        let cut = f
            .code
            .iter()
            .position(|l| l.trim_start().starts_with("#[cfg(test)]"))
            .unwrap_or(f.code.len());
        for line in &f.code[..cut] {
            for p in paths(line) {
                let p: Vec<&str> = p.iter().map(String::as_str).collect();
                if let Some(t) = resolve(&f.module, &p, &modules) {
                    if t != f.module && !t.is_empty() {
                        edges.entry(f.module.clone()).or_default().insert(t);
                    }
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
}
