//! A SUT's own description read for `plimsoll init --from-openapi`: its OpenAPI
//! document's operations (method, path, path parameters, the body's encoding and schema,
//! `$ref`s resolved), the one the user picks, and a session file written for it (`write`)
//! with the values its fields get (`fields`). Fetching the document and asking the user
//! are `cmd::init`'s business.

mod fields;
mod refs;
mod write;

pub use write::session;

use serde_json::Value;

/// How an operation's body is encoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Encoding {
    Json,
    Form,
    Multipart,
}

/// One operation of the document.
#[derive(Clone, Debug)]
pub struct Operation {
    pub method: String,
    pub path: String,
    pub id: Option<String>,
    pub summary: String,
    /// Path parameters, in the order the path names them.
    pub params: Vec<String>,
    /// The body's encoding and its schema (resolved), when it takes one.
    pub body: Option<(Encoding, Value)>,
    /// Its success reply is only a stream of server-sent events.
    pub sse_only: bool,
}

impl Operation {
    /// `POST /agents/{agent_id}/runs (create_agent_run)`.
    pub fn label(&self) -> String {
        let id = self
            .id
            .as_ref()
            .map_or(String::new(), |i| format!(" ({i})"));
        format!("{} {}{id}", self.method, self.path)
    }

    /// A turn endpoint is likely one that takes the user's message.
    pub fn takes_a_message(&self) -> bool {
        self.body
            .as_ref()
            .is_some_and(|(_, s)| fields::message_field(s).is_some())
    }
}

/// The document with its operations.
pub struct Doc {
    pub raw: Value,
    pub ops: Vec<Operation>,
}

const METHODS: &[&str] = &["get", "post", "put", "patch", "delete"];

impl Doc {
    pub fn parse(raw: Value) -> anyhow::Result<Doc> {
        let Some(paths) = raw.get("paths").and_then(Value::as_object) else {
            anyhow::bail!("not an OpenAPI document: it has no \"paths\" object");
        };
        let mut ops = Vec::new();
        for (path, item) in paths {
            for m in METHODS {
                let Some(op) = item.get(*m) else { continue };
                ops.push(Operation {
                    method: m.to_uppercase(),
                    path: path.clone(),
                    id: op["operationId"].as_str().map(str::to_string),
                    summary: op["summary"].as_str().unwrap_or("").to_string(),
                    params: params(path),
                    body: body(&raw, op),
                    sse_only: sse_only(op),
                });
            }
        }
        Ok(Doc { raw, ops })
    }

    /// The operation `want` names: its operationId, or `METHOD /path`, or a path only
    /// one POST has.
    pub fn pick(&self, want: &str) -> anyhow::Result<&Operation> {
        let w = want.trim();
        let by_label = |o: &&Operation| {
            o.id.as_deref() == Some(w) || format!("{} {}", o.method, o.path).eq_ignore_ascii_case(w)
        };
        if let Some(o) = self.ops.iter().find(by_label) {
            return Ok(o);
        }
        let posts: Vec<&Operation> = self
            .ops
            .iter()
            .filter(|o| o.path == w && o.method == "POST")
            .collect();
        match posts.as_slice() {
            [one] => Ok(one),
            _ => anyhow::bail!(
                "--operation {want:?} names no operation of the document; give its operationId or \"METHOD /path\", e.g. {:?}",
                self.ops.first().map_or("POST /runs".into(), |o| format!("{} {}", o.method, o.path))
            ),
        }
    }

    /// Follows `$ref`s (and merges `allOf`) until a schema with content.
    pub fn resolve(&self, s: &Value) -> Value {
        refs::resolve(&self.raw, s, 0)
    }
}

fn params(path: &str) -> Vec<String> {
    path.split('{')
        .skip(1)
        .filter_map(|r| r.split_once('}').map(|(n, _)| n.to_string()))
        .collect()
}

/// The request body's encoding and schema: JSON first, then form, then multipart.
fn body(raw: &Value, op: &Value) -> Option<(Encoding, Value)> {
    let content = op.pointer("/requestBody/content")?.as_object()?;
    let kinds = [
        ("application/json", Encoding::Json),
        ("application/x-www-form-urlencoded", Encoding::Form),
        ("multipart/form-data", Encoding::Multipart),
    ];
    kinds.iter().find_map(|(ct, enc)| {
        let schema = content
            .get(*ct)?
            .get("schema")
            .cloned()
            .unwrap_or(Value::Null);
        Some((*enc, refs::resolve(raw, &schema, 0)))
    })
}

/// Whether the success reply offers only `text/event-stream`.
fn sse_only(op: &Value) -> bool {
    let Some(responses) = op.get("responses").and_then(Value::as_object) else {
        return false;
    };
    let ok = responses
        .iter()
        .find(|(code, _)| code.starts_with('2'))
        .and_then(|(_, r)| r.get("content"))
        .and_then(Value::as_object);
    ok.is_some_and(|c| !c.is_empty() && c.keys().all(|k| k == "text/event-stream"))
}

#[cfg(test)]
mod tests;
