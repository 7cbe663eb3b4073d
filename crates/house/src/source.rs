//! A crate's source files as the rules see them: each file's module path, its length, its
//! code with comments and string contents blanked (so braces in them do not count), its
//! functions with their lengths, and whether it is test code.

use std::path::Path;

/// One `.rs` file under a crate's `src/`.
#[derive(Clone, Debug)]
pub struct File {
    /// Its path under `src/`, e.g. `spec/mod.rs`.
    pub rel: String,
    /// Its module path, e.g. `spec` (the crate root is "").
    pub module: String,
    pub lines: usize,
    /// The code, comments and the insides of strings removed, line for line.
    pub code: Vec<String>,
    pub functions: Vec<Function>,
    /// The whole file is a test module (declared under `#[cfg(test)]`).
    pub test: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    /// Where it starts (1-based) and how many lines it spans.
    pub line: usize,
    pub lines: usize,
    /// After a `#[cfg(test)]` in its file, or in a test file.
    pub test: bool,
}

/// Every `.rs` file under `src`, test modules marked.
pub fn files(src: &Path) -> Vec<File> {
    let mut paths = Vec::new();
    walk(src, &mut paths);
    paths.sort();
    let mut out: Vec<File> = paths.iter().map(|p| read(src, p)).collect();
    let tests: Vec<String> = out.iter().flat_map(test_children).collect();
    for f in &mut out {
        if tests.contains(&f.rel) {
            f.test = true;
            for g in &mut f.functions {
                g.test = true;
            }
        }
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn read(src: &Path, p: &Path) -> File {
    let text = std::fs::read_to_string(p).unwrap_or_default();
    let rel = p
        .strip_prefix(src)
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/");
    let code = strip(&text);
    let cut = text
        .lines()
        .position(|l| l.trim_start().starts_with("#[cfg(test)]"));
    File {
        module: module_of(&rel),
        lines: text.lines().count(),
        functions: functions(&code, cut),
        code,
        rel,
        test: false,
    }
}

/// `spec/mod.rs` → `spec`, `lib.rs` → "", `a/b.rs` → `a::b`.
pub fn module_of(rel: &str) -> String {
    let m = rel.trim_end_matches(".rs").replace('/', "::");
    let m = m.strip_suffix("::mod").unwrap_or(&m).to_string();
    match m.as_str() {
        "lib" | "main" | "mod" => String::new(),
        _ => m,
    }
}

/// The files this one declares as test modules: `#[cfg(test)]` then `mod x;` or
/// `#[path = "x.rs"] mod y;`.
fn test_children(f: &File) -> Vec<String> {
    let dir = match f.rel.rsplit_once('/') {
        Some((d, name)) if name == "mod.rs" || name == "lib.rs" || name == "main.rs" => {
            format!("{d}/")
        }
        Some((d, name)) => format!("{d}/{}/", name.trim_end_matches(".rs")),
        None if ["lib.rs", "main.rs"].contains(&f.rel.as_str()) => String::new(),
        None => format!("{}/", f.rel.trim_end_matches(".rs")),
    };
    let mut out = Vec::new();
    let lines = &f.code;
    for (i, l) in lines.iter().enumerate() {
        if !l.trim_start().starts_with("#[cfg(test)]") {
            continue;
        }
        let next: Vec<&String> = lines.iter().skip(i + 1).take(2).collect();
        let path = next.iter().find_map(|n| path_attr(n));
        let module = next.iter().find_map(|n| {
            let t = n.trim();
            t.strip_prefix("mod ")
                .or_else(|| t.strip_prefix("pub mod "))
                .or_else(|| t.strip_prefix("pub(crate) mod "))
                .and_then(|r| r.strip_suffix(';'))
                .map(str::trim)
        });
        let sibling_dir = f
            .rel
            .rsplit_once('/')
            .map_or(String::new(), |(d, _)| format!("{d}/"));
        match (path, module) {
            (Some(p), _) => out.push(format!("{sibling_dir}{p}")),
            (None, Some(m)) => {
                out.push(format!("{dir}{m}.rs"));
                out.push(format!("{dir}{m}/mod.rs"));
            }
            _ => {}
        }
    }
    out
}

/// `#[path = "x.rs"]` → x.rs (the attribute's string was kept for this).
fn path_attr(line: &str) -> Option<String> {
    let t = line.trim();
    let rest = t.strip_prefix("#[path")?;
    let start = rest.find('"')? + 1;
    let end = rest[start..].find('"')? + start;
    Some(rest[start..end].to_string())
}

/// Each function: where it starts and how far its body reaches.
fn functions(code: &[String], test_from: Option<usize>) -> Vec<Function> {
    let mut out = Vec::new();
    for (i, l) in code.iter().enumerate() {
        let Some(name) = fn_name(l) else { continue };
        let mut depth = 0i64;
        let mut started = false;
        'lines: for (j, line) in code.iter().enumerate().skip(i) {
            for ch in line.chars() {
                match ch {
                    '{' => {
                        depth += 1;
                        started = true;
                    }
                    '}' => depth -= 1,
                    ';' if !started && depth == 0 => break 'lines,
                    _ => {}
                }
            }
            if started && depth == 0 {
                out.push(Function {
                    name,
                    line: i + 1,
                    lines: j - i + 1,
                    test: test_from.is_some_and(|t| i > t),
                });
                break;
            }
        }
    }
    out
}

/// The name of a function declared on this line, if one is.
fn fn_name(line: &str) -> Option<String> {
    let mut words = line.split_whitespace().peekable();
    let mut saw_fn = false;
    for w in words.by_ref() {
        let w = if w.starts_with("pub(") { "pub" } else { w };
        match w {
            "pub" | "const" | "async" | "unsafe" | "extern" => continue,
            "fn" => {
                saw_fn = true;
                break;
            }
            _ => return None,
        }
    }
    if !saw_fn {
        return None;
    }
    let rest = words.next()?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The text with comments removed and the insides of strings and chars blanked, line for
/// line (a `#[path = "…"]` attribute keeps its string: it names a file).
pub fn strip(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut state = State::Code;
    for line in text.lines() {
        let (kept, next) = strip_line(line, state);
        out.push(kept);
        state = next;
    }
    out
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Code,
    Str,
    Raw(usize),
    Block(usize),
}

fn strip_line(line: &str, mut state: State) -> (String, State) {
    if state == State::Code && line.trim_start().starts_with("#[path") {
        return (line.to_string(), state);
    }
    let b: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let rest: String = b[i..].iter().take(3).collect();
        match state {
            State::Block(n) => {
                if rest.starts_with("*/") {
                    state = if n == 1 {
                        State::Code
                    } else {
                        State::Block(n - 1)
                    };
                    i += 2;
                } else if rest.starts_with("/*") {
                    state = State::Block(n + 1);
                    i += 2;
                } else {
                    i += 1;
                }
            }
            State::Str => {
                match b[i] {
                    '\\' => i += 1,
                    '"' => state = State::Code,
                    _ => {}
                }
                i += 1;
            }
            State::Raw(hashes) => {
                if b[i] == '"'
                    && b[i + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|c| **c == '#')
                        .count()
                        == hashes
                {
                    state = State::Code;
                    i += 1 + hashes;
                } else {
                    i += 1;
                }
            }
            State::Code => {
                if rest.starts_with("//") {
                    break;
                }
                if rest.starts_with("/*") {
                    state = State::Block(1);
                    i += 2;
                    continue;
                }
                if let Some((hashes, len)) = raw_start(&b[i..], i > 0 && is_ident(b[i - 1])) {
                    state = State::Raw(hashes);
                    i += len;
                    continue;
                }
                match b[i] {
                    '"' => state = State::Str,
                    '\'' => {
                        if let Some(len) = char_literal(&b[i..]) {
                            i += len;
                            continue;
                        }
                        out.push('\'');
                    }
                    c => out.push(c),
                }
                i += 1;
            }
        }
    }
    (out, state)
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `r"`, `r#"`, `br##"` … at the start: (hashes, length of the opener).
fn raw_start(b: &[char], after_ident: bool) -> Option<(usize, usize)> {
    if after_ident {
        return None;
    }
    let skip = usize::from(b.first() == Some(&'b'));
    if b.get(skip) != Some(&'r') {
        return None;
    }
    let hashes = b[skip + 1..].iter().take_while(|c| **c == '#').count();
    (b.get(skip + 1 + hashes) == Some(&'"')).then_some((hashes, skip + 2 + hashes))
}

/// A char literal at the start ('x', '\n', '\u{1F600}'): its length; None for a lifetime.
fn char_literal(b: &[char]) -> Option<usize> {
    match b.get(1)? {
        '\\' => {
            let end = b.iter().skip(2).position(|c| *c == '\'')?;
            Some(end + 3)
        }
        _ if b.get(2) == Some(&'\'') => Some(3),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_in_strings_and_comments_do_not_count() {
        let code = strip(
            "fn a() {\n    let s = \"}}}\"; // }\n    let r = r#\"{\"#;\n    let c = '}';\n}\nfn b<'x>(v: &'x str) { /* { */ }\n",
        );
        let f = functions(&code, None);
        assert_eq!(f.len(), 2, "{code:?}");
        assert_eq!((f[0].name.as_str(), f[0].lines), ("a", 5));
        assert_eq!((f[1].name.as_str(), f[1].line, f[1].lines), ("b", 6, 1));
    }

    #[test]
    fn declarations_without_a_body_are_not_functions() {
        let code = strip("trait T {\n    fn f(&self);\n    fn g(&self) {\n    }\n}\n");
        let f = functions(&code, Some(1));
        assert_eq!(f.len(), 1);
        assert!(f[0].name == "g" && f[0].test);
    }

    #[test]
    fn module_paths_follow_the_files() {
        assert_eq!(module_of("lib.rs"), "");
        assert_eq!(module_of("spec/mod.rs"), "spec");
        assert_eq!(module_of("driver/talk.rs"), "driver::talk");
    }
}
