// The provider's prompt cache through the official Node SDKs: openai parses
// `usage.prompt_tokens_details.cached_tokens` (Chat Completions, plain and the streamed
// usage chunk) and `usage.input_tokens_details.cached_tokens` (Responses, plain and
// `response.completed`); @anthropic-ai/sdk parses `cache_creation_input_tokens`,
// `cache_read_input_tokens` and `cache_creation` in the message and in the stream's
// `message_start` and `message_delta`; five breakpoints get Anthropic's own 400.
// Each test's prompt starts with a fresh word, so the mock's shared cache starts cold.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startMock } from "./mock.js";

const SCENARIO = `
[defaults]
ttft_ms = 5
tok_ms = 1
output_tokens = 8
reasoning = { mode = "off" }
`;

let mock;
before(async () => {
  mock = await startMock(SCENARIO);
});
after(() => mock.stop());

const oai = () => new OpenAI({ baseURL: `${mock.base}/v1`, apiKey: "k", maxRetries: 0 });
const ant = () => new Anthropic({ baseURL: mock.base, apiKey: "k", maxRetries: 0 });
const long = (words = 1500) => `${randomUUID().replaceAll("-", "")} ${Array(words).fill("rule").join(" ")}`;
const EPHEMERAL = { type: "ephemeral" };

test("openai chat: cached_tokens plain and in the streamed usage chunk", async () => {
  const c = oai();
  const messages = [{ role: "system", content: long() }, { role: "user", content: "hi" }];
  const cold = await c.chat.completions.create({ model: "gpt-4o", messages });
  assert.equal(cold.usage.prompt_tokens_details.cached_tokens, 0);
  const warm = await c.chat.completions.create({ model: "gpt-4o", messages });
  const cached = warm.usage.prompt_tokens_details.cached_tokens;
  assert.ok(cached >= 1024 && (cached - 1024) % 128 === 0 && cached <= warm.usage.prompt_tokens, `${cached}`);
  const stream = await c.chat.completions.create({ model: "gpt-4o", messages, stream: true,
    stream_options: { include_usage: true } });
  let usage;
  for await (const ch of stream) usage = ch.usage ?? usage;
  assert.equal(usage.prompt_tokens_details.cached_tokens, cached);
});

test("openai responses: cached_tokens plain and in response.completed", async () => {
  const c = oai();
  const instructions = long();
  await c.responses.create({ model: "gpt-4o", instructions, input: "hi" });
  const warm = await c.responses.create({ model: "gpt-4o", instructions, input: "hi" });
  const cached = warm.usage.input_tokens_details.cached_tokens;
  assert.ok(cached >= 1024 && cached <= warm.usage.input_tokens, `${cached}`);
  const s = c.responses.stream({ model: "gpt-4o", instructions, input: "hi" });
  let completed;
  for await (const e of s) if (e.type === "response.completed") completed = e.response;
  assert.equal(completed.usage.input_tokens_details.cached_tokens, cached);
  assert.equal((await s.finalResponse()).usage.input_tokens_details.cached_tokens, cached);
});

test("anthropic: cache writes and reads, plain and in message_start / message_delta", async () => {
  const c = ant();
  const ask = { model: "claude-sonnet-4-6", max_tokens: 50, messages: [{ role: "user", content: "hi" }],
    system: [{ type: "text", text: long(2000), cache_control: EPHEMERAL }] };
  const first = (await c.messages.create(ask)).usage;
  assert.equal(first.cache_read_input_tokens, 0);
  assert.ok(first.cache_creation_input_tokens > 2000);
  assert.equal(first.cache_creation.ephemeral_5m_input_tokens, first.cache_creation_input_tokens);
  const second = (await c.messages.create(ask)).usage;
  assert.equal(second.cache_read_input_tokens, first.cache_creation_input_tokens);
  assert.equal(second.cache_creation_input_tokens, 0);
  const stream = c.messages.stream(ask);
  let start, delta;
  for await (const ev of stream) {
    if (ev.type === "message_start") start = ev.message.usage;
    if (ev.type === "message_delta") delta = ev.usage;
  }
  assert.equal(start.cache_read_input_tokens, second.cache_read_input_tokens);
  assert.equal(start.cache_creation.ephemeral_1h_input_tokens, 0);
  assert.equal(delta.cache_read_input_tokens, second.cache_read_input_tokens);
  assert.equal((await stream.finalMessage()).usage.cache_read_input_tokens, second.cache_read_input_tokens);
});

test("anthropic: five breakpoints are the API's own 400", async () => {
  const block = { type: "text", text: "x", cache_control: EPHEMERAL };
  await assert.rejects(
    ant().messages.create({ model: "claude-sonnet-4-6", max_tokens: 20, cache_control: EPHEMERAL,
      system: [block, block, block, block], messages: [{ role: "user", content: "hi" }] }),
    (e) => {
      assert.ok(e instanceof Anthropic.BadRequestError);
      assert.equal(e.status, 400);
      assert.equal(e.error.error.message, "A maximum of 4 blocks with cache_control may be provided. Found 5.");
      return true;
    },
  );
});
