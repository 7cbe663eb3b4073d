//! The schemas made fit for TOML (no nulls: a key left out is the default) and the
//! reference of every key, as Markdown, written from them: one section per file, one
//! table per TOML table (`[sut]`, `[[turn]]`, `[models.NAME]`), each key with its type,
//! its default and the description its schema carries.

use serde_json::{Map, Value};

/// A schema as TOML users meet it: descriptions on one line, no `null` alternatives (TOML
/// has no null; a key left out is what an optional key means), no nulls in defaults.
pub fn tidy(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(d)) = m.get_mut("description") {
                *d = one_line(d);
            }
            drop_null(m);
            // Values (a default, an enum's members) are data, not schemas; under
            // `properties` and `definitions` the keys are names, each holding a schema.
            for (k, x) in m.iter_mut() {
                match (k.as_str(), x) {
                    ("properties" | "definitions", Value::Object(named)) => {
                        named.values_mut().for_each(tidy)
                    }
                    ("default" | "enum" | "const" | "examples", _) => {}
                    (_, x) => tidy(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// Paragraphs kept, the lines within each joined.
fn one_line(d: &str) -> String {
    d.split("\n\n")
        .map(|p| p.split('\n').map(str::trim).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn drop_null(m: &mut Map<String, Value>) {
    let null = |x: &Value| x.get("type").and_then(Value::as_str) == Some("null");
    if let Some(Value::Array(any)) = m.get("anyOf") {
        let kept: Vec<Value> = any.iter().filter(|x| !null(x)).cloned().collect();
        if kept.len() < any.len() {
            m.remove("anyOf");
            match kept.as_slice() {
                [] => {}
                [one] => {
                    m.insert("allOf".into(), Value::Array(vec![one.clone()]));
                }
                _ => {
                    m.insert("anyOf".into(), Value::Array(kept));
                }
            }
        }
    }
    if let Some(Value::Array(types)) = m.get("type") {
        let kept: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        let t = match kept.as_slice() {
            [one] => one.clone(),
            _ => Value::Array(kept),
        };
        m.insert("type".into(), t);
    }
    if let Some(Value::Array(e)) = m.get_mut("enum") {
        e.retain(|x| !x.is_null());
    }
    match m.get_mut("default") {
        Some(Value::Null) => {
            m.remove("default");
        }
        Some(Value::Object(d)) => d.retain(|_, x| !x.is_null()),
        _ => {}
    }
}

/// The page: each file's section in turn.
pub fn page(schemas: &[(&str, Value)]) -> String {
    let mut s = String::from(
        "# Config reference\n\nEvery key of Plimsoll's files, written by `plimsoll schema --reference` from the JSON\nSchemas under `schemas/`, which are made from the types that read the files: a key's\ndescription here is the one an editor shows. A key left out takes its default; a key\nmarked *required* must be given whenever its table is. A misspelt key is an error that\nnames its line and the nearest valid key.\n\nEditors built on Taplo complete and check these keys from the schema named on a file's\nfirst line (`plimsoll init` writes it): `#:schema ./.plimsoll/schemas/session.schema.json`.\n",
    );
    for (file, schema) in schemas {
        s.push_str(&format!("\n## {file}\n\n"));
        if let Some(d) = schema.get("description").and_then(Value::as_str) {
            s.push_str(&format!("{d}\n\n"));
        }
        let defs = schema.get("definitions").cloned().unwrap_or(Value::Null);
        let mut tables = Vec::new();
        table(&mut s, &mut tables, "", schema, &defs);
        // Nested tables, breadth first, each once.
        let mut seen = std::collections::BTreeSet::new();
        // A table whose keys another section already shows points at it.
        let mut shown: Vec<(Value, String)> = Vec::new();
        while let Some((path, sub)) = (!tables.is_empty()).then(|| tables.remove(0)) {
            if path.matches('.').count() > 4 || !seen.insert(path.clone()) {
                continue;
            }
            s.push_str(&format!("\n### {path}\n\n"));
            let keys = sub.get("properties").cloned().unwrap_or(Value::Null);
            if let Some((_, first)) = shown.iter().find(|(k, _)| *k == keys) {
                s.push_str(&format!("The keys of {first}.\n"));
                continue;
            }
            shown.push((keys, path.clone()));
            if let Some(d) = sub.get("description").and_then(Value::as_str) {
                s.push_str(&format!("{d}\n\n"));
            }
            let mut more = Vec::new();
            table(&mut s, &mut more, &path, &sub, &defs);
            tables.extend(more);
        }
    }
    s
}

/// A table's keys as rows; the keys that are tables themselves are queued as sections.
fn table(s: &mut String, tables: &mut Vec<(String, Value)>, at: &str, t: &Value, defs: &Value) {
    let t = resolve(t, defs);
    let Some(props) = t.get("properties").and_then(Value::as_object) else {
        return;
    };
    s.push_str("| key | type | default | description |\n|:--|:--|:--|:--|\n");
    let inner = at
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_start_matches('[');
    let inner = inner.trim_end_matches(']');
    let required: Vec<&str> = t
        .get("required")
        .and_then(Value::as_array)
        .map_or(Vec::new(), |r| r.iter().filter_map(Value::as_str).collect());
    for (key, p) in props {
        let p = resolve(p, defs);
        let path = if inner.is_empty() {
            key.clone()
        } else {
            format!("{inner}.{key}")
        };
        let (ty, sub) = type_of(&p, defs);
        if let Some((kind, sub)) = sub {
            tables.push((kind.wrap(&path), sub));
        }
        let default = match p.get("default").filter(|d| !d.is_object()) {
            _ if required.contains(&key.as_str()) => "*required*".to_string(),
            Some(d) => format!("`{d}`"),
            None => String::new(),
        };
        let desc = p.get("description").and_then(Value::as_str).unwrap_or("");
        s.push_str(&format!(
            "| `{key}` | {ty} | {default} | {} |\n",
            cell(desc)
        ));
    }
}

/// How a nested table is written in TOML.
enum Kind {
    Table,
    Array,
    Map,
}

impl Kind {
    fn wrap(&self, path: &str) -> String {
        match self {
            Kind::Table => format!("[{path}]"),
            Kind::Array => format!("[[{path}]]"),
            Kind::Map => format!("[{path}.NAME]"),
        }
    }
}

/// The type in words, and the table it opens (if it is one).
fn type_of(p: &Value, defs: &Value) -> (String, Option<(Kind, Value)>) {
    if let Some(any) = p
        .get("anyOf")
        .or_else(|| p.get("oneOf"))
        .and_then(Value::as_array)
    {
        let words: Vec<String> = any
            .iter()
            .map(|x| type_of(&resolve(x, defs), defs).0)
            .collect();
        let sub = any.iter().map(|x| resolve(x, defs)).find(is_table);
        return (words.join(" or "), sub.map(|t| (Kind::Table, t)));
    }
    if let Some(e) = p.get("enum").and_then(Value::as_array) {
        let v: Vec<String> = e.iter().map(|x| format!("`{x}`")).collect();
        return (v.join(" \\| "), None);
    }
    if let Some(c) = p.get("const") {
        return (format!("`{c}`"), None);
    }
    let ty = match p.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => String::new(),
    };
    match ty.as_str() {
        "array" => {
            let item = p
                .get("items")
                .map(|i| resolve(i, defs))
                .unwrap_or(Value::Null);
            if is_table(&item) {
                return ("array of tables".into(), Some((Kind::Array, item)));
            }
            (format!("array of {}", type_of(&item, defs).0), None)
        }
        "object" if is_table(p) => ("table".into(), Some((Kind::Table, p.clone()))),
        "object" => match p.get("additionalProperties").map(|a| resolve(a, defs)) {
            Some(a) if is_table(&a) => ("table of tables".into(), Some((Kind::Map, a))),
            Some(a) if a.is_object() => {
                // A map whose values may be tables ("string or table"): its table is shown.
                let (words, sub) = type_of(&a, defs);
                (
                    format!("table of {words}"),
                    sub.map(|(_, t)| (Kind::Map, t)),
                )
            }
            _ => ("table".into(), None),
        },
        "" => ("any".into(), None),
        t => (t.to_string(), None),
    }
}

fn is_table(v: &Value) -> bool {
    v.get("properties").is_some()
}

/// A schema with its `$ref` (or one-element `allOf`) followed, its own description kept.
fn resolve(v: &Value, defs: &Value) -> Value {
    let target = v
        .get("$ref")
        .and_then(Value::as_str)
        .or_else(|| {
            v.get("allOf")
                .and_then(Value::as_array)
                .filter(|a| a.len() == 1)
                .and_then(|a| a[0].get("$ref"))
                .and_then(Value::as_str)
        })
        .and_then(|r| r.strip_prefix("#/definitions/"))
        .and_then(|name| defs.get(name));
    match target {
        Some(t) => {
            let mut t = t.clone();
            for key in ["description", "default"] {
                if let (Some(x), Some(m)) = (v.get(key), t.as_object_mut()) {
                    m.insert(key.into(), x.clone());
                }
            }
            t
        }
        None => v.clone(),
    }
}

/// Text fit for a Markdown table's cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
        .replace("\n\n", "<br>")
        .replace('\n', " ")
}
