//! The session file `init --from-openapi` writes for one operation: its method and path
//! (path parameters as `{{…}}`), its body in the encoding the document gives (JSON,
//! `form` or `multipart`) with the values `fields` chooses, and for each id the turn
//! needs, a `[[setup]]` call that makes it (a create) or finds it (a list or a search),
//! with a `[[teardown]]` that deletes what setup made. Reading the document is the
//! parent module's business.

use super::fields::fill;
use super::{Doc, Encoding, Operation};
use serde_json::Value;

/// A setup call that gives one id.
struct Setup {
    name: String,
    method: &'static str,
    path: String,
    body: Option<String>,
    pointer: String,
    /// The DELETE that removes what a create made.
    teardown: Option<String>,
}

/// The session file for `op`, every placeholder set by a setup call or built in.
pub fn session(doc: &Doc, op: &Operation) -> anyhow::Result<String> {
    let (fields, mut ids) = match &op.body {
        Some((_, schema)) => fill(&doc.raw, schema),
        None => (Vec::new(), Vec::new()),
    };
    let path_ids: Vec<String> = op.params.clone();
    let mut setups = Vec::new();
    for p in &path_ids {
        setups
            .push(source(doc, p, &collection_of(&op.path, p), true).ok_or_else(|| unknown(op, p))?);
    }
    ids.retain(|i| !path_ids.contains(i));
    for i in &ids {
        let stem = i.trim_end_matches("_id");
        setups.push(source(doc, i, &format!("/{stem}s"), false).ok_or_else(|| unknown(op, i))?);
    }
    let url = format!(
        "{{{{base}}}}{}",
        op.path.replace('{', "{{").replace('}', "}}")
    );
    let body = op.body.as_ref().map(|(enc, _)| body_lines(*enc, &fields));
    let mut out = format!(
        "# Written by `plimsoll init --from-openapi` for {}.\n# {}\n# Every key is in docs/config.md.\nturns = 3\nturn_timeout_ms = 60000\n",
        op.label(),
        if fields.iter().any(|(_, v)| v.to_string().contains("[[plimsoll")) {
            "The [[plimsoll …]] marker is in the field that looked like the user's message: keep it in the text your system sends the LLM."
        } else {
            "No body field looked like the user's message: put the [[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] marker in the one your system sends the LLM."
        }
    );
    let protocol = if op.sse_only {
        "protocol = \"sse\"\n"
    } else {
        ""
    };
    if setups.is_empty() {
        out.push_str(&format!(
            "{protocol}method = \"{}\"\nurl = \"{url}\"\n",
            op.method
        ));
        match (&op.body, body) {
            (Some((Encoding::Json, _)), Some(b)) => out.push_str(&format!(
                "{b}\n[headers]\ncontent-type = \"application/json\"\n"
            )),
            (_, Some(b)) => out.push_str(&format!("{b}\n")),
            _ => {}
        }
        return Ok(out);
    }
    for s in &setups {
        out.push_str(&format!(
            "\n[[setup]]\nname = \"{}\"\nmethod = \"{}\"\nurl = \"{{{{base}}}}{}\"\n{}extract = {{ {} = \"{}\" }}\n",
            s.name.trim_end_matches("_id").to_string() + "_" + if s.teardown.is_some() { "create" } else { "find" },
            s.method,
            s.path,
            s.body.as_ref().map_or(String::new(), |b| format!("body = '{b}'\n")),
            s.name,
            s.pointer
        ));
    }
    out.push_str(&format!(
        "\n[[turn]]\nname = \"turn\"\n{protocol}method = \"{}\"\nurl = \"{url}\"\n",
        op.method
    ));
    if let Some(b) = body {
        out.push_str(&format!("{b}\n"));
    }
    for s in setups.iter().filter(|s| s.teardown.is_some()) {
        out.push_str(&format!(
            "\n[[teardown]]\nname = \"{}_delete\"\nmethod = \"DELETE\"\nurl = \"{{{{base}}}}{}\"\n",
            s.name.trim_end_matches("_id"),
            s.teardown.as_deref().unwrap_or_default()
        ));
    }
    Ok(out)
}

