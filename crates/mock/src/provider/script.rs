//! Scripted tool-call choreography: a model's deterministic state machine.
//!
//! A script is a list of steps. The step that answers a request is chosen by how
//! many tool results the conversation already holds in the script's scope (since the
//! last user message for `scope = "turn"`, or in the whole conversation): the first
//! request of a turn gets step 0, the request carrying step 0's result gets step 1, and
//! so on; past the last step the model answers in text. A `call` step asks for a tool
//! with templated arguments; a `say` step answers with templated text. `expect` on a
//! call step is what the matching tool result must contain (the integrity oracle's echo
//! check: what was stored must come back intact when it is read).
//!
//! Templates: `{{session}}`, `{{nonce}}`, `{{turn}}` (1-based user turn), `{{step}}`,
//! `{{result.N}}` / `{{result.last}}` (text of a tool result earlier in scope).

use serde_json::Value;

/// How far back the step counter looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Turn,
    Conversation,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Call {
        tool: String,
        /// Argument template: strings in it are templates.
        args: Value,
        expect: Option<String>,
    },
    Say {
        text: String,
    },
}

/// Values a template may use.
pub struct Vars<'a> {
    pub session: &'a str,
    pub nonce: &'a str,
    pub turn: u32,
    pub step: usize,
    pub results: &'a [&'a str],
}

const NAMES: &[&str] = &["session", "nonce", "turn", "step", "result.last"];

/// Checks every `{{…}}` in `template` names a known value; returns the first unknown.
pub fn unknown_placeholder(template: &str) -> Option<String> {
    placeholders(template)
        .find(|name| {
            !NAMES.contains(name)
                && name
                    .strip_prefix("result.")
                    .is_none_or(|n| n.parse::<usize>().is_err())
        })
        .map(str::to_string)
}

fn placeholders(template: &str) -> impl Iterator<Item = &str> {
    template
        .split("{{")
        .skip(1)
        .filter_map(|rest| rest.split_once("}}").map(|(name, _)| name.trim()))
}

/// Fills a template. A `result.N` that does not exist yet renders as empty.
pub fn render(template: &str, v: &Vars) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let Some((name, after)) = rest[i + 2..].split_once("}}") else {
            out.push_str(&rest[i..]);
            return out;
        };
        match name.trim() {
            "session" => out.push_str(v.session),
            "nonce" => out.push_str(v.nonce),
            "turn" => out.push_str(&v.turn.to_string()),
            "step" => out.push_str(&v.step.to_string()),
            "result.last" => out.push_str(v.results.last().copied().unwrap_or("")),
            other => {
                if let Some(n) = other
                    .strip_prefix("result.")
                    .and_then(|n| n.parse::<usize>().ok())
                {
                    out.push_str(v.results.get(n).copied().unwrap_or(""));
                }
            }
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Renders every string inside a JSON template.
pub fn render_value(template: &Value, v: &Vars) -> Value {
    match template {
        Value::String(s) => Value::String(render(s, v)),
        Value::Array(a) => Value::Array(a.iter().map(|x| render_value(x, v)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), render_value(x, v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Every placeholder used anywhere in a JSON template.
pub fn unknown_in_value(template: &Value) -> Option<String> {
    match template {
        Value::String(s) => unknown_placeholder(s),
        Value::Array(a) => a.iter().find_map(unknown_in_value),
        Value::Object(m) => m.values().find_map(unknown_in_value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_known_values_and_results() {
        let v = Vars {
            session: "s1",
            nonce: "psn-ab",
            turn: 2,
            step: 1,
            results: &["r0", "r1"],
        };
        assert_eq!(render("{{session}}/{{ nonce }}/{{turn}}/{{step}}/{{result.0}}/{{result.last}}/{{result.7}}", &v), "s1/psn-ab/2/1/r0/r1/");
        assert_eq!(render("open {{ no end", &v), "open {{ no end");
        let args = serde_json::json!({"k": ["{{nonce}}", 3]});
        assert_eq!(
            render_value(&args, &v),
            serde_json::json!({"k": ["psn-ab", 3]})
        );
    }

    #[test]
    fn flags_unknown_placeholders() {
        assert_eq!(
            unknown_placeholder("a {{turn}} {{sesion}}"),
            Some("sesion".into())
        );
        assert_eq!(unknown_placeholder("{{result.3}} {{result.last}}"), None);
        assert_eq!(
            unknown_in_value(&serde_json::json!({"a": {"b": "{{x}}"}})),
            Some("x".into())
        );
    }
}
