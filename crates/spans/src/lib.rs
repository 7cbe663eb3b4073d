//! Errors in Plimsoll's own files (plimsoll.toml, session.toml, scenario.toml) that name
//! the file and the line: `scenario.toml:14: tok_ms must be > 0 (got -5)`.
//!
//! Every reader parses with `toml` and keeps the spans of the fields it checks; this
//! crate turns a span into a line number and an error. It knows nothing of any format.

use std::ops::Range;

/// A file that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct FileError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

/// The 1-based line holding byte `offset` of `text` (offsets past the end: the last line).
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Makes errors for one file's text.
pub struct Spans<'a> {
    text: &'a str,
    file: String,
}

impl<'a> Spans<'a> {
    pub fn new(text: &'a str, file: impl Into<String>) -> Spans<'a> {
        Spans {
            text,
            file: file.into(),
        }
    }

    /// An error at `span` (or about the whole file when there is none).
    pub fn err(&self, span: Option<Range<usize>>, message: impl Into<String>) -> FileError {
        FileError {
            file: self.file.clone(),
            line: span.map(|s| line_of(self.text, s.start)),
            message: message.into(),
        }
    }

    /// A whole number from `lo` to `hi` (`default` when absent), or the error at its line.
    pub fn int(
        &self,
        v: &Option<toml::Spanned<i64>>,
        name: &str,
        (lo, hi): (i64, i64),
        default: i64,
    ) -> Result<i64, FileError> {
        match v {
            None => Ok(default),
            Some(x) if (lo..=hi).contains(x.get_ref()) => Ok(*x.get_ref()),
            Some(x) => Err(self.err(
                Some(x.span()),
                format!("{name} must be between {lo} and {hi} (got {})", x.get_ref()),
            )),
        }
    }

    /// The `toml` crate's own parse error, at its line, with `hint` after it when given.
    pub fn toml(&self, e: &toml::de::Error, hint: &str) -> FileError {
        let m = e.message().trim();
        let m = &with_nearest(m);
        self.err(
            e.span(),
            if hint.is_empty() {
                m.to_string()
            } else {
                format!("{m} {hint}")
            },
        )
    }
}

/// serde's "unknown field `ttft`, expected one of `seed`, `ttft_ms`, …" (or an unknown
/// variant) with the nearest valid name said first: "unknown field `ttft` — did you mean
/// `ttft_ms`? (expected one of …)". Other messages are returned as they are.
pub fn with_nearest(message: &str) -> String {
    let Some((head, expected)) = message.split_once(", expected ") else {
        return message.to_string();
    };
    let Some(given) = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|p| head.strip_prefix(p))
        .and_then(|r| r.strip_suffix('`'))
    else {
        return message.to_string();
    };
    let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    match nearest(given, &names) {
        Some(n) => format!("{head} — did you mean `{n}`? (expected {expected})"),
        None => message.to_string(),
    }
}

/// The name closest to `given`: one it begins or ends (`ttft` → `ttft_ms`), or within a
/// third of its length in edits (`turms` → `turns`); none when nothing is that close.
pub fn nearest<'n>(given: &str, names: &[&'n str]) -> Option<&'n str> {
    let g = given.to_lowercase();
    let near = |n: &&str| {
        let d = edits(&g, &n.to_lowercase());
        let affix = g.len() >= 3 && (n.starts_with(&g) || n.ends_with(&g) || g.starts_with(*n));
        (d <= (g.chars().count() / 3).max(1) || affix).then_some(d)
    };
    names
        .iter()
        .filter_map(|n| near(n).map(|d| (d, *n)))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// Levenshtein distance in characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// A file that could not be read at all: one that is not there says where it was looked
/// for (a relative path counts from the current directory, which a user may not expect).
pub fn unreadable(path: &std::path::Path, e: &std::io::Error, hint: &str) -> FileError {
    let message = match e.kind() {
        std::io::ErrorKind::NotFound => {
            let looked = std::path::absolute(path)
                .ok()
                .filter(|_| path.is_relative())
                .map_or(String::new(), |a| format!(" (looked for {})", a.display()));
            format!("not found{looked}{hint}")
        }
        _ => format!("cannot read it: {e}{hint}"),
    };
    FileError {
        file: path.display().to_string(),
        line: None,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_from_one_and_clamp() {
        let t = "a = 1\nb = 2\n";
        assert_eq!(line_of(t, 0), 1);
        assert_eq!(line_of(t, 6), 2);
        assert_eq!(line_of(t, 999), 3);
        let s = Spans::new(t, "x.toml");
        assert_eq!(s.err(Some(6..7), "bad").to_string(), "x.toml:2: bad");
        assert_eq!(s.err(None, "bad").to_string(), "x.toml: bad");
    }

    #[test]
    fn a_misspelt_key_gains_the_nearest_valid_one() {
        #[derive(serde::Deserialize, Debug)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct S {
            turns: Option<i64>,
            think_ms: Option<i64>,
            ttft_ms: Option<i64>,
        }
        let said = |t: &str| {
            let e = toml::from_str::<S>(t).unwrap_err();
            Spans::new(t, "session.toml").toml(&e, "").to_string()
        };
        let got = said("think_ms = 1\nturms = 3\n");
        assert!(
            got.starts_with("session.toml:2: unknown field `turms` — did you mean `turns`? (expected one of `turns`"),
            "{got}"
        );
        assert!(said("ttft = 3").contains("did you mean `ttft_ms`?"));
        // Nothing close: the list alone, as before.
        let got = said("colour = 3");
        assert!(!got.contains("did you mean"), "{got}");
        assert!(
            got.contains("unknown field `colour`, expected one of"),
            "{got}"
        );
        assert_eq!(nearest("Turns", &["turns", "think_ms"]), Some("turns"));
        assert_eq!(nearest("x", &["turns"]), None);
        assert_eq!(with_nearest("invalid type: string"), "invalid type: string");
    }

    #[test]
    fn a_missing_file_says_where_it_was_looked_for() {
        let e = std::io::Error::from(std::io::ErrorKind::NotFound);
        let got = unreadable(std::path::Path::new("session.toml"), &e, "; write one").to_string();
        let here = std::env::current_dir().unwrap().join("session.toml");
        assert_eq!(
            got,
            format!(
                "session.toml: not found (looked for {}); write one",
                here.display()
            )
        );
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let got = unreadable(std::path::Path::new("/x.toml"), &denied, "").to_string();
        assert!(got.starts_with("/x.toml: cannot read it: "), "{got}");
    }

    #[test]
    fn toml_errors_keep_their_line() {
        let t = "a = 1\nb = \n";
        let e = toml::from_str::<toml::Value>(t).unwrap_err();
        let got = Spans::new(t, "x.toml").toml(&e, "(see the docs)");
        assert_eq!(got.line, Some(2));
        assert!(got.message.ends_with("(see the docs)"), "{got}");
    }
}
