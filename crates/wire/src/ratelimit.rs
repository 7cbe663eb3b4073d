//! Quota buckets as the providers' rate-limit headers and 429 messages speak of them,
//! and one bucket's reading after a request.
//!
//! Which buckets a provider keeps and how full they are is the mock's business; which
//! header names and words each API uses for them is the dialects'.

/// Which bucket of a quota: what it counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bucket {
    Requests,
    Tokens,
    InputTokens,
    OutputTokens,
}

impl Bucket {
    pub const ALL: [Bucket; 4] = [
        Bucket::Requests,
        Bucket::Tokens,
        Bucket::InputTokens,
        Bucket::OutputTokens,
    ];

    /// "requests", "tokens", "input tokens", "output tokens".
    pub fn words(self) -> &'static str {
        match self {
            Bucket::Requests => "requests",
            Bucket::Tokens => "tokens",
            Bucket::InputTokens => "input tokens",
            Bucket::OutputTokens => "output tokens",
        }
    }

    /// The bucket's rate as a provider's 429 message names it.
    pub fn rate_words(self) -> &'static str {
        match self {
            Bucket::Requests => "requests per min (RPM)",
            Bucket::Tokens => "tokens per min (TPM)",
            Bucket::InputTokens => "input tokens per minute",
            Bucket::OutputTokens => "output tokens per minute",
        }
    }
}

/// What a bucket says after a request: its quota per minute, what is left, and how long
/// until it is full again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateReading {
    pub bucket: Bucket,
    pub limit: f64,
    pub remaining: u64,
    pub reset_ms: u64,
}

/// A request over a quota, as its 429 message tells it.
#[derive(Clone, Debug, PartialEq)]
pub struct QuotaRefusal<'a> {
    pub model: &'a str,
    pub bucket: Bucket,
    /// The quota per minute, in words ("10,000").
    pub limit: String,
    pub requested: u64,
    pub retry_after_ms: u64,
    /// The request can never pass: it needs more than the whole minute's quota.
    pub too_large: bool,
}
