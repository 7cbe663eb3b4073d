//! Gemini `generateContent` (`POST /v1beta/models/{model}:generateContent` and
//! `:streamGenerateContent?alt=sse`): its dialect.
//!
//! The model and whether to stream come from the URL; errors are Google's
//! `{"error":{"code","message","status"}}` (a request too large is a 400 there); no
//! rate-limit headers (a 429 says it in its body); thoughts shown only when asked, the
//! thought signature sealed for the reply and required back on function calls
//! (`signatures.rs`).

mod parse;
mod render;
mod signatures;

use crate::cache::{CacheRules, Steps};
use crate::dialect::{Dialect, FrameState, Seals, ThoughtFault, ThoughtMint, UrlCall, UrlRefused};
use crate::error::{ErrorKind, WireError};
use crate::ratelimit::RateReading;
use crate::reply::{At, Part, Reply};
use crate::request::Request;
use serde_json::{json, Value};

/// The dialect of Gemini `generateContent`.
pub struct Gemini;

/// Google's status name for the HTTP status (Gemini's `error.status`).
fn google_status(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidRequest | ErrorKind::RequestTooLarge => "INVALID_ARGUMENT",
        ErrorKind::Authentication => "UNAUTHENTICATED",
        ErrorKind::PermissionDenied => "PERMISSION_DENIED",
        ErrorKind::NotFound => "NOT_FOUND",
        ErrorKind::RateLimit | ErrorKind::TokenRateLimit => "RESOURCE_EXHAUSTED",
        ErrorKind::Server => "INTERNAL",
        ErrorKind::Overloaded => "UNAVAILABLE",
    }
}

impl Dialect for Gemini {
    fn name(&self) -> &'static str {
        "generate_content"
    }

    fn parse(&self, body: &[u8]) -> Result<Request, WireError> {
        parse::parse_generate(body)
    }

    /// `{model}:generateContent`, or `{model}:streamGenerateContent` with `alt=sse`.
    fn url_call(&self, tail: &str, query: Option<&str>) -> Result<Option<UrlCall>, UrlRefused> {
        let (model, action) = tail.rsplit_once(':').unwrap_or((tail, ""));
        let sse = query.is_some_and(|q| q.split('&').any(|kv| kv == "alt=sse"));
        let stream = match action {
            "generateContent" => false,
            "streamGenerateContent" if sse => true,
            "streamGenerateContent" => {
                let error = WireError::invalid(
                    "alt",
                    "the mock streams Gemini replies as server-sent events only: add ?alt=sse (the official SDKs do)",
                );
                return Err(refused(error));
            }
            other => {
                let error = WireError::new(
                    ErrorKind::NotFound,
                    format!("models/{model}:{other} is not served by the mock; it serves :generateContent and :streamGenerateContent?alt=sse"),
                );
                return Err(refused(error));
            }
        };
        Ok(Some(UrlCall {
            model: model.to_string(),
            stream,
        }))
    }

    /// Implicit caching of any prefix ending at a content, from 2048 tokens on Gemini 2.5
    /// and 4096 on later models (the caching guide, as of October 2026).
    fn cache_rules(&self, model: &str) -> CacheRules {
        CacheRules {
            steps: Steps::Blocks,
            min_tokens: if model.contains("gemini-2.5") {
                2048
            } else {
                4096
            },
            ..CacheRules::OPENAI
        }
    }

    fn whole(&self, reply: &Reply) -> Value {
        render::whole(reply)
    }

    fn frame(&self, reply: &Reply, at: &At, _stream: &mut FrameState, out: &mut Vec<u8>) {
        render::frame(reply, at, out)
    }

    fn status(&self, kind: ErrorKind) -> u16 {
        match kind {
            ErrorKind::RequestTooLarge => 400,
            k => k.http_status(),
        }
    }

    fn error_body(&self, err: &WireError, _request_id: &str) -> Value {
        json!({
            "error": {
                "code": self.status(err.kind),
                "message": err.message,
                "status": google_status(err.kind),
            }
        })
    }

    fn rate_limit_headers(
        &self,
        _r: &RateReading,
        _now_unix_ms: u64,
    ) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// Thoughts shown (as summaries) only when the request asks to include them; the
    /// signature is sealed for the reply either way.
    fn thought(
        &self,
        req: &Request,
        reply_id: &str,
        tokens: u32,
        mint: &mut dyn ThoughtMint,
    ) -> Part {
        if req.reasoning_returned {
            Part::Thinking {
                text: mint.text(tokens),
                signature: mint.seal(reply_id),
            }
        } else {
            Part::Hidden {
                id: String::new(),
                seal: Some(mint.seal(reply_id)),
                tokens,
            }
        }
    }

    /// Unless thinking is off for the request.
    fn check_thoughts(&self, req: &Request, seals: &dyn Seals) -> Option<ThoughtFault> {
        req.reasoning.as_ref()?;
        signatures::check_signatures(req, seals)
    }
}

fn refused(error: WireError) -> UrlRefused {
    UrlRefused {
        error,
        request_id: "req_gemini",
    }
}
