//! OpenAI Chat Completions (`POST /v1/chat/completions`): its dialect.
//!
//! OpenAI's envelope, headers and reasoning item (`openai.rs`); `chat.completion` bodies
//! and `chat.completion.chunk` streams (`render.rs`). Chat Completions never shows
//! reasoning and checks none sent back: it only takes its time.

mod parse;
mod render;

use crate::dialect::{Dialect, FrameState, ThoughtMint};
use crate::error::{ErrorKind, WireError};
use crate::openai;
use crate::ratelimit::RateReading;
use crate::reply::{At, Part, Reply};
use crate::request::Request;
use serde_json::Value;

/// The dialect of Chat Completions (and the OpenAI conventions the mock's own
/// endpoints answer in).
pub struct Chat;

impl Dialect for Chat {
    fn name(&self) -> &'static str {
        "chat_completions"
    }

    fn parse(&self, body: &[u8]) -> Result<Request, WireError> {
        parse::parse_chat(body)
    }

    fn whole(&self, reply: &Reply) -> Value {
        render::whole(reply)
    }

    fn frame(&self, reply: &Reply, at: &At, stream: &mut FrameState, out: &mut Vec<u8>) {
        render::frame(reply, at, stream.include_usage, out)
    }

    fn status(&self, kind: ErrorKind) -> u16 {
        kind.http_status()
    }

    fn error_body(&self, err: &WireError, _request_id: &str) -> Value {
        openai::error_body(err)
    }

    fn rate_limit_headers(
        &self,
        r: &RateReading,
        _now_unix_ms: u64,
    ) -> Vec<(&'static str, String)> {
        openai::rate_limit_headers(r)
    }

    fn reasons_unasked(&self) -> bool {
        true
    }

    fn thought(
        &self,
        req: &Request,
        reply_id: &str,
        tokens: u32,
        mint: &mut dyn ThoughtMint,
    ) -> Part {
        openai::thought(req, reply_id, tokens, mint)
    }
}
