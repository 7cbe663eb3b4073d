"""A small phone agent that takes Twilio Media Streams over a WebSocket, as hand-written
voice bots do: each call's µ-law frames are gathered until the caller falls silent (an
energy VAD), transcribed (the official openai SDK against OPENAI_BASE_URL), answered by the
LLM with the call's history, spoken (speech, 24 kHz PCM) and streamed back as µ-law media
at twice real time. One process, many calls, one asyncio event loop.

The same bot takes raw PCM on /pcm: binary frames of 16-bit little-endian samples at
16 kHz both ways. When the caller speaks over a reply, the reply stops and a `clear` goes
out (Twilio), as a barge-in should.

Planted bugs, by AGENT_BUG:
  cross    each call's reply is spoken on the next call's line (a reply routed by the wrong
           id: every caller hears an answer to another caller's words)
  first    every call's reply is spoken on the first call's line (one output for all
           calls), each reply queued whole once spoken: the first caller hears every
           reply, one after another, the others none
  block    the event loop computes, blocking, for BLOCK_MS (8) on every inbound frame:
           two calls fill most of a core, three more than one
  hangup   the socket is closed as the first reply starts
  garbage  a text message that is not JSON follows the caller's first words
  rate     replies go out at 16 kHz labelled as Twilio's 8 kHz µ-law (twice as slow, an
           octave down)
  mute     the bot hears, transcribes and thinks, but never speaks
  refused  the bot asks for its speech at speed 9, which the speech API refuses (400):
           no reply is ever spoken
  other    the bot answers in other audio than the mock's voice (tones and noise of the
           call's own); with SENT_DIR set, every byte a raw-PCM line sends is also
           appended to SENT_DIR/LINE.pcm, to compare with what the caller kept
GET /health answers on the same port (the responsiveness probe).
"""

import asyncio
import base64
import json
import os
import time
from http import HTTPStatus

import numpy as np
import openai
import soxr
from websockets.asyncio.server import serve
from websockets.http11 import Response
from websockets.datastructures import Headers

from g711 import ulaw, unulaw, wav_bytes  # beside this file

BUG = os.environ.get("AGENT_BUG", "")
BLOCK_MS = float(os.environ.get("BLOCK_MS", "8"))
SENT_DIR = os.environ.get("SENT_DIR", "")
client = openai.AsyncOpenAI(max_retries=0)
histories: dict[str, list] = {}
calls: list[str] = []
lines: dict[str, "Line"] = {}


