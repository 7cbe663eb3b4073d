//! What one API says and how: the trait every API implements, and what passes through it.
//!
//! A [`Dialect`] holds everything the mock must not decide by matching on the API: how a
//! request reads, how a reply and an error are written, which headers carry the request
//! id and the rate limits, how tool calls are named, how reasoning is shown and which
//! rules the API enforces on reasoning sent back, what it stores between requests. The
//! mock reaches it through [`Api::dialect`](crate::Api::dialect); a new API is one parser,
//! one renderer and one `impl Dialect`. Methods with a default state the convention the
//! mock follows unless an API has its own (OpenAI's, for the most part).
//!
//! A dialect owns no clock, randomness or keys: the times come in as numbers, the draws
//! and seals of reasoning through [`ThoughtMint`] and [`Seals`], which the mock implements.

use crate::cache::CacheRules;
use crate::error::{ErrorKind, WireError};
use crate::ratelimit::{QuotaRefusal, RateReading};
use crate::reply::{At, Part, Reply};
use crate::request::{Message, Request};
use serde_json::{json, Value};

/// Everything one API knows about its own bytes.
pub trait Dialect: Sync {
    /// The API's name in reports (`chat_completions`, `messages` …).
    fn name(&self) -> &'static str;

    /// Reads a request body into the normalized form, or says which field is wrong.
    fn parse(&self, body: &[u8]) -> Result<Request, WireError>;

    /// What the URL says of a call, for an API that names the model in the path (Gemini's
    /// `models/{model}:{action}`; `tail` is the path after `models/`). `None`: the URL
    /// says nothing and the body names the model.
    fn url_call(&self, _tail: &str, _query: Option<&str>) -> Result<Option<UrlCall>, UrlRefused> {
        Ok(None)
    }

    /// A header every client of this API sends, with an example value for the error
    /// when one does not (and by which its clients are told from others).
    fn required_header(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// The whole (non-streaming) body of a reply.
    fn whole(&self, reply: &Reply) -> Value;

    /// Appends the events of stream frame `at` to `out` (possibly none).
    fn frame(&self, reply: &Reply, at: &At, stream: &mut FrameState, out: &mut Vec<u8>);

    /// The HTTP status of an error of this kind.
    fn status(&self, kind: ErrorKind) -> u16;

    /// An error in the API's own envelope.
    fn error_body(&self, err: &WireError, request_id: &str) -> Value;

    /// The header that carries the request id.
    fn request_id_header(&self) -> &'static str {
        "x-request-id"
    }

    /// The rate-limit headers (name, value) of one bucket's reading; none for an API
    /// without them or without a header for that bucket.
    fn rate_limit_headers(&self, r: &RateReading, now_unix_ms: u64) -> Vec<(&'static str, String)>;

    /// The message of a quota's 429.
    fn quota_refused(&self, q: &QuotaRefusal) -> String {
        if q.too_large {
            return too_large(q);
        }
        format!(
            "Rate limit reached for {} on {}: Limit {}. Please try again in {:.3}s (plimsoll mock quota).",
            q.model,
            q.bucket.rate_words(),
            q.limit,
            q.retry_after_ms as f64 / 1000.0
        )
    }

    /// A quota of a typical size (requests and tokens per minute): what an injected
    /// 429's rate-limit headers report as exhausted.
    fn typical_quota(&self) -> (f64, f64) {
        (10_000.0, 2_000_000.0)
    }

    /// What the ids of the tool calls the mock makes start with.
    fn tool_call_prefix(&self) -> &'static str {
        "call_"
    }

    /// A model set to reason always does so on this API even unasked (OpenAI's
    /// o-series), rather than only when the request asks (Anthropic, Gemini).
    fn reasons_unasked(&self) -> bool {
        false
    }

    /// The model's reasoning of `tokens` tokens as this API shows it, for reply
    /// `reply_id`; `mint` draws its text and makes its seals.
    fn thought(
        &self,
        req: &Request,
        reply_id: &str,
        tokens: u32,
        mint: &mut dyn ThoughtMint,
    ) -> Part;

