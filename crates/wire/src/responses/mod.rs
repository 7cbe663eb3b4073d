//! OpenAI Responses (`POST /v1/responses`): its dialect.
//!
//! OpenAI's envelope and headers (`openai.rs`); typed events with sequence numbers
//! (`render.rs`); reasoning items checked when sent back and responses stored under
//! `resp_<reply>` for `previous_response_id` (`items.rs`).

pub mod items;
mod parse;
mod render;

use crate::dialect::{Dialect, FrameState, Seals, ThoughtFault, ThoughtMint};
use crate::error::{ErrorKind, WireError};
use crate::openai;
use crate::ratelimit::RateReading;
use crate::reply::{At, Part, Reply};
use crate::request::{Message, Request};
use serde_json::Value;

/// The dialect of the Responses API.
pub struct Responses;

impl Dialect for Responses {
    fn name(&self) -> &'static str {
        "responses"
    }

    fn parse(&self, body: &[u8]) -> Result<Request, WireError> {
        parse::parse_responses(body)
    }

    fn whole(&self, reply: &Reply) -> Value {
        render::whole(reply)
    }

    fn frame(&self, reply: &Reply, at: &At, stream: &mut FrameState, out: &mut Vec<u8>) {
        render::frame(reply, at, &mut stream.seq, out)
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

    /// Always: items sent back are checked whether or not this request reasons.
    fn check_thoughts(&self, req: &Request, seals: &dyn Seals) -> Option<ThoughtFault> {
        items::check_reasoning_items(req, seals)
    }

    /// With `store` (true unless the client says false): the whole conversation, its
    /// input then the reply's output items, under the response's id.
    fn keeps(&self, req: &Request, reply: &Reply) -> Option<(String, Vec<Message>)> {
        if !req.store {
            return None;
        }
        let mut conversation = req.messages.clone();
        conversation.extend(items::output_items(reply));
        Some((format!("resp_{}", reply.id), conversation))
    }

    fn continuation_missing(&self, id: &str) -> WireError {
        WireError::verbatim(
            Some("previous_response_id"),
            format!("Previous response with id '{id}' not found."),
            Some("previous_response_not_found"),
        )
    }
}
