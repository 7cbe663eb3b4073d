//! Wire formats of the LLM APIs the mock speaks: OpenAI Chat Completions, Responses and
//! Embeddings, Anthropic Messages and Gemini generateContent.
//!
//! This crate owns the byte-level truth of each API: how a request is read into one
//! normalized [`Request`], how a [`Reply`] the mock decided on is rendered as a plain
//! JSON body or as a sequence of SSE frames, and how errors look in each API's own
//! envelope. It owns no timing, no randomness and no policy: what to answer is the
//! mock's business; how to say it is this crate's.

mod embeddings;
mod error;
mod parse_anthropic;
mod parse_common;
mod parse_gemini;
mod parse_openai;
mod render_anthropic;
mod render_chat;
mod render_gemini;
mod render_responses;
pub mod sse;
mod stream;
mod tokens;

pub use embeddings::{parse_embeddings, render_embeddings, EmbeddingRequest};
pub use error::{error_body, Code, ErrorKind, WireError};
pub use stream::{render_json, StreamRenderer};
pub use tokens::count_tokens;

/// Which API a request came in on; it decides every byte of the answer.
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
    pub fn name(self) -> &'static str {
        match self {
            Api::ChatCompletions => "chat_completions",
            Api::Responses => "responses",
            Api::Messages => "messages",
            Api::Gemini => "generate_content",
        }
    }

    /// Reads a request body of this API into the normalized form, or says which
    /// field is wrong.
    pub fn parse(self, body: &[u8]) -> Result<Request, WireError> {
        match self {
            Api::ChatCompletions => parse_openai::parse_chat(body),
            Api::Responses => parse_openai::parse_responses(body),
            Api::Messages => parse_anthropic::parse_messages(body),
            Api::Gemini => parse_gemini::parse_generate(body),
        }
    }
}

/// Who said a message, across the three APIs' vocabularies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
    /// A tool result (OpenAI `role: tool`, Responses `function_call_output`,
    /// Anthropic `tool_result` block inside a user message).
    Tool,
}

/// A tool call the assistant made earlier in the conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as the JSON text the client sent back.
    pub arguments: String,
}

/// Which kind of reasoning a client sent back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThoughtKind {
    /// Anthropic `thinking` (text and `signature`).
    Thinking,
    /// Anthropic `redacted_thinking` (opaque `data`).
    Redacted,
    /// OpenAI Responses `reasoning` item (`encrypted_content` when the client kept it).
    Reasoning,
    /// Gemini `thoughtSignature` on a part.
    Signature,
}

/// Reasoning the model gave earlier, as the client sent it back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thought {
    pub kind: ThoughtKind,
    /// The thinking text (Anthropic) or the summary text (Responses).
    pub text: String,
    /// The `signature`, the redacted `data` or the `encrypted_content` ("" when absent).
    pub seal: String,
    /// The Responses item id (`rs_…`).
    pub id: Option<String>,
    /// Where it sat in the request, for error messages (`messages.1.content.0`).
    pub path: String,
    /// A text or tool-use block came before it in its message.
    pub late: bool,
}

/// One message of the conversation, normalized. Text blocks are joined with `\n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub role: Role,
    pub text: String,
    /// Tool calls carried by an assistant message.
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the id of the call this result answers.
    pub tool_call_id: Option<String>,
    /// Reasoning carried by an assistant message, in its order.
    pub thoughts: Vec<Thought>,
    /// Where the message sat in the request (`messages.3`, `input.5`).
    pub path: String,
    /// The type of its first content block as the API names it (`tool_use`, `text`,
    /// `thinking` …; "" for a plain string), and for a Responses item its `id`.
    pub lead: &'static str,
    pub item_id: Option<String>,
}

impl Message {
    /// A message with text only.
    pub fn new(role: Role, text: String) -> Self {
        Message {
            role,
            text,
            tool_calls: Vec::new(),
            tool_call_id: None,
            thoughts: Vec::new(),
            path: String::new(),
            lead: "",
            item_id: None,
        }
    }
}

/// A function tool offered by the client.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    pub name: String,
    /// The JSON Schema of the arguments (`parameters` / `input_schema`).
    pub schema: serde_json::Value,
}

