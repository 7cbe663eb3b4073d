//! What the mock makes up: text of a drawn number of tokens, written as sentences, and
//! values that satisfy a tool's JSON Schema. Drawn from the request's RNG, so the same
//! seed gives the same words.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Map, Value};

const WORDS: &[&str] = &[
    "the", "agent", "plans", "a", "careful", "answer", "with", "tools", "and", "memory", "load",
    "line", "ship", "harbor", "signal", "measure", "steady", "rising", "tide", "of", "calls",
    "tokens", "stream", "quietly", "under", "pressure", "every", "session", "holds", "its", "own",
    "state", "while", "the", "knee", "bends", "near", "capacity", "so", "we", "test", "again",
    "before", "shipping", "results", "to", "users", "who", "depend", "on", "them", "daily",
    "across", "many", "hosts", "in", "one", "region", "today", "soon", "clear", "notes", "help",
    "everyone",
];

/// `n` words, each one token under the mock's token rule.
pub(crate) fn words(n: u32, rng: &mut ChaCha8Rng) -> String {
    // Sentences, as a model writes them (a voice agent speaks each as it is done): a
    // capital first and a full stop last, the stop one of the `n` tokens; their lengths
    // in a fixed cycle, so the same seed draws the same words.
    const LENGTHS: [u32; 5] = [7, 11, 9, 13, 8];
    let mut s = String::with_capacity(n as usize * 7);
    let (mut left, mut k) = (n, 0);
    while left > 0 {
        // The last sentence takes what is left, its stop included (one token: no stop).
        let len = match left {
            1 => 1,
            r => LENGTHS[k % LENGTHS.len()].min(r - 1),
        };
        for i in 0..len {
            let w = WORDS[rng.gen_range(0..WORDS.len())];
            if !s.is_empty() {
                s.push(' ');
            }
            let mut c = w.chars();
            match i {
                0 => s.extend(c.next().map(|f| f.to_ascii_uppercase())),
                _ => s.extend(c.next()),
            }
            s.push_str(c.as_str());
        }
        left -= len;
        if left > 0 {
            s.push('.');
            left -= 1;
        }
        k += 1;
    }
    s
}

/// A value that satisfies the common parts of a JSON Schema: types, enums,
/// required properties, nested objects and arrays.
pub(crate) fn arguments_for(schema: &Value, rng: &mut ChaCha8Rng) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    match ty {
        "object" => {
            let mut out = Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, sub) in props {
                    out.insert(k.clone(), arguments_for(sub, rng));
                }
            }
            Value::Object(out)
        }
        "array" => {
            let item = schema
                .get("items")
                .cloned()
                .unwrap_or(json!({"type": "string"}));
            json!([arguments_for(&item, rng)])
        }
        "integer" => json!(rng.gen_range(1..100)),
        "number" => json!(rng.gen_range(1..100) as f64 / 4.0),
        "boolean" => json!(rng.gen_bool(0.5)),
        "null" => Value::Null,
        _ => json!(format!(
            "{} {}",
            WORDS[rng.gen_range(0..WORDS.len())],
            rng.gen_range(0..1000)
        )),
    }
}
