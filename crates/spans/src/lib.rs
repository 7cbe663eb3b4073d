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

/// A file that could not be read at all.
pub fn unreadable(path: &std::path::Path, e: &std::io::Error, hint: &str) -> FileError {
    FileError {
        file: path.display().to_string(),
        line: None,
        message: format!("cannot read it: {e}{hint}"),
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
    fn toml_errors_keep_their_line() {
        let t = "a = 1\nb = \n";
        let e = toml::from_str::<toml::Value>(t).unwrap_err();
        let got = Spans::new(t, "x.toml").toml(&e, "(see the docs)");
        assert_eq!(got.line, Some(2));
        assert!(got.message.ends_with("(see the docs)"), "{got}");
    }
}
