//! Session files read once into typed specs: `session.toml`, how one session talks to the SUT.
//!
//! `session` holds what a file becomes ([`SessionSpec`]), `read` reads a request/reply
//! file, `request` one request of it, `lint` the mistakes a file can make that TOML
//! lets through, `bus` a bus file (`[[role]]` tables), `axes` what a sweep may move.
//! Running the sessions is the runners' business (`driver`, `bus`); nothing here opens
//! a socket.
//!
//! ```toml
//! protocol = "http"            # "http" (one JSON reply per turn), "sse" (a stream per turn),
//!                              # or "ws" (one WebSocket per session, a text message per turn)
//! method = "POST"
//! url = "{{base}}/sessions/{{session}}/turn"
//! turns = 3
//! think_ms = 0                 # pause between a reply and the next turn
//! turn_timeout_ms = 120000
//! expect_status = 200          # default: any 2xx
//! # The body of every turn, or `bodies = [...]`, one per turn (the last one repeats).
//! # Top-level keys go before the first [table]: TOML puts every key after `[headers]`
//! # into the headers.
//! body = '{"message": "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] hello"}'
//! [headers]
//! content-type = "application/json"
//! [extract]                    # values taken from each JSON reply by JSON pointer,
//! conversation = "/id"         # usable as {{conversation}} in later turns
//! [[check]]                    # a reply that fails a check fails the session
//! pointer = "/reply"
//! contains = "fact"            # or equals = <any JSON>, or present = true
//! ```
//!
//! Placeholders: `{{session}}` (a tag of the step, then s0, s1 …: `3f9a1c-s0`; a
//! store that outlives a step never sees a name twice), `{{nonce}}` (psn + 16 hex, unique per session),
//! `{{uuid}}` (a v4 UUID per session) and `{{request_uuid}}` (a new one per request), both
//! fixed by the seed; `{{turn}}` (1-based), `{{base}}` (the SUT's base URL), `{{ws_base}}`
//! (the same as ws://), `{{port}}`, and extracted names. A name used before any reply has
//! set it is an error naming the line, not an empty string (give the extract a default
//! when empty is meant).
//!
//! Extracts: `name = "/pointer"` from the JSON reply (`/messages/-1/content`: a negative
//! index counts from the end), `name = { header = "location" }` from a reply header, and
//! `default = "…"` in either table form makes one optional.
//!
//! **Agent servers** that open a thread and then run per turn (LangGraph, Letta,
//! Assistants-style APIs) are written as a sequence of named requests instead of one
//! `url`: `[[setup]]` once per session before turn 1, one or more `[[turn]]` per turn
//! (the turn's latency runs from its first request to its last reply), `[[teardown]]`
//! after the last turn (not in turn latency; failures are counted, the session stands).
//! Each request takes `name`, `method`, `url`, `[*.headers]` (added to the top-level
//! ones), `body`, `[*.extract]`, `[[*.check]]`, `expect_status`, `protocol = "sse"`,
//! and `until = { pointer = "/status", equals = "success", interval_ms = 100, timeout_ms
//! = 60000 }` to poll an asynchronous API. A JSON body with no content-type gets
//! `application/json`. Per-request latency (count, p50, p99, errors) goes into RESULT.
//!
//! ```toml
//! turns = 3
//! [[setup]]
//! name = "create"
//! url = "{{base}}/threads"
//! body = "{}"
//! extract = { thread = "/thread_id" }
//! [[turn]]
//! name = "run"
//! url = "{{base}}/threads/{{thread}}/runs/wait"
//! body = '{"input": {"messages": [{"role": "user", "content": "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] hi"}]}}'
//! [[turn.check]]
//! pointer = "/messages/-1/type"
//! equals = "ai"
//! [[teardown]]
//! name = "delete"
//! method = "DELETE"
//! url = "{{base}}/threads/{{thread}}"
//! ```
//!
//! Streams (`protocol = "sse"`): time to first token is the first event carrying the
//! model's text (OpenAI, Anthropic, Responses, or a LangGraph `messages` event with an AI
//! message — not a tool's result; else the first event), or `ttft_event = "name"` /
//! `{ event = "…", pointer = "/…", equals = …, text = true | "/pointer" }` (all given
//! must hold; `text` asks for non-empty text);
//! `done_event` ends the turn at a matching event; `[[check]] text_contains = "…"` reads
//! the text deltas joined (`text_pointer` says where they are in another API).
//!
//! With `protocol = "openai-chat"` Plimsoll is a chat client of an OpenAI-compatible
//! endpoint (a proxy, a gateway, an agent server that speaks Chat Completions): `body` is
//! the user's text of a turn (default: the marker and "Please handle turn N."); each turn
//! sends the whole conversation so far — `{"model", "messages", "stream"}`, with `model =
//! "gpt-4o-mini"` and `stream = false` by default — and appends the assistant's reply, so
//! the mock's history check holds. Time to first token is the first content delta; checks
//! and extracts read the assistant message (`/content`). `protocol = "anthropic-messages"`
//! is the same for the Anthropic Messages API (`max_tokens` 1024; default model
//! `claude-3-5-haiku-latest`; give `anthropic-version` under [headers] — the API needs it;
//! checks read `/content/0/text`).
//!
//! With `protocol = "tcp"` (`url = "tcp://127.0.0.1:{{port}}"`) or `"unix"` (`url =
//! "unix:///path/to.sock"`) the session holds one raw socket and each turn writes the
//! body as one frame and reads one frame back: `framing = "line"` (the default; `\r\n`
//! is added), `"u32"` (a big-endian length prefix) or `"nul"`; `encoding = "msgpack"`
//! sends a JSON body as MessagePack and reads the reply back as JSON for checks and
//! extracts. A session file with `[[role]]` tables is a bus instead (see `bus`).
//! `{{pad N}}` anywhere in a body is N bytes of filler (`ramp --sweep pad=…` moves N).
//!
//! **Form fields** instead of a JSON body: `form = { message = "[[plimsoll …]] hi",
//! session_id = "{{uuid}}", stream = false }` is sent URL-encoded with content-type
//! `application/x-www-form-urlencoded` (placeholders filled first, so the marker arrives
//! whole); `multipart = { message = "…", image = { path = "cat.png" }, blob = { bytes =
//! 65536, filename = "x.bin", content_type = "…" } }` as `multipart/form-data`, files read
//! once at load (paths count from the session file's directory), generated bytes the same
//! every run. An array repeats a name. Either table is a request's `body`: give one.
//!
//! With `protocol = "ws"` the URL is opened once per session and each turn sends the body
//! as one text message. The turn ends with the first message back, or, with
//! `ws_done_pointer = "/type"` and `ws_done_equals = "done"`, with the first JSON message
//! whose pointer has that value (without `ws_done_equals`: whose pointer is present).
//! The `[[plimsoll …]]` marker lets the mock's integrity oracle check the conversation.

mod axes;
mod bus;
mod form;
mod lint;
mod raw;
mod read;
mod reply;
mod request;
mod schema;
mod session;
mod shared;
pub mod voice;

pub use axes::{unknown_axis, AXES};
pub use bus::{is_bus, BusSpec, Count, Framing, Kind, Role, Transport};
pub use form::{Fields, Part, PartValue, BOUNDARY};
pub use reply::{Check, Extract, Source};
pub use request::{Request, Until};
pub use schema::{bus as bus_schema, session as session_schema};
pub use session::{Chat, Protocol, SessionSpec, Wire, CHAT_TEXT, DEFAULT_BODY};
pub use shared::{is_an_id, names_a_conversation, SharedValue};

/// A session.toml that cannot be used, with where and why.
pub type SessionError = spans::FileError;

#[cfg(test)]
mod form_tests;
#[cfg(test)]
mod tests;
