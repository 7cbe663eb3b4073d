//! The paths a module's code names, in every form Rust allows: `use` trees (groups nested
//! to any depth, over several lines, `self`, `as`, globs), paths in code (`crate::a::f()`,
//! `super::super::T`, a bare `tally::f()`), and what a module re-exports (`pub use`), so
//! that an item named through a re-export is traced to the module that defines it.

/// One token of code whose comments and strings are already gone.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Colons,
    Punct(char),
}

fn tokens(code: &str) -> Vec<Tok> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i].is_alphabetic() || c[i] == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect()));
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            out.push(Tok::Colons);
            i += 2;
        } else if c[i].is_whitespace() || c[i].is_ascii_digit() {
            // A number's digits are no path; a lifetime's name is dropped with its tick.
            i += 1;
        } else if c[i] == '\'' {
            i += 1;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
        } else {
            out.push(Tok::Punct(c[i]));
            i += 1;
        }
    }
    out
}

/// One name a `use` brings in: the path it names, the name it goes by here ("*" for a
/// glob), and whether it is re-exported (`pub`, `pub(crate)`, `pub(super)` …).
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub path: Vec<String>,
    pub name: String,
    pub public: bool,
}

/// What a module's code names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Names {
    pub imports: Vec<Import>,
    /// Paths of two segments or more written in code outside `use` statements.
    pub paths: Vec<Vec<String>>,
    /// Single names used in code outside `use` statements (to tell a re-export that the
    /// module also uses from one it only passes on).
    pub words: Vec<String>,
}

impl Names {
    /// Whether the module's own code uses `name` (not only in its `use` statements).
    pub fn uses(&self, name: &str) -> bool {
        self.words.iter().any(|w| w == name) || self.paths.iter().any(|p| p[0] == name)
    }
}

