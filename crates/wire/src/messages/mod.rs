//! Anthropic Messages (`POST /v1/messages`): its dialect.
//!
//! `{"type":"error","error":{"type","message"},"request_id"}` with a 529 when
//! overloaded, `request-id` and `anthropic-ratelimit-*` headers (resets as RFC 3339
//! times), `toolu_` tool-call ids, signed `thinking` (or sealed `redacted_thinking`)
//! blocks, and the rule that a tool loop's assistant message starts with its thinking
//! (`thinking.rs`).

mod cache;
mod parse;
mod render;
mod thinking;

use crate::cache::{CacheRules, Steps};
use crate::dialect::{too_large, Dialect, FrameState, Seals, ThoughtFault, ThoughtMint};
use crate::error::{ErrorKind, WireError};
use crate::ratelimit::{Bucket, QuotaRefusal, RateReading};
use crate::reply::{At, Part, Reply};
use crate::request::Request;
use crate::times::rfc3339;
use serde_json::{json, Value};

/// The dialect of Anthropic Messages.
pub struct Messages;

fn type_str(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidRequest => "invalid_request_error",
        ErrorKind::Authentication => "authentication_error",
        ErrorKind::PermissionDenied => "permission_error",
        ErrorKind::NotFound => "not_found_error",
        ErrorKind::RequestTooLarge => "request_too_large",
        ErrorKind::RateLimit | ErrorKind::TokenRateLimit => "rate_limit_error",
        ErrorKind::Server => "api_error",
        ErrorKind::Overloaded => "overloaded_error",
    }
}

impl Dialect for Messages {
    fn name(&self) -> &'static str {
        "messages"
    }

    fn parse(&self, body: &[u8]) -> Result<Request, WireError> {
        parse::parse_messages(body)
    }

    fn required_header(&self) -> Option<(&'static str, &'static str)> {
        Some(("anthropic-version", "2023-06-01"))
    }

    fn whole(&self, reply: &Reply) -> Value {
        render::whole(reply)
    }

    fn frame(&self, reply: &Reply, at: &At, _stream: &mut FrameState, out: &mut Vec<u8>) {
        render::frame(reply, at, out)
    }

    fn status(&self, kind: ErrorKind) -> u16 {
        match kind {
            ErrorKind::Overloaded => 529,
            k => k.http_status(),
        }
    }

    fn error_body(&self, err: &WireError, request_id: &str) -> Value {
        json!({
            "type": "error",
            "error": {"type": type_str(err.kind), "message": err.message},
            "request_id": request_id,
        })
    }

    fn request_id_header(&self) -> &'static str {
        "request-id"
    }

    /// Every bucket has its headers; the reset is the time it is full again.
    fn rate_limit_headers(&self, r: &RateReading, now_unix_ms: u64) -> Vec<(&'static str, String)> {
        let [limit, remaining, reset] = match r.bucket {
            Bucket::Requests => [
                "anthropic-ratelimit-requests-limit",
                "anthropic-ratelimit-requests-remaining",
                "anthropic-ratelimit-requests-reset",
            ],
            Bucket::Tokens => [
                "anthropic-ratelimit-tokens-limit",
                "anthropic-ratelimit-tokens-remaining",
                "anthropic-ratelimit-tokens-reset",
            ],
            Bucket::InputTokens => [
                "anthropic-ratelimit-input-tokens-limit",
                "anthropic-ratelimit-input-tokens-remaining",
                "anthropic-ratelimit-input-tokens-reset",
            ],
            Bucket::OutputTokens => [
                "anthropic-ratelimit-output-tokens-limit",
                "anthropic-ratelimit-output-tokens-remaining",
                "anthropic-ratelimit-output-tokens-reset",
            ],
        };
        vec![
            (limit, (r.limit.round() as u64).to_string()),
            (remaining, r.remaining.to_string()),
            (reset, rfc3339(now_unix_ms + r.reset_ms)),
        ]
    }

    fn quota_refused(&self, q: &QuotaRefusal) -> String {
        if q.too_large {
            return too_large(q);
        }
        format!(
            "This request would exceed your rate limit of {} {} for {}. Please try again in {:.3}s (plimsoll mock quota).",
            q.limit,
            q.bucket.rate_words(),
            q.model,
            q.retry_after_ms as f64 / 1000.0
        )
    }

    fn typical_quota(&self) -> (f64, f64) {
        (1000.0, 400_000.0)
    }

    fn tool_call_prefix(&self) -> &'static str {
        "toolu_"
    }

    /// A signed `thinking` block, or for the redacted share a `redacted_thinking` block
    /// sealed for the reply.
    fn thought(
        &self,
        _req: &Request,
        reply_id: &str,
        tokens: u32,
        mint: &mut dyn ThoughtMint,
    ) -> Part {
        if mint.redacted() {
            return Part::Hidden {
                id: String::new(),
                seal: Some(mint.seal(reply_id)),
                tokens,
            };
        }
        let text = mint.text(tokens);
        let signature = mint.sign(&text);
        Part::Thinking { text, signature }
    }

    /// Only when the request enables thinking, as the API does.
    fn check_thoughts(&self, req: &Request, seals: &dyn Seals) -> Option<ThoughtFault> {
        req.reasoning.as_ref()?;
        thinking::check_thinking(req, seals)
    }

    /// Only at the client's breakpoints, looking back 20 blocks from each; the least it
    /// caches depends on the model (the prompt-caching guide, as of November 2026).
    fn cache_rules(&self, model: &str) -> CacheRules {
        CacheRules {
            steps: Steps::Breakpoints { lookback: 20 },
            min_tokens: min_cacheable(model),
            ttl_ms: crate::Ttl::FiveMinutes.ms(),
            max_breakpoints: 4,
        }
    }

    fn model_entry(&self, id: &str) -> Value {
        json!({"type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z"})
    }

    fn model_list(&self, names: &[String]) -> Value {
        let data: Vec<Value> = names.iter().map(|n| self.model_entry(n)).collect();
        json!({"data": data, "has_more": false, "first_id": names.first(), "last_id": names.last()})
    }
}

/// The shortest prefix a Claude model caches, in tokens: 4096 for Opus 4.5 and 4.6 and
/// Haiku 4.5, 2048 for Opus 4.7 and the Haiku 3 models, 512 for the 5-series Opus,
/// Fable and Mythos, 1024 for the others (Sonnet 4.x, Opus 4.1 and 4.8 …).
fn min_cacheable(model: &str) -> u32 {
    let has = |s: &str| model.contains(s);
    if has("opus-4-5") || has("opus-4-6") || has("haiku-4-5") {
        4096
    } else if has("opus-4-7") || has("3-haiku") || has("3-5-haiku") {
        2048
    } else if has("opus-5") || has("fable-5") || has("mythos-5") {
        512
    } else {
        1024
    }
}

#[cfg(test)]
mod tests {
    use crate::{error_body, Api, ErrorKind, WireError};

    #[test]
    fn anthropic_overload_is_529_with_its_type() {
        let e = WireError::new(ErrorKind::Overloaded, "busy");
        assert_eq!(ErrorKind::Overloaded.status(Api::Messages), 529);
        let v: serde_json::Value =
            serde_json::from_slice(&error_body(Api::Messages, &e, "req_1")).unwrap();
        assert_eq!(v["type"], "error");
        assert_eq!(v["error"]["type"], "overloaded_error");
        assert_eq!(v["request_id"], "req_1");
    }
}
