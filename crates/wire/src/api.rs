//! Which API a request came in on: the key to its [`Dialect`](crate::Dialect).
//!
//! Only the name of each API lives here; what an API says and how is its dialect's
//! business (see `dialects.rs` for the one table from one to the other).

/// Which API a request came in on; its dialect decides every byte of the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Api {
    /// `POST /v1/chat/completions`
    ChatCompletions,
    /// `POST /v1/responses`
    Responses,
    /// `POST /v1/messages`
    Messages,
    /// Gemini `POST /v1beta/models/{model}:generateContent` (and
    /// `:streamGenerateContent?alt=sse`).
    Gemini,
}

impl Api {
    /// Every API, in the order a client is recognised by its headers.
    pub const ALL: [Api; 4] = [
        Api::ChatCompletions,
        Api::Responses,
        Api::Messages,
        Api::Gemini,
    ];
}