fn ident(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

/// Whether the `use` at `i` is public: `pub use`, or `pub(…) use`.
fn public(t: &[Tok], i: usize) -> bool {
    if i >= 1 && ident(t.get(i - 1)) == Some("pub") {
        return true;
    }
    if i >= 1 && t[i - 1] == Tok::Punct(')') {
        let open = t[..i - 1].iter().rposition(|x| *x == Tok::Punct('('));
        return open.is_some_and(|o| o >= 1 && ident(t.get(o - 1)) == Some("pub"));
    }
    false
}

/// Parses one use tree from `i` under `prefix`; returns where it ends.
fn tree(t: &[Tok], mut i: usize, prefix: &[String], public: bool, out: &mut Vec<Import>) -> usize {
    let mut path = prefix.to_vec();
    if t.get(i) == Some(&Tok::Colons) {
        i += 1;
    }
    while let Some(s) = ident(t.get(i)) {
        if s == "as" {
            break;
        }
        path.push(s.to_string());
        i += 1;
        if t.get(i) == Some(&Tok::Colons) {
            i += 1;
        } else {
            break;
        }
    }
    match t.get(i) {
        Some(Tok::Punct('{')) => {
            i += 1;
            while i < t.len() && t[i] != Tok::Punct('}') {
                let was = i;
                i = tree(t, i, &path, public, out);
                // A token no tree starts with (`$name` in a macro, `r#type`): step past it.
                if i == was {
                    i += 1;
                }
                if t.get(i) == Some(&Tok::Punct(',')) {
                    i += 1;
                }
            }
            return i + 1;
        }
        Some(Tok::Punct('*')) => {
            out.push(Import {
                path,
                name: "*".into(),
                public,
            });
            return i + 1;
        }
        _ => {}
    }
    if path.last().is_some_and(|s| s == "self") {
        path.pop();
    }
    let mut name = path.last().cloned().unwrap_or_default();
    if ident(t.get(i)) == Some("as") {
        name = ident(t.get(i + 1)).unwrap_or("_").to_string();
        i += 2;
    }
    if !path.is_empty() {
        out.push(Import { path, name, public });
    }
    i
}

/// Whether the single name at `i` names an item, not a variable, a field or a method:
/// not one being declared or reached by a dot, and, written in lower case (a function, a
/// macro, a module), called. `plan(symbols)` passes a variable; `symbols(…)` calls.
fn named_item(t: &[Tok], i: usize) -> bool {
    const DECLARE: [&str; 9] = [
        "fn", "let", "struct", "enum", "const", "static", "type", "trait", "mut",
    ];
    let before = i.checked_sub(1).and_then(|j| t.get(j));
    if before == Some(&Tok::Punct('.')) || ident(before).is_some_and(|w| DECLARE.contains(&w)) {
        return false;
    }
    let upper = ident(t.get(i)).is_some_and(|w| w.starts_with(|c: char| c.is_uppercase()));
    upper || matches!(t.get(i + 1), Some(Tok::Punct('(' | '!')))
}

/// The index of the token that closes the group opened at `i`.
fn skip_group(t: &[Tok], mut i: usize, open: char, close: char) -> usize {
    let mut depth = 0usize;
    while i < t.len() {
        match &t[i] {
            Tok::Punct(c) if *c == open => depth += 1,
            Tok::Punct(c) if *c == close => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// Everything `code` names.
pub fn names(code: &str) -> Names {
    let t = tokens(code);
    let mut out = Names::default();
    let mut i = 0;
    while i < t.len() {
        let after_colons = i >= 1 && t[i - 1] == Tok::Colons;
        match ident(t.get(i)) {
            Some("use") if !after_colons => {
                let p = public(&t, i);
                i = tree(&t, i + 1, &[], p, &mut out.imports);
                while i < t.len() && t[i] != Tok::Punct(';') {
                    i += 1;
                }
            }
            // `mod tally;` declares a module; it names nothing to import. An inline
            // `mod x { … }` is a module of its own, whose `super` is not this one's: its
            // body is left out.
            Some("mod") if !after_colons => {
                i += 1;
                if t.get(i + 1) == Some(&Tok::Punct('{')) {
                    i = skip_group(&t, i + 1, '{', '}');
                }
            }
            // `pub(in crate::a)` names where an item is seen, not an import.
            Some("pub") if t.get(i + 1) == Some(&Tok::Punct('(')) => {
                i = skip_group(&t, i + 1, '(', ')');
            }
            Some(s) if !after_colons => {
                let mut path = vec![s.to_string()];
                let mut j = i + 1;
                while t.get(j) == Some(&Tok::Colons) {
                    match ident(t.get(j + 1)) {
                        Some(n) => path.push(n.to_string()),
                        None => break,
                    }
                    j += 2;
                }
                if path.len() >= 2 {
                    out.paths.push(path);
                } else if named_item(&t, i) {
                    out.words.push(s.to_string());
                }
                i = j.max(i + 1) - 1;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(s: &str) -> Vec<String> {
        s.split("::").map(String::from).collect()
    }

    #[test]
    fn use_trees_in_every_form_are_read() {
        let n = names(
            "pub use tally::VoiceTally;\nuse crate::{\n    a::{b, c::{self, D}},\n    e as f,\n    g::*,\n};\npub(crate) use super::super::h;\nuse ::std::fmt;",
        );
        let got: Vec<(String, String, bool)> = n
            .imports
            .iter()
            .map(|i| (i.path.join("::"), i.name.clone(), i.public))
            .collect();
        let want = [
            ("tally::VoiceTally", "VoiceTally", true),
            ("crate::a::b", "b", false),
            ("crate::a::c", "c", false),
            ("crate::a::c::D", "D", false),
            ("crate::e", "f", false),
            ("crate::g", "*", false),
            ("super::super::h", "h", true),
            ("std::fmt", "fmt", false),
        ];
        let want: Vec<(String, String, bool)> = want
            .iter()
            .map(|(p, n, b)| (p.to_string(), n.to_string(), *b))
            .collect();
        assert_eq!(got, want);
        assert!(n.paths.is_empty(), "{n:?}");
    }

    #[test]
    fn odd_tokens_inline_modules_and_visibility_paths_are_no_imports() {
        let n = names("use crate::kw::{r#type, x, $name};\npub(in crate::a) fn f() {}\nmod imp {\n    use super::Thing;\n}\nuse crate::b;");
        let got: Vec<String> = n.imports.iter().map(|i| i.path.join("::")).collect();
        assert!(got.contains(&"crate::kw::x".to_string()), "{got:?}");
        assert!(got.contains(&"crate::b".to_string()), "{got:?}");
        assert!(!got.iter().any(|p| p.contains("Thing")), "{got:?}");
        assert!(!n.paths.iter().any(|p| p.join("::") == "crate::a"), "{n:?}");
    }

    #[test]
    fn paths_in_code_are_read_and_single_names_kept_apart() {
        let n = names("mod tally;\nfn f(x: &'a Vec<u8>, symbols: u8) { recorder::hist::Hist::new(); crate::a::g(); x.super_thing; VoiceTally; x.speak(); plan(symbols); emit(1) }");
        assert!(
            n.paths.contains(&path("recorder::hist::Hist::new")),
            "{n:?}"
        );
        assert!(n.paths.contains(&path("crate::a::g")), "{n:?}");
        assert!(n.uses("VoiceTally") && n.uses("recorder") && !n.uses("hist"));
        assert!(n.uses("plan") && n.uses("emit"), "called: {n:?}");
        assert!(!n.uses("a"), "a lifetime is no name: {n:?}");
        for not in ["tally", "symbols", "speak", "f", "x"] {
            assert!(
                !n.uses(not),
                "{not} is declared, a variable or a method: {n:?}"
            );
        }
    }
}
