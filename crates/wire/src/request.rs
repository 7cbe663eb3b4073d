//! A request of any API, normalized: who said what, which tools are offered, what the
//! client asks of the model's output and reasoning.
//!
//! Each API's parser builds a [`Request`] and hands it to [`finish`], which does what
//! every API shares (system messages folded into `system`, a named tool choice checked,
//! prompt tokens counted). How an API's JSON reads is its parser's business, not this
//! module's.

use crate::api::Api;
use crate::cache::CacheAsk;
use crate::error::WireError;
use crate::tokens::count_tokens;

/// Who said a message, across the APIs' vocabularies.
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
    /// The schema as compact JSON, written once: what its tokens are counted and its
    /// cache prefix hashed over.
    pub schema_text: String,
}

impl Tool {
    pub fn new(name: String, schema: serde_json::Value) -> Tool {
        let schema_text = schema.to_string();
        Tool {
            name,
            schema,
            schema_text,
        }
    }
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

/// A request of any of the APIs, normalized.
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
    /// What the client asks of the provider's prompt cache (breakpoints, a cache key).
    pub cache: CacheAsk,
}

impl Request {
    /// Counts the prompt's tokens again (after messages were added in front).
    pub fn recount(&mut self) {
        self.prompt_tokens = prompt_tokens(self);
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

/// Merges system-role items into `system`, checks a named tool choice and counts
/// prompt tokens.
pub(crate) fn finish(mut r: Request) -> Result<Request, WireError> {
    if let ToolChoice::Named(name) = &r.tool_choice {
        if !r.tools.iter().any(|t| &t.name == name) {
            return Err(WireError::invalid(
                "tool_choice",
                format!("names tool {name:?}, which is not in tools"),
            ));
        }
    }
    let (sys, rest): (Vec<_>, Vec<_>) = r.messages.drain(..).partition(|m| m.role == Role::System);
    for m in sys {
        if !r.system.is_empty() {
            r.system.push('\n');
        }
        r.system.push_str(&m.text);
    }
    r.messages = rest;
    r.prompt_tokens = prompt_tokens(&r);
    Ok(r)
}

fn prompt_tokens(r: &Request) -> u32 {
    let mut n = count_tokens(&r.system);
    for m in &r.messages {
        // Every message costs a few framing tokens in real chat templates.
        n += 4 + count_tokens(&m.text);
        for t in &m.thoughts {
            n += count_tokens(&t.text);
        }
        for c in &m.tool_calls {
            n += count_tokens(&c.name) + count_tokens(&c.arguments);
        }
    }
    for t in &r.tools {
        n += count_tokens(&t.name) + count_tokens(&t.schema_text);
    }
    n.max(1)
}
