//! The mistakes a session file can make that TOML lets through: a placeholder nothing
//! sets (or a setup request using a name only a later request extracts), two requests
//! of one name, a session key written below a `[headers]` table, a JSON body that is
//! not JSON once filled. Each names the file and line; reading the file is `read`'s
//! business.

use super::request::Request;
use super::session::{SessionSpec, BUILTIN};
use super::SessionError;
use crate::template::placeholders;
use std::collections::BTreeMap;

type Res<T> = Result<T, SessionError>;

/// Keys of a session file or of a request: as a header name, almost surely a key written
/// below `[headers]` by mistake.
const SESSION_KEYS: &[&str] = &[
    "protocol",
    "framing",
    "encoding",
    "method",
    "url",
    "turns",
    "think_ms",
    "turn_timeout_ms",
    "expect_status",
    "body",
    "bodies",
    "form",
    "multipart",
    "ws_done_pointer",
    "ws_done_equals",
    "name",
    "until",
    "ttft_event",
    "done_event",
    "text_pointer",
];

impl SessionSpec {
    /// Every placeholder is a built-in or extracted somewhere; a setup request uses only
    /// names that an earlier setup request extracts.
    pub(super) fn names_known(&self, spans: &spans::Spans) -> Res<()> {
        let all: Vec<&str> = self
            .requests()
            .flat_map(|r| r.extract.iter().map(|e| e.name.as_str()))
            .collect();
        let mut before: Vec<&str> = Vec::new();
        for (i, r) in self.requests().enumerate() {
            let in_setup = i < self.setup.len();
            let used = r
                .templates()
                .flat_map(|(t, at)| placeholders(t).map(move |p| (p, at)));
            for (p, at) in used {
                if BUILTIN.contains(&p)
                    || crate::template::pad_len(p).is_some()
                    || crate::template::service_port(p).is_some()
                    || (!in_setup && all.contains(&p))
                    || before.contains(&p)
                {
                    continue;
                }
                let line = at.rsplit(':').next().and_then(|l| l.parse().ok());
                let err = spans::FileError {
                    file: spans.err(None, "").file,
                    line,
                    message: String::new(),
                };
                let message = if all.contains(&p) {
                    format!("{{{{{p}}}}} is used by setup request {:?} before any earlier request extracts it", r.name)
                } else {
                    format!(
                        "unknown placeholder {{{{{p}}}}}; use {}, a service's NAME.port or a name under [extract]",
                        BUILTIN.join(", ")
                    )
                };
                return Err(spans::FileError { message, ..err });
            }
            if in_setup {
                before.extend(r.extract.iter().map(|e| e.name.as_str()));
            }
        }
        Ok(())
    }
}

pub(super) fn unique_names(spec: &SessionSpec, spans: &spans::Spans) -> Res<()> {
    let mut seen: Vec<&str> = Vec::new();
    for r in spec.requests() {
        if seen.contains(&r.name.as_str()) {
            let line = r.at.rsplit(':').next().and_then(|l| l.parse().ok());
            return Err(spans::FileError {
                line,
                message: format!("two requests are named {:?}; give each a name of its own (latency is reported per name)", r.name),
                ..spans.err(None, "")
            });
        }
        seen.push(&r.name);
    }
    Ok(())
}

/// A key such as `body` under a headers table: TOML put it there, not where it was meant.
pub(super) fn headers_in_place(
    headers: &BTreeMap<String, String>,
    table: &str,
    text: &str,
    spans: &spans::Spans,
) -> Res<()> {
    let Some(name) = headers.keys().find(|k| SESSION_KEYS.contains(&k.as_str())) else {
        return Ok(());
    };
    let at = text.find(table).and_then(|h| {
        text[h..]
            .find(&format!("\n{name}"))
            .map(|i| h + i + 1..h + i + 2)
    });
    Err(spans.err(
        at,
        format!("header {name:?} is a session setting written after {table}: TOML puts every key after a [table] line into that table, so it would be sent as a header; move `{name} = …` above {table}"),
    ))
}

/// A body sent as JSON that is not JSON once its placeholders are filled (a quote missing
/// around `{{name}}`, a trailing comma): the SUT would answer 400 and nothing would say why.
pub(super) fn json_body_warnings(r: &Request, sequence: bool) -> Vec<String> {
    let json = r
        .headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v.contains("json"));
    if !json {
        return Vec::new();
    }
    r.bodies
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            let mut sample = b.clone();
            for p in placeholders(b).collect::<Vec<_>>() {
                sample = sample.replace(&format!("{{{{{p}}}}}"), "x1");
            }
            let e = serde_json::from_str::<serde_json::Value>(&sample).err()?;
            Some(format!("{}: warning: body {} {}is not JSON once filled ({e}), yet content-type says JSON; put quotes around string placeholders, e.g. \"{{{{session}}}}\"", r.body_at, i + 1, if sequence { format!("of request {:?} ", r.name) } else { String::new() }))
        })
        .collect()
}