    /// The API's own refusal of reasoning sent back dropped, moved or altered; `None`
    /// when all is well (or the API checks none).
    fn check_thoughts(&self, _req: &Request, _seals: &dyn Seals) -> Option<ThoughtFault> {
        None
    }

    /// The conversation after `reply` as this API keeps it for a later request to go on
    /// from, under the id that request names; `None` when it keeps nothing.
    fn keeps(&self, _req: &Request, _reply: &Reply) -> Option<(String, Vec<Message>)> {
        None
    }

    /// The error for a kept conversation a request goes on from that is not there.
    fn continuation_missing(&self, id: &str) -> WireError {
        WireError::invalid("previous_response_id", format!("{id:?} is not stored"))
    }

    /// How this API caches a prompt for `model` (OpenAI's automatic prefix cache unless
    /// an API has its own).
    fn cache_rules(&self, _model: &str) -> CacheRules {
        CacheRules::OPENAI
    }

    /// One entry of `GET /v1/models`.
    fn model_entry(&self, id: &str) -> Value {
        json!({"id": id, "object": "model", "created": 1_735_689_600u64, "owned_by": "plimsoll"})
    }

    /// The body of `GET /v1/models`.
    fn model_list(&self, names: &[String]) -> Value {
        let data: Vec<Value> = names.iter().map(|n| self.model_entry(n)).collect();
        json!({"object": "list", "data": data})
    }
}

/// The 429 of a request larger than a whole minute's quota, in OpenAI's words (which
/// the mock uses for every API).
pub fn too_large(q: &QuotaRefusal) -> String {
    format!(
        "Request too large for {} on {}: Limit {}, Requested {}. The input or output tokens must be reduced (plimsoll mock quota).",
        q.model,
        q.bucket.rate_words(),
        q.limit,
        q.requested
    )
}

/// What a URL says of a call: the model, and whether to stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlCall {
    pub model: String,
    pub stream: bool,
}

/// A URL the API does not serve, and the request id its error goes out with (the body
/// is not read, so there is no hash to name it by).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlRefused {
    pub error: WireError,
    pub request_id: &'static str,
}

/// What a stream's renderer carries from one frame to the next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameState {
    /// OpenAI `stream_options.include_usage`.
    pub include_usage: bool,
    /// Responses API `sequence_number` of the next event.
    pub seq: u32,
}

/// What reasoning needs from the mock: its draws and its seals. A dialect decides which
/// to ask for and in which order (the order of the draws is part of the replay).
pub trait ThoughtMint {
    /// Draws whether this reply's reasoning comes redacted.
    fn redacted(&mut self) -> bool;
    /// Draws reasoning text of `tokens` tokens.
    fn text(&mut self, tokens: u32) -> String;
    /// The signature of thinking `text`, for the session asked.
    fn sign(&self, text: &str) -> String;
    /// An opaque seal over `nonce`, for the session asked.
    fn seal(&self, nonce: &str) -> String;
}

/// What a dialect asks of the mock when it checks reasoning sent back.
pub trait Seals {
    /// `signature` is the mock's signature of thinking `text` for this session.
    fn signs(&self, text: &str, signature: &str) -> bool;
    /// `sealed` is a seal the mock made for this session (over `nonce`, when given).
    fn seals(&self, sealed: &str, nonce: Option<&str>) -> bool;
    /// The response with this id is stored (its items may be sent back by id).
    fn stored(&self, response_id: &str) -> bool;
}

/// Reasoning sent back wrong: the API's own error, and what the oracle records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThoughtFault {
    /// The index of the message at fault.
    pub at: usize,
    pub error: WireError,
    pub detail: String,
    /// What the message said there (uncut).
    pub excerpt: String,
}

impl ThoughtFault {
    pub fn new(at: usize, error: WireError, detail: String, excerpt: &str) -> Self {
        ThoughtFault {
            at,
            error,
            detail,
            excerpt: excerpt.to_string(),
        }
    }
}