fn unknown(op: &Operation, id: &str) -> anyhow::Error {
    anyhow::anyhow!("{} needs {{{{{id}}}}}, and no call of the document makes or lists it (no POST or GET of its collection); write the session by hand from `plimsoll init --url …`", op.label())
}

/// `/threads/{thread_id}/runs` and `thread_id` → `/threads`.
fn collection_of(path: &str, param: &str) -> String {
    path.split(&format!("/{{{param}}}"))
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The call that makes (create: POST) or finds (GET, or POST …/search) an id, in the
/// order `create_first` asks; its reply's pointer to the id.
fn source(doc: &Doc, id: &str, collection: &str, create_first: bool) -> Option<Setup> {
    let find = |method: &str, path: &str| {
        doc.ops
            .iter()
            .find(|o| o.method == method && o.path == path)
    };
    let create = find("POST", collection).and_then(|o| {
        let (fields, ids) = o
            .body
            .as_ref()
            .map_or((Vec::new(), Vec::new()), |(_, s)| fill(&doc.raw, s));
        let body = serde_json::Value::Object(fields.into_iter().collect()).to_string();
        let delete = format!("{collection}/{{{id}}}");
        ids.is_empty().then(|| Setup {
            name: id.into(),
            method: "POST",
            path: collection.into(),
            body: Some(body),
            pointer: pointer(doc, o, id, false),
            teardown: find("DELETE", &delete).map(|_| format!("{collection}/{{{{{id}}}}}")),
        })
    });
    let search = format!("{collection}/search");
    let list = find("GET", collection)
        .map(|o| (o, "GET", None))
        .or_else(|| find("POST", &search).map(|o| (o, "POST", Some("{}".to_string()))))
        .map(|(o, method, body)| Setup {
            name: id.into(),
            method,
            path: o.path.clone(),
            body,
            pointer: pointer(doc, o, id, true),
            teardown: None,
        });
    if create_first {
        create.or(list)
    } else {
        list.or(create)
    }
}

/// Where the id is in the reply of `o`: its own name, else `id` (in the first element of
/// a list).
fn pointer(doc: &Doc, o: &Operation, id: &str, list: bool) -> String {
    let raw_op = &doc.raw["paths"][&o.path][o.method.to_lowercase()];
    let schema = raw_op["responses"]
        .as_object()
        .and_then(|r| r.iter().find(|(c, _)| c.starts_with('2')))
        .map(|(_, r)| doc.resolve(&r["content"]["application/json"]["schema"]))
        .unwrap_or(Value::Null);
    let item = match (list, schema.get("items")) {
        (true, Some(i)) => doc.resolve(i),
        _ => schema,
    };
    let has = |k: &str| item.get("properties").is_some_and(|p| p.get(k).is_some());
    let key = if has(id) || !has("id") { id } else { "id" };
    if list {
        format!("/0/{key}")
    } else {
        format!("/{key}")
    }
}

/// The body in the session file: `body = '…'` (JSON), `form = { … }` or `multipart = { … }`.
fn body_lines(enc: Encoding, fields: &[(String, Value)]) -> String {
    match enc {
        Encoding::Json => {
            let obj = Value::Object(fields.iter().cloned().collect());
            format!("body = '{obj}'")
        }
        Encoding::Form | Encoding::Multipart => {
            let table = if enc == Encoding::Form {
                "form"
            } else {
                "multipart"
            };
            let items: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{k} = {}", toml_value(v)))
                .collect();
            format!("{table} = {{ {} }}", items.join(", "))
        }
    }
}

/// A field's value as a TOML inline value: text quoted, numbers and booleans as they
/// are, anything else as its JSON text.
fn toml_value(v: &Value) -> String {
    let text = match v {
        Value::Bool(_) | Value::Number(_) => return v.to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}
