// The official Node SDKs against the mock: openai (Chat Completions, Responses,
// Embeddings), @anthropic-ai/sdk (Messages), and the Vercel AI SDK's streamText with a
// tool through @ai-sdk/openai. Plain, streamed, tool round trips, errors as each SDK's
// own classes, and the SDKs' retries timed by retry-after.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { createOpenAI } from "@ai-sdk/openai";
import { streamText, tool, stepCountIs } from "ai";
import { z } from "zod";
import { marked, startMock } from "./mock.js";

// Tokens by the mock's rule: each word is one, and so is each sentence's full stop (its
// replies are sentences, as a model writes them).
const tokens = (text) => (text.match(/[^\s.]+|\./g) || []).length;

const SCENARIO = `
unknown_model = "error"
[defaults]
ttft_ms = 10
tok_ms = 1
output_tokens = 12
[models."fast"]
[models."claude-fast"]
[models."embed"]
embedding_dim = 16
[models."limited"]
[[models."limited".fail]]
attempts = 2
with = "rate_limit"
[models."limited".failures]
retry_after_ms = 300
[models."busy"]
[[models."busy".fail]]
attempts = 2
with = "overloaded"
[models."busy".failures]
retry_after_ms = 200
[models."think"]
reasoning = { tokens = 20 }
`;

let mock;
before(async () => {
  mock = await startMock(SCENARIO);
});
after(() => mock.stop());

const oai = (maxRetries = 0) => new OpenAI({ baseURL: `${mock.base}/v1`, apiKey: "k", maxRetries });
const ant = (maxRetries = 0) => new Anthropic({ baseURL: mock.base, apiKey: "k", maxRetries });
const TOOLS = [{ type: "function", function: { name: "lookup", description: "look a key up",
  parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] } } }];

test("openai chat: plain, streamed with usage, and a tool round trip", async () => {
  const c = oai();
  const r = await c.chat.completions.create({ model: "fast", messages: [{ role: "user", content: marked("n-chat") }] });
  assert.equal(tokens(r.choices[0].message.content), 12);
  assert.equal(r.usage.completion_tokens, 12);
  const stream = await c.chat.completions.create({ model: "fast", stream: true, stream_options: { include_usage: true },
    messages: [{ role: "user", content: marked("n-stream") }] });
  let text = "", usage;
  for await (const ch of stream) {
    text += ch.choices[0]?.delta?.content ?? "";
    usage = ch.usage ?? usage;
  }
  assert.equal(tokens(text), 12);
  assert.equal(usage.completion_tokens, 12);
  const messages = [{ role: "user", content: marked("n-tools") }];
  const first = await c.chat.completions.create({ model: "fast", messages, tools: TOOLS });
  const call = first.choices[0].message.tool_calls[0];
  assert.equal(first.choices[0].finish_reason, "tool_calls");
  assert.equal(typeof JSON.parse(call.function.arguments).key, "string");
  messages.push(first.choices[0].message, { role: "tool", tool_call_id: call.id, content: "42" });
  const second = await c.chat.completions.create({ model: "fast", messages, tools: TOOLS });
  assert.equal(second.choices[0].finish_reason, "stop");
  const led = await mock.ledger();
  assert.equal(led.sessions["n-tools"].integrity_violations, 0);
});

test("openai responses (plain and streamed) and embeddings", async () => {
  const c = oai();
  const r = await c.responses.create({ model: "fast", input: marked("n-resp") });
  assert.equal(tokens(r.output_text), 12);
  const s = c.responses.stream({ model: "fast", input: marked("n-resp-stream") });
  let deltas = 0;
  for await (const e of s) if (e.type === "response.output_text.delta") deltas++;
  const done = await s.finalResponse();
  assert.equal(deltas, 12);
  assert.equal(done.usage.output_tokens, 12);
  const e = await c.embeddings.create({ model: "embed", input: ["a", "b", "a"] });
  assert.equal(e.data.length, 3);
  assert.equal(e.data[0].embedding.length, 16);
  assert.deepEqual(e.data[0].embedding, e.data[2].embedding);
});