class Line:
    """One call's end: Twilio's JSON events of µ-law at 8 kHz, or raw PCM at 16 kHz. What
    the bot says is queued and sent 40 ms a message every 20 ms (twice real time, as
    Pipecat sends it) by a sender of the call's own."""

    def __init__(self, ws, twilio: bool):
        self.ws, self.twilio = ws, twilio
        self.rate = 8000 if twilio else 16000
        self.stream_sid = ""
        self.out: asyncio.Queue = asyncio.Queue()
        self.sender = asyncio.create_task(self.send_loop())

    def audio_in(self, raw) -> np.ndarray | str | None:
        if not self.twilio:
            return np.frombuffer(raw, "<i2").astype(np.float64) / 32768.0
        m = json.loads(raw)
        if m["event"] == "start":
            self.stream_sid = m["start"]["streamSid"]
            return m["start"]["callSid"]
        if m["event"] == "media":
            return unulaw(base64.b64decode(m["media"]["payload"]))
        if m["event"] == "stop":
            raise EOFError
        return None

    def say(self, x: np.ndarray):
        step = self.rate * 40 // 1000
        for i in range(0, len(x), step):
            self.out.put_nowait(x[i:i + step])
            if BUG == "holes":  # a starved output pads its dry queue with 20 ms of zeros
                self.out.put_nowait(np.zeros(self.rate * 20 // 1000))

    async def send_loop(self):
        while True:
            part = await self.out.get()
            if self.twilio:
                body = json.dumps({"event": "media", "streamSid": self.stream_sid, "media": {"payload": base64.b64encode(ulaw(part).tobytes()).decode()}})
            else:
                body = np.clip(np.round(part * 32767), -32768, 32767).astype("<i2").tobytes()
            try:
                await self.ws.send(body)
            except Exception:
                return
            if SENT_DIR and not self.twilio:
                with open(os.path.join(SENT_DIR, f"{id(self)}.pcm"), "ab") as f:
                    f.write(body)
            await asyncio.sleep(0.02)

    async def clear(self):
        while not self.out.empty():
            self.out.get_nowait()
        if self.twilio:
            await self.ws.send(json.dumps({"event": "clear", "streamSid": self.stream_sid}))


async def answer(line: Line, call: str, audio: np.ndarray):
    text = (await client.audio.transcriptions.create(model="gpt-4o-transcribe", file=("turn.wav", wav_bytes(audio, line.rate), "audio/wav"))).text
    history = histories.setdefault(call, [])
    history.append({"role": "user", "content": text})
    r = await client.chat.completions.create(model="gpt-4o-mini", messages=history)
    reply = r.choices[0].message.content or ""
    history.append({"role": "assistant", "content": reply})
    if BUG == "mute":
        return
    if BUG == "other":  # the reply spoken by the mock, and other audio sent instead
        await client.audio.speech.create(model="gpt-4o-mini-tts", voice="alloy", input=reply, response_format="pcm")
        line.say(other_audio(line.rate, id(line) + len(history)))
        return
    if BUG == "hangup":
        await line.ws.close()
        return
    to = line
    if BUG == "cross" and len(calls) > 1:
        to = lines.get(calls[(calls.index(call) + 1) % len(calls)], line)
    if BUG == "first" and calls:
        to = lines.get(calls[0], line)
    out_rate = 16000 if BUG == "rate" else to.rate
    resampler = soxr.ResampleStream(24000, out_rate, 1, dtype="float64")
    extra = {"speed": 9.0} if BUG == "refused" else {}
    spoken = []
    async with client.audio.speech.with_streaming_response.create(model="gpt-4o-mini-tts", voice="alloy", input=reply, response_format="pcm", **extra) as r:
        rest = b""
        async for chunk in r.iter_bytes(4800):
            rest += chunk
            whole, rest = rest[:len(rest) // 2 * 2], rest[len(rest) // 2 * 2:]
            x = np.frombuffer(whole, "<i2").astype(np.float64) / 32768.0
            spoken.append(resampler.resample_chunk(x))
            if BUG != "first":
                to.say(spoken.pop())
    spoken.append(resampler.resample_chunk(np.zeros(0), last=True))
    to.say(np.concatenate(spoken))


def other_audio(rate: int, seed: int) -> np.ndarray:
    """A second of audio that is not the mock's voice: two tones and some noise, the call's
    and the turn's own."""
    rng = np.random.default_rng(seed)
    t = np.arange(rate) / rate
    f1, f2 = rng.uniform(200, 900, 2)
    return 0.2 * np.sin(2 * np.pi * f1 * t) + 0.1 * np.sin(2 * np.pi * f2 * t) + 0.05 * rng.standard_normal(rate)


def burn(ms: float):
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        pass


class Ear:
    """A call's caller heard frame by frame: an energy VAD gathers the caller's words until
    500 ms of silence, then the reply is made (`answer`); a caller who speaks over a reply
    stops it, and a `clear` goes out."""

    def __init__(self, line, name: str):
        self.line, self.name = line, name
        self.heard, self.quiet, self.speaking, self.reply = [], 0, False, None

    async def hear(self, x: np.ndarray):
        line = self.line
        if BUG == "block":
            burn(BLOCK_MS)
        loud = np.sqrt(np.mean(x * x)) > 0.01
        if loud and not self.speaking and self.reply is not None and not self.reply.done():
            self.reply.cancel()  # the caller talks over the reply: stop, and say so
            await line.clear()
        elif loud and not self.speaking and not line.out.empty():
            await line.clear()
        if loud:
            self.speaking, self.quiet = True, 0
        elif self.speaking:
            self.quiet += 1
        if self.speaking:
            self.heard.append(x)
        if self.speaking and self.quiet >= 25:  # 500 ms of silence ends the caller's turn
            audio, self.heard, self.speaking, self.quiet = np.concatenate(self.heard), [], False, 0
            if BUG == "garbage":
                await line.ws.send("this is not JSON")
            self.reply = asyncio.create_task(answer(line, self.name, audio))


async def call(ws):
    line = Line(ws, ws.request.path != "/pcm")
    ear = Ear(line, "" if line.twilio else f"pcm-{id(ws)}")
    if ear.name:
        calls.append(ear.name)
        lines[ear.name] = line
    try:
        async for raw in ws:
            try:
                x = line.audio_in(raw)
            except EOFError:
                break
            if isinstance(x, str):
                ear.name = x
                calls.append(x)
                lines[x] = line
                continue
            if x is not None:
                await ear.hear(x)
    finally:
        line.sender.cancel()


def health(connection, request):
    if request.path == "/health":
        return Response(HTTPStatus.OK, "OK", Headers([("Content-Type", "text/plain")]), b"ok\n")
    return None


async def main():
    async with serve(call, "127.0.0.1", int(os.environ["PORT"]), process_request=health, max_size=None):
        await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
