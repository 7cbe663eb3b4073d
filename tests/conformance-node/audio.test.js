// The mock's audio APIs through the official Node SDK (openai): speech plain and as SSE,
// transcriptions plain and streamed, and a Realtime session over OpenAIRealtimeWS that
// hears the synthetic voice (speech_started / speech_stopped from the audio), answers with
// audio and a transcript, and calls a function. The Node SDK always opens Realtime over
// wss://, so the test puts a TLS terminator of its own (node:tls, a certificate made by
// openssl for the test) in front of the mock, as a Node user of the mock would.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { after, before, test } from "node:test";
import OpenAI, { toFile } from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { startMock } from "./mock.js";

const SCENARIO = `
[defaults]
ttft_ms = 30
tok_ms = 1
output_tokens = 20
[audio]
chars_per_s = 40
tts_first_byte_ms = 60
tts_speed = 4
stt_ms = 40
stt_rtf = 0.02
`;

const marker = (s, turn = 1) => `[[plimsoll session=${s} nonce=psn0123456789abcdef turn=${turn}]] Please handle turn ${turn}.`;

let mock, proxy, dir;
before(async () => {
  mock = await startMock(SCENARIO);
  dir = mkdtempSync(join(tmpdir(), "plimsoll-tls-"));
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", join(dir, "key.pem"),
    "-out", join(dir, "cert.pem"), "-days", "1", "-subj", "/CN=127.0.0.1"], { stdio: "ignore" });
  const port = Number(new URL(mock.base).port);
  proxy = tls.createServer({ key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) }, (s) => {
    const up = net.connect(port, "127.0.0.1");
    s.pipe(up).pipe(s);
    s.on("error", () => up.destroy());
    up.on("error", () => s.destroy());
  });
  await new Promise((ok) => proxy.listen(0, "127.0.0.1", ok));
});
after(() => {
  proxy?.close();
  mock.stop();
  rmSync(dir, { recursive: true, force: true });
});

const client = () => new OpenAI({ baseURL: `${mock.base}/v1`, apiKey: "k", maxRetries: 0 });

async function speech(c, input, extra = {}) {
  const r = await c.audio.speech.create({ model: "gpt-4o-mini-tts", voice: "alloy", input, response_format: "pcm", ...extra });
  return Buffer.from(await r.arrayBuffer());
}

function wav(pcm, rate = 24000) {
  const h = Buffer.alloc(44);
  h.write("RIFF", 0); h.writeUInt32LE(36 + pcm.length, 4); h.write("WAVEfmt ", 8);
  h.writeUInt32LE(16, 16); h.writeUInt16LE(1, 20); h.writeUInt16LE(1, 22); h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28); h.writeUInt16LE(2, 32); h.writeUInt16LE(16, 34); h.write("data", 36);
  h.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([h, pcm]);
}

test("speech: raw pcm, and SSE events whose audio is the same", async () => {
  const c = client();
  const pcm = await speech(c, "Sure, I can help with that.");
  assert.ok(pcm.length > 24000, `${pcm.length} bytes`);
  const r = await c.audio.speech.create({ model: "gpt-4o-mini-tts", voice: "alloy", input: "Sure, I can help with that.",
    response_format: "pcm", stream_format: "sse" });
  const events = (await r.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
  assert.equal(events.at(-1).type, "speech.audio.done");
  const audio = Buffer.concat(events.filter((e) => e.type === "speech.audio.delta").map((e) => Buffer.from(e.audio, "base64")));
  assert.ok(audio.equals(pcm));
});

test("transcriptions: the words the voice carried, plain and streamed", async () => {
  const c = client();
  const text = marker("node-stt");
  const file = await toFile(wav(await speech(c, text)), "turn.wav", { type: "audio/wav" });
  const t = await c.audio.transcriptions.create({ model: "gpt-4o-transcribe", file });
  assert.equal(t.text, text);
  const file2 = await toFile(wav(await speech(c, text)), "turn.wav", { type: "audio/wav" });
  const stream = await c.audio.transcriptions.create({ model: "gpt-4o-transcribe", file: file2, stream: true });
  let deltas = "", done;
  for await (const e of stream) {
    if (e.type === "transcript.text.delta") deltas += e.delta;
    if (e.type === "transcript.text.done") done = e;
  }
  assert.equal(deltas, text);
  assert.equal(done.text, text);
});

test("realtime over OpenAIRealtimeWS: the voice heard, audio answered, a function called", async () => {
  const c = client();
  const text = marker("node-rt");
  const voice = await speech(c, text);
  const proxied = new OpenAI({ baseURL: `http://127.0.0.1:${proxy.address().port}/v1`, apiKey: "k" });
  const rt = new OpenAIRealtimeWS({ model: "gpt-realtime", options: { rejectUnauthorized: false } }, proxied);
  const seen = [];
  let transcript, heard, audio = [], call;
  const finished = new Promise((ok, fail) => {
    rt.on("error", fail);
    rt.on("event", (ev) => {
      seen.push(ev.type);
      if (ev.type === "conversation.item.input_audio_transcription.completed") heard = ev.transcript;
      if (ev.type === "response.output_audio.delta") audio.push(Buffer.from(ev.delta, "base64"));
      if (ev.type === "response.output_audio_transcript.done") transcript = ev.transcript;
      if (ev.type === "response.function_call_arguments.done") call = ev;
      if (ev.type === "response.done") {
        const last = ev.response.output.at(-1);
        if (last?.type === "function_call") {
          rt.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: last.call_id, output: "42" } });
          rt.send({ type: "response.create" });
        } else ok();
      }
    });
  });
  await new Promise((ok) => rt.socket.once("open", ok));
  rt.send({ type: "session.update", session: { type: "realtime",
    audio: { input: { transcription: { model: "gpt-4o-transcribe" } } },
    tools: [{ type: "function", name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } }] } });
  const silence = Buffer.alloc(48000);
  const all = Buffer.concat([silence, voice, silence]);
  for (let i = 0; i < all.length; i += 4800) {
    rt.send({ type: "input_audio_buffer.append", audio: all.subarray(i, i + 4800).toString("base64") });
  }
  await finished;
  rt.close();
  for (const t of ["session.created", "input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped", "response.output_audio.delta"]) {
    assert.ok(seen.includes(t), `${t} in ${seen.join(",")}`);
  }
  assert.equal(heard, text);
  assert.equal(call.name, "lookup");
  const said = await c.audio.transcriptions.create({ model: "gpt-4o-transcribe",
    file: await toFile(wav(Buffer.concat(audio)), "reply.wav", { type: "audio/wav" }) });
  assert.ok(transcript.length > 0);
  assert.equal(said.text, transcript);
});