test("openai reasoning tokens", async () => {
  const r = await oai().chat.completions.create({ model: "think", reasoning_effort: "medium",
    messages: [{ role: "user", content: marked("n-think") }] });
  assert.equal(r.usage.completion_tokens_details.reasoning_tokens, 20);
});

test("openai errors are the SDK's classes, and its retries wait for retry-after", async () => {
  await assert.rejects(oai().chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }] }),
    OpenAI.NotFoundError);
  await assert.rejects(oai().chat.completions.create({ model: "limited", messages: [{ role: "user", content: marked("n-429") }] }),
    OpenAI.RateLimitError);
  const t0 = performance.now();
  const r = await oai(2).chat.completions.create({ model: "limited", messages: [{ role: "user", content: marked("n-retry") }] });
  const waited = performance.now() - t0;
  assert.ok(r.choices[0].message.content);
  assert.ok(waited >= 550, `retry-after-ms 300 twice, waited ${waited} ms`);
  const s = (await mock.ledger()).sessions["n-retry"];
  assert.equal(s.llm_calls, 3);
  assert.equal(s.attempts_per_call, 3);
});

test("anthropic: plain, streamed, a tool round trip with thinking, errors and retries", async () => {
  const c = ant();
  const r = await c.messages.create({ model: "claude-fast", max_tokens: 100, messages: [{ role: "user", content: marked("a-plain") }] });
  assert.equal(r.content[0].type, "text");
  assert.equal(r.usage.output_tokens, 12);
  const stream = c.messages.stream({ model: "claude-fast", max_tokens: 100, messages: [{ role: "user", content: marked("a-stream") }] });
  let text = "";
  stream.on("text", (t) => { text += t; });
  const final = await stream.finalMessage();
  assert.equal(text, final.content[0].text);
  const tools = [{ name: "lookup", description: "look a key up",
    input_schema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] } }];
  const thinking = { type: "enabled", budget_tokens: 1024 };
  const messages = [{ role: "user", content: marked("a-tools") }];
  const first = await c.messages.stream({ model: "think", max_tokens: 2048, thinking, tools, messages }).finalMessage();
  assert.deepEqual(first.content.map((b) => b.type), ["thinking", "tool_use"]);
  assert.ok(first.content[0].signature.length > 60);
  const use = first.content[1];
  messages.push({ role: "assistant", content: first.content },
    { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "42" }] });
  const second = await c.messages.create({ model: "think", max_tokens: 2048, thinking, tools, messages });
  assert.equal(second.stop_reason, "end_turn");
  assert.equal((await mock.ledger()).sessions["a-tools"].integrity_violations, 0);
  await assert.rejects(c.messages.create({ model: "nope", max_tokens: 10, messages: [{ role: "user", content: "x" }] }),
    Anthropic.NotFoundError);
  await assert.rejects(c.messages.create({ model: "busy", max_tokens: 10, messages: [{ role: "user", content: marked("a-529") }] }),
    (e) => e instanceof Anthropic.APIError && e.status === 529);
  const t0 = performance.now();
  const ok = await ant(2).messages.create({ model: "busy", max_tokens: 10, messages: [{ role: "user", content: marked("a-retry") }] });
  assert.equal(ok.content[0].type, "text");
  assert.ok(performance.now() - t0 >= 350, "retry-after 200 ms twice");
  assert.equal((await mock.ledger()).sessions["a-retry"].attempts_per_call, 3);
});

test("Vercel AI SDK: streamText with a tool through @ai-sdk/openai, chat and responses", async () => {
  const provider = createOpenAI({ baseURL: `${mock.base}/v1`, apiKey: "k" });
  for (const model of [provider.chat("fast"), provider.responses("fast")]) {
    const looked = [];
    const result = streamText({
      model,
      prompt: marked(`v-${model.provider}`),
      tools: {
        lookup: tool({
          description: "look a key up",
          inputSchema: z.object({ key: z.string() }),
          execute: async ({ key }) => { looked.push(key); return "42"; },
        }),
      },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    let text = "";
    for await (const t of result.textStream) text += t;
    const steps = await result.steps;
    assert.equal(looked.length, 1, `${model.provider}: the tool ran once`);
    assert.equal(steps.length, 2);
    assert.equal(tokens(text), 12);
    assert.equal((await result.totalUsage).outputTokens > 12, true);
  }
});
