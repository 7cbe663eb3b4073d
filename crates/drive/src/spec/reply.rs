//! What a request takes from its reply: values to extract (by JSON pointer or from a
//! header, optional with a default) and checks the reply must pass — their types, their
//! raw TOML forms, and reading them into the types with the mistakes named. Applying
//! them to a reply is `crate::checks`' business.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use toml::Spanned;

type Res<T> = Result<T, spans::FileError>;
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    Equals(String, Value),
    Contains(String, String),
    Present(String),
    /// The text deltas of a stream, joined, contain this.
    TextContains(String),
}

/// Where an extracted value comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    Pointer(String),
    Header(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Extract {
    pub name: String,
    pub from: Source,
    /// With a default the extract is optional: a reply without it sets the default.
    pub default: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum RawExtract {
    Pointer(String),
    Table(RawExtractTable),
}

/// The table form of an extract: a value from the JSON reply or a reply header, optional
/// when it has a default.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExtractTable {
    /// A JSON pointer into the JSON reply (or a stream's last JSON event), e.g. "/id"; a
    /// negative index counts from the end. Give pointer or header, not both.
    pointer: Option<String>,
    /// The name of a reply header to take, e.g. "location" (case-insensitive). Give pointer
    /// or header, not both.
    header: Option<String>,
    /// The value used when the reply lacks it, which makes the extract optional; without it
    /// a missing value fails the request.
    default: Option<String>,
}

/// A [[check]]: a test the reply must pass, on a JSON pointer (with exactly one of equals,
/// contains or present = true) or, on a stream, text_contains.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCheck {
    /// A JSON pointer into the reply (the JSON body, a stream's last JSON event, a
    /// WebSocket message), e.g. "/reply"; "/messages/-1" is the last element.
    pointer: Option<String>,
    /// The value (any TOML value) at pointer must equal this.
    #[schemars(with = "Option<serde_json::Value>")]
    equals: Option<toml::Value>,
    /// The string at pointer must contain this text.
    contains: Option<String>,
    /// true: the pointer must be present in the reply.
    present: Option<bool>,
    /// protocol = "sse" only, without pointer: the stream's text deltas joined must contain
    /// this text.
    text_contains: Option<String>,
}

pub(crate) fn extracts(
    raw: &BTreeMap<String, Spanned<RawExtract>>,
    spans: &spans::Spans,
) -> Res<Vec<Extract>> {
    let mut out = Vec::new();
    for (name, v) in raw {
        let bad = |m: String| spans.err(Some(v.span()), format!("extract.{name}: {m}"));
        let (from, default) = match v.get_ref() {
            RawExtract::Pointer(p) => (Source::Pointer(p.clone()), None),
            RawExtract::Table(t) => match (&t.pointer, &t.header) {
                (Some(p), None) => (Source::Pointer(p.clone()), t.default.clone()),
                (None, Some(h)) => (Source::Header(h.to_ascii_lowercase()), t.default.clone()),
                _ => {
                    return Err(bad(
                        "give pointer = \"/id\" (from the JSON reply) or header = \"location\", not both or neither".into(),
                    ))
                }
            },
        };
        if let Source::Pointer(p) = &from {
            if !pointer_ok(p) {
                return Err(bad(format!(
                    "must be a JSON pointer such as \"/id\" (got {p:?})"
                )));
            }
        }
        out.push(Extract {
            name: name.clone(),
            from,
            default,
        });
    }
    Ok(out)
}

pub(crate) fn checks(
    raw: &[Spanned<RawCheck>],
    stream: bool,
    spans: &spans::Spans,
) -> Res<Vec<Check>> {
    let mut out = Vec::new();
    for c in raw {
        let bad = |m: &str| spans.err(Some(c.span()), m.to_string());
        let r = c.get_ref();
        let check = match (&r.pointer, &r.equals, &r.contains, r.present, &r.text_contains) {
            (None, None, None, None, Some(t)) if stream => Check::TextContains(t.clone()),
            (_, _, _, _, Some(_)) => {
                return Err(bad("text_contains reads a stream's text deltas: it needs protocol = \"sse\" and no pointer"))
            }
            (None, ..) => return Err(bad("each [[check]] needs pointer = \"/field\" (or text_contains = \"…\" on a stream)")),
            (Some(p), ..) if !pointer_ok(p) => {
                return Err(bad("a check's pointer must be a JSON pointer such as \"/reply\" (\"/messages/-1\" is the last element)"))
            }
            (Some(p), Some(v), None, None, None) => Check::Equals(p.clone(), json(v)),
            (Some(p), None, Some(s), None, None) => Check::Contains(p.clone(), s.clone()),
            (Some(p), None, None, Some(true), None) => Check::Present(p.clone()),
            _ => return Err(bad("each [[check]] needs exactly one of equals, contains or present = true")),
        };
        out.push(check);
    }
    Ok(out)
}

pub(crate) fn json(v: &toml::Value) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

pub(crate) fn pointer_ok(p: &str) -> bool {
    p.is_empty() || p.starts_with('/')
}