/// What the client allows regarding tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolChoice {
    Auto,
    None,
    /// Must call some tool.
    Required,
    /// Must call this tool.
    Named(String),
}

/// A request of any of the three APIs, normalized.
#[derive(Clone, Debug)]
pub struct Request {
    pub api: Api,
    pub model: String,
    pub stream: bool,
    /// OpenAI `stream_options.include_usage`.
    pub include_usage: bool,
    /// System prompt / instructions, if any.
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<Tool>,
    pub tool_choice: ToolChoice,
    /// `max_tokens` / `max_completion_tokens` / `max_output_tokens`.
    pub max_output_tokens: Option<u32>,
    /// Approximate prompt size in tokens (see [`count_tokens`]).
    pub prompt_tokens: u32,
    /// The client asked the model to reason (Anthropic `thinking`, OpenAI
    /// `reasoning_effort` / `reasoning`).
    pub reasoning: Option<ReasoningAsk>,
    /// The client asked for the reasoning itself back: Responses
    /// `include: ["reasoning.encrypted_content"]`, Gemini `includeThoughts`.
    pub reasoning_returned: bool,
    /// Responses `store` (true unless the client says false).
    pub store: bool,
    /// Responses `previous_response_id`: the conversation goes on from a stored one.
    pub previous_response_id: Option<String>,
}

impl Request {
    /// Counts the prompt's tokens again (after messages were added in front).
    pub fn recount(&mut self) {
        self.prompt_tokens = parse_openai::prompt_tokens(self);
    }
}

/// What the client asked of the model's reasoning.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReasoningAsk {
    /// Anthropic `thinking.budget_tokens`.
    pub budget: Option<u32>,
    /// OpenAI `reasoning_effort` / `reasoning.effort`.
    pub effort: Option<String>,
}

/// One piece of the assistant's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Text(String),
    ToolCall(ToolCall),
    /// Anthropic `thinking`: its text streams out, then its signature.
    Thinking {
        text: String,
        signature: String,
    },
    /// Reasoning the client does not read: Anthropic `redacted_thinking` (`seal` is
    /// its `data`) or an OpenAI reasoning item (`seal` is its `encrypted_content`,
    /// when the client asked for it). It takes `tokens` tokens' time.
    Hidden {
        id: String,
        seal: Option<String>,
        tokens: u32,
    },
}

impl Part {
    /// The text that is streamed out in deltas for this part.
    pub fn streamed_text(&self) -> &str {
        match self {
            Part::Text(t) => t,
            Part::ToolCall(c) => &c.arguments,
            Part::Thinking { text, .. } => text,
            Part::Hidden { .. } => "",
        }
    }

    /// Reasoning rather than answer.
    pub fn is_thought(&self) -> bool {
        matches!(self, Part::Thinking { .. } | Part::Hidden { .. })
    }

    /// Output tokens this part costs.
    pub fn tokens(&self) -> u32 {
        match self {
            Part::Hidden { tokens, .. } => *tokens,
            p => count_tokens(p.streamed_text()),
        }
    }
}

/// Why the answer ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
}

/// The answer the mock decided on, independent of the API that carries it.
#[derive(Clone, Debug)]
pub struct Reply {
    /// Id suffix, unique per call; each API adds its own prefix.
    pub id: String,
    pub model: String,
    /// Unix seconds for `created` / `created_at`.
    pub created: u64,
    pub parts: Vec<Part>,
    pub stop: StopReason,
    pub prompt_tokens: u32,
    /// All output tokens, reasoning included.
    pub output_tokens: u32,
    /// Of `output_tokens`, those spent reasoning.
    pub reasoning_tokens: u32,
}

/// How the streamed text of a reply is cut into timed chunks: each chunk is one
/// delta event and carries `tokens` output tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub part: u16,
    pub start: u32,
    pub end: u32,
    pub tokens: u16,
    /// The chunk is reasoning: it goes at the thinking rate.
    pub thinking: bool,
}

/// Where frame `k` sits in the reply.
pub(crate) struct At<'a> {
    pub first: bool,
    pub last: bool,
    pub part_start: bool,
    pub part_end: bool,
    pub chunk: Chunk,
    pub delta: &'a str,
}
