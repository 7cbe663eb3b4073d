//! Why a SUT died, read from its last output for a person: the cause line first (the
//! last exception line of a Python, Node, Go or Rust trace, else the last error-level
//! line, else the last line), ANSI colours stripped; then at most [`CONTEXT`] lines before
//! it with repeated frames collapsed ("… 37 similar frames"), so a framework's frames
//! printed dozens of times do not bury it; then where the whole output is kept. Keeping
//! that file is `sut`'s business.

use super::level::{level_of, Level};
use super::mask::mask;
use std::path::Path;

/// Lines of context shown before the cause.
pub const CONTEXT: usize = 20;

/// `line` without ANSI escape sequences (colours, cursor moves).
pub fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // Parameters and intermediates, then one final byte in @..~.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out
}

/// An exception's own line: `pkg.module.UnsafeMasterKeyError: …`, `TypeError: …`,
/// `panic: …`, `fatal error: …`, `thread 'main' panicked at …`, `Error: …`.
fn is_exception(line: &str) -> bool {
    if line.starts_with(char::is_whitespace) {
        return false;
    }
    if line.starts_with("panic: ")
        || line.starts_with("fatal error: ")
        || (line.starts_with("thread '") && line.contains("panicked"))
    {
        return true;
    }
    let Some((head, _)) = line.split_once(": ") else {
        return false;
    };
    let name = head.rsplit('.').next().unwrap_or(head);
    !head.contains(' ')
        && head
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        && ["Error", "Exception", "Exit", "Interrupt", "Fault"]
            .iter()
            .any(|s| name.ends_with(s))
}

/// A frame of a trace: `  File "…", line 3, in f`, `    at f (file.js:1:2)`,
/// `  /go/src/x.go:12 +0x1d`, and the indented source lines between them.
fn is_frame(line: &str) -> bool {
    let t = line.trim_start();
    line.starts_with(char::is_whitespace)
        && (t.starts_with("File \"") || t.starts_with("at ") || t.contains(".go:"))
}

/// Which line is the cause: the last exception line, else the last error-level line,
/// else the last non-empty one.
fn cause_at(lines: &[String]) -> Option<usize> {
    let last = |f: &dyn Fn(&str) -> bool| lines.iter().rposition(|l| f(l));
    last(&is_exception)
        .or_else(|| last(&|l| matches!(level_of(l), Some(Level::Error))))
        .or_else(|| last(&|l| !l.trim().is_empty()))
}

/// The lines before the cause with frames seen before collapsed into a count, the last
/// [`CONTEXT`] of them.
fn context(before: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<String> = Vec::new();
    let mut similar = 0usize;
    let mut skipping = false;
    for l in before {
        let key = mask(l.trim());
        let repeat = l.starts_with(char::is_whitespace) && !seen.insert(key);
        if repeat {
            similar += usize::from(is_frame(l));
            skipping = true;
            continue;
        }
        if skipping && similar > 0 {
            out.push(format!(
                "  … {similar} similar frame{}",
                if similar == 1 { "" } else { "s" }
            ));
        }
        similar = 0;
        skipping = false;
        out.push(l.clone());
    }
    if similar > 0 {
        out.push(format!(
            "  … {similar} similar frame{}",
            if similar == 1 { "" } else { "s" }
        ));
    }
    let from = out.len().saturating_sub(CONTEXT);
    out.split_off(from)
}

/// The cause first, the context, and where the whole output is: what a person reads of
/// a SUT that died.
pub fn digest(tail: &str, whole: Option<&Path>) -> String {
    let lines: Vec<String> = tail.lines().map(strip_ansi).collect();
    let Some(at) = cause_at(&lines) else {
        return "it printed nothing".into();
    };
    let mut out = vec![format!("cause: {}", lines[at].trim())];
    let ctx = context(&lines[..at]);
    if !ctx.is_empty() {
        out.push(format!(
            "before it ({}, repeated frames collapsed):",
            result::words::count(ctx.len() as u64, "line")
        ));
        out.extend(ctx.into_iter().map(|l| format!("  {l}")));
    }
    let after: Vec<&String> = lines[at + 1..]
        .iter()
        .filter(|l| !l.trim().is_empty())
        .collect();
    if !after.is_empty() {
        out.push("after it:".into());
        out.extend(after.iter().rev().take(5).rev().map(|l| format!("  {l}")));
    }
    if let Some(p) = whole {
        out.push(format!("its whole output: {}", p.display()));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// LiteLLM 1.106 without a master key, as a new user met it: the lifespan frames
    /// dozens of times, the cause at the very end.
    fn litellm() -> String {
        let mut t = vec![
            "\u{1b}[32mINFO\u{1b}[0m:     Started server process [4242]".to_string(),
            "\u{1b}[32mINFO\u{1b}[0m:     Waiting for application startup.".to_string(),
            "\u{1b}[31mERROR\u{1b}[0m:    Traceback (most recent call last):".to_string(),
        ];
        for _ in 0..37 {
            t.push("  File \"/venv/lib/python3.11/site-packages/starlette/routing.py\", line 694, in lifespan".into());
            t.push("    async with self.lifespan_context(app) as maybe_state:".into());
            t.push("  File \"/venv/lib/python3.11/contextlib.py\", line 210, in __aenter__".into());
            t.push("    return await anext(self.gen)".into());
        }
        t.push("  File \"/venv/lib/python3.11/site-packages/litellm/proxy/proxy_server.py\", line 601, in proxy_startup_event".into());
        t.push("    raise UnsafeMasterKeyError()".into());
        t.push("litellm.proxy._types.UnsafeMasterKeyError: LiteLLM is running without a master key; no master key is set".into());
        t.push("\u{1b}[31mERROR\u{1b}[0m:    Application startup failed. Exiting.".into());
        t.join("\n")
    }

    #[test]
    fn a_long_repeated_traceback_gives_its_exception_first() {
        let d = digest(&litellm(), Some(Path::new("/tmp/plimsoll-log-1-0.log")));
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines[0], "cause: litellm.proxy._types.UnsafeMasterKeyError: LiteLLM is running without a master key; no master key is set");
        assert!(d.contains("  … 72 similar frames"), "{d}");
        assert!(lines.len() <= 30, "{d}");
        assert!(!d.contains('\u{1b}'), "{d}");
        assert_eq!(
            *lines.last().unwrap(),
            "its whole output: /tmp/plimsoll-log-1-0.log"
        );
        assert!(
            d.contains("after it:\n  ERROR:    Application startup failed. Exiting."),
            "{d}"
        );
    }

    #[test]
    fn node_go_rust_and_error_lines_are_causes_too() {
        let cause = |t: &str| digest(t, None).lines().next().unwrap().to_string();
        assert_eq!(
            cause("x\nTypeError: a is not a function\n    at f (/app/i.js:3:9)"),
            "cause: TypeError: a is not a function"
        );
        assert_eq!(cause("panic: runtime error: index out of range\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/m.go:9 +0x1d"), "cause: panic: runtime error: index out of range");
        assert_eq!(
            cause("thread 'main' panicked at src/main.rs:2:5:\nboom"),
            "cause: thread 'main' panicked at src/main.rs:2:5:"
        );
        assert_eq!(
            cause("starting\nlevel=ERROR msg=\"bind failed\"\nbye"),
            "cause: level=ERROR msg=\"bind failed\""
        );
        assert_eq!(cause("only this"), "cause: only this");
        assert_eq!(digest("", None), "it printed nothing");
    }
}
