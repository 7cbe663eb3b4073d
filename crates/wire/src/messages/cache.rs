//! Anthropic's prompt-cache breakpoints, read from a Messages request: `cache_control` on
//! a tool, a system text block or a message's content block, and at the top level (a
//! breakpoint on the last cacheable block). Each is placed in the normalized request —
//! which tool, the system prompt or which message, up to which byte of its text — the
//! way `parse.rs` normalizes it (a user message's tool results first, then its text). At
//! most four: a fifth is the API's own 400.

use crate::cache::{too_many_breakpoints, Breakpoint, CacheAsk, Spot, Ttl};
use crate::error::WireError;
use crate::fields::*;
use serde_json::Value;

/// Every breakpoint of the request, or the API's refusal of them.
pub fn cache_ask(root: &Obj) -> Result<CacheAsk, WireError> {
    let mut ask = CacheAsk {
        automatic: ttl_of(root, "")?,
        ..CacheAsk::default()
    };
    let mut found = usize::from(ask.automatic.is_some());
    let mut custom = 0usize;
    for (i, t) in opt_array(root, "tools", "")?
        .into_iter()
        .flatten()
        .enumerate()
    {
        let tp = join("tools", i);
        let t = as_obj(t, &tp)?;
        if matches!(opt_str(t, "type", &tp)?, None | Some("custom")) {
            custom += 1;
        }
        if let Some(ttl) = ttl_of(t, &tp)? {
            found += 1;
            // A breakpoint on a server tool ends the prefix after the custom tools before it.
            if custom > 0 {
                ask.breakpoints.push(Breakpoint {
                    at: Spot::Tool(custom - 1),
                    ttl,
                });
            }
        }
    }
    if let Some(Value::Array(blocks)) = root.get("system") {
        let mut end = 0usize;
        for (j, b) in blocks.iter().enumerate() {
            let bp = join("system", j);
            let b = as_obj(b, &bp)?;
            if let Some(t) = opt_str(b, "text", &bp)? {
                end += t.len() + usize::from(j > 0);
            }
            if let Some(ttl) = ttl_of(b, &bp)? {
                found += 1;
                ask.breakpoints.push(Breakpoint {
                    at: Spot::System { end },
                    ttl,
                });
            }
        }
    }
    found += messages(root, &mut ask.breakpoints)?;
    if found > 4 {
        return Err(too_many_breakpoints(found));
    }
    Ok(ask)
}

/// The breakpoints on the messages' content blocks (appended to `out`), counted.
fn messages(root: &Obj, out: &mut Vec<Breakpoint>) -> Result<usize, WireError> {
    let mut found = 0;
    // Index of the raw message's first normalized message.
    let mut norm = 0usize;
    for (i, m) in opt_array(root, "messages", "")?
        .into_iter()
        .flatten()
        .enumerate()
    {
        let path = join("messages", i);
        let m = as_obj(m, &path)?;
        let Some(Value::Array(blocks)) = m.get("content") else {
            norm += 1;
            continue;
        };
        let assistant = opt_str(m, "role", &path)? == Some("assistant");
        fn kind(b: &Value) -> &str {
            b.get("type").and_then(Value::as_str).unwrap_or("")
        }
        let results = if assistant {
            0
        } else {
            blocks.iter().filter(|b| kind(b) == "tool_result").count()
        };
        let has_text = assistant || blocks.iter().any(|b| kind(b) == "text");
        let (mut rank, mut text_end, mut texts) = (0usize, 0usize, 0usize);
        for (j, b) in blocks.iter().enumerate() {
            let bp = join(&join(&path, "content"), j);
            let b = as_obj(b, &bp)?;
            let ty = b.get("type").and_then(Value::as_str).unwrap_or("");
            if ty == "text" {
                text_end += opt_str(b, "text", &bp)?.map_or(0, str::len) + usize::from(texts > 0);
                texts += 1;
            }
            let Some(ttl) = ttl_of(b, &bp)? else {
                if ty == "tool_result" {
                    rank += 1;
                }
                continue;
            };
            found += 1;
            let at = match ty {
                "tool_result" => Some((norm + rank, usize::MAX)),
                "text" => Some((norm + results, text_end)),
                _ if assistant => Some((norm, usize::MAX)),
                _ if has_text => Some((norm + results, text_end)),
                _ => (results > 0).then(|| (norm + results - 1, usize::MAX)),
            };
            if ty == "tool_result" {
                rank += 1;
            }
            if let Some((index, end)) = at {
                out.push(Breakpoint {
                    at: Spot::Message { index, end },
                    ttl,
                });
            }
        }
        norm += results + usize::from(has_text);
    }
    Ok(found)
}

/// The `cache_control` of an object, if it has one: `{"type": "ephemeral", "ttl": …}`.
fn ttl_of(obj: &Obj, path: &str) -> Result<Option<Ttl>, WireError> {
    let Some(c) = opt_obj(obj, "cache_control", path)? else {
        return Ok(None);
    };
    let cp = join(path, "cache_control");
    if req_str(c, "type", &cp)? != "ephemeral" {
        return Err(WireError::invalid(
            join(&cp, "type"),
            "Input should be 'ephemeral'",
        ));
    }
    match opt_str(c, "ttl", &cp)? {
        None | Some("5m") => Ok(Some(Ttl::FiveMinutes)),
        Some("1h") => Ok(Some(Ttl::OneHour)),
        Some(_) => Err(WireError::invalid(
            join(&cp, "ttl"),
            "Input should be '5m' or '1h'",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ask(body: Value) -> Result<CacheAsk, WireError> {
        cache_ask(body.as_object().unwrap())
    }

    fn cc() -> Value {
        json!({"type": "ephemeral"})
    }

    #[test]
    fn breakpoints_land_where_the_request_normalizes_them() {
        let a = ask(json!({
            "cache_control": {"type": "ephemeral", "ttl": "1h"},
            "tools": [{"name": "a"}, {"type": "web_search_20250305", "name": "w"},
                      {"name": "b", "cache_control": cc()}],
            "system": [{"type": "text", "text": "abc"}, {"type": "text", "text": "de", "cache_control": cc()}],
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "text", "text": "ok"}, {"type": "tool_use", "id": "t", "name": "a", "input": {}}]},
                {"role": "user", "content": [{"type": "text", "text": "xy"},
                    {"type": "tool_result", "tool_use_id": "t", "content": "r", "cache_control": cc()}]},
            ],
        }))
        .unwrap();
        assert_eq!(a.automatic, Some(Ttl::OneHour));
        let at: Vec<Spot> = a.breakpoints.iter().map(|b| b.at).collect();
        // Tool "b" is the second custom tool; "abc\nde" ends at byte 6; the tool result
        // of message 2 is normalized before its text, as message index 2.
        assert_eq!(
            at,
            [
                Spot::Tool(1),
                Spot::System { end: 6 },
                Spot::Message {
                    index: 2,
                    end: usize::MAX
                }
            ]
        );
    }

    #[test]
    fn a_fifth_breakpoint_is_the_apis_own_400() {
        let block = json!({"type": "text", "text": "x", "cache_control": cc()});
        let body = json!({"cache_control": cc(), "messages": [{"role": "user",
            "content": [block, block, block, block]}]});
        let e = ask(body).unwrap_err();
        assert_eq!(
            e.message,
            "A maximum of 4 blocks with cache_control may be provided. Found 5."
        );
        assert_eq!(e.param, None);
        let bad = json!({"system": [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "2h"}}]});
        assert_eq!(
            ask(bad).unwrap_err().message,
            "system.0.cache_control.ttl: Input should be '5m' or '1h'"
        );
    }
}
