"""The same small voice agent as voice_bot.py — energy VAD, the official openai SDK for
speech-to-text, the LLM and text-to-speech against OPENAI_BASE_URL, one asyncio event loop
for every call — met over WebRTC (aiortc, the stack under Pipecat's SmallWebRTC), as a
browser meets it. Offers come as SmallWebRTC's `POST /api/offer` (JSON) or WHIP
(`POST /whip`, `application/sdp`, 201 and a Location to DELETE). Each call's audio in is
aiortc's decoded 48 kHz frames, heard at 16 kHz; its audio out is a track that plays what
the bot says, 20 ms a frame on aiortc's clock, silence between.

Planted bugs, by AGENT_BUG: voice_bot.py's `cross`, `block`, `hangup` and `mute`, and
  noaudio  the answer carries no audio track (an m-line for video only)
  badsdp   the answer is not SDP
  badice   the answer's ICE password is wrong: no connectivity check ever succeeds
  baddtls  the answer's DTLS fingerprint is not the bot's certificate's
  badopus  every Opus packet the bot sends is bytes no decoder reads
GET /health answers on the same port (the responsiveness probe).

aioice never offers 127.0.0.1 as a candidate; where loopback is a machine's only interface
it would offer none, so this bot offers loopback as well (harmless where eth0 exists).
"""

import asyncio
import fractions
import os
import re
import uuid

import aioice.ice
import av
import numpy as np
import soxr
from aiohttp import web
from aiortc import MediaStreamTrack, RTCPeerConnection, RTCSessionDescription

import voice_bot  # beside this file: the agent itself
from voice_bot import BUG, Ear, calls, lines

if BUG == "badopus":
    import aiortc.codecs.opus as _opus

    _encode = _opus.OpusEncoder.encode
    _opus.OpusEncoder.encode = lambda self, frame, force_keyframe=False: (
        lambda packets, ts: ([b"\xff\xff\xff\xff" for _ in packets], ts))(*_encode(self, frame, force_keyframe))

_host = aioice.ice.get_host_addresses
aioice.ice.get_host_addresses = lambda use_ipv4=True, use_ipv6=True: ["127.0.0.1"] + _host(use_ipv4, use_ipv6)

RATE = 16000
FRAME = RATE // 50  # 20 ms


class Speaker(MediaStreamTrack):
    """The bot's voice on the call: 20 ms frames of 48 kHz from what it was told to say."""

    kind = "audio"

    def __init__(self, line):
        super().__init__()
        self.line, self.pts, self.start = line, 0, None
        self.up = soxr.ResampleStream(RATE, 48000, 1, dtype="float64")
        self.ready = np.zeros(0)

    async def recv(self):
        loop = asyncio.get_running_loop()
        if self.start is None:
            self.start = loop.time()
        wait = self.start + self.pts / 48000 - loop.time()
        if wait > 0:
            await asyncio.sleep(wait)
        while len(self.ready) < 960:
            x = self.line.out.get_nowait() if not self.line.out.empty() else np.zeros(FRAME)
            self.ready = np.concatenate([self.ready, self.up.resample_chunk(x)])
        y, self.ready = self.ready[:960], self.ready[960:]
        frame = av.AudioFrame.from_ndarray(
            np.clip(np.round(y * 32767), -32768, 32767).astype("<i2").reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate, frame.pts, frame.time_base = 48000, self.pts, fractions.Fraction(1, 48000)
        self.pts += 960
        return frame


class RtcLine:
    """A call's end as voice_bot.py's agent uses one: its rate, a queue of what to say
    (20 ms pieces), `clear`, and `ws.close()` to hang up."""

    twilio = False

    def __init__(self, pc: RTCPeerConnection):
        self.rate, self.pc, self.ws = RATE, pc, self
        self.out: asyncio.Queue = asyncio.Queue()

    def say(self, x: np.ndarray):
        for i in range(0, len(x), FRAME):
            self.out.put_nowait(x[i:i + FRAME])

    async def clear(self):
        while not self.out.empty():
            self.out.get_nowait()

    async def close(self):
        await self.pc.close()


async def listen(track, ear: Ear):
    """The caller's audio, as the agent hears it: mono at 16 kHz, 20 ms at a time."""
    down = soxr.ResampleStream(48000, RATE, 1, dtype="float64")
    rest = np.zeros(0)
    while True:
        try:
            frame = await track.recv()
        except Exception:
            return
        x = frame.to_ndarray().astype(np.float64) / 32768.0
        x = x.reshape(-1, len(frame.layout.channels)).mean(axis=1)
        rest = np.concatenate([rest, down.resample_chunk(x)])
        while len(rest) >= FRAME:
            await ear.hear(rest[:FRAME])
            rest = rest[FRAME:]


PEERS: dict[str, RTCPeerConnection] = {}


async def answer_offer(sdp: str) -> tuple[str, str]:
    pc = RTCPeerConnection()
    name = uuid.uuid4().hex
    PEERS[name] = pc
    line = RtcLine(pc)
    calls.append(name)
    lines[name] = line
    ear = Ear(line, name)
    pc.addTrack(Speaker(line))

    @pc.on("track")
    def on_track(track):
        if track.kind == "audio":
            asyncio.ensure_future(listen(track, ear))

    @pc.on("connectionstatechange")
    async def on_state():
        if pc.connectionState in ("failed", "closed"):
            PEERS.pop(name, None)
            await pc.close()

    await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type="offer"))
    await pc.setLocalDescription(await pc.createAnswer())
    out = pc.localDescription.sdp
    if BUG == "noaudio":
        out = out.replace("m=audio", "m=video").replace("opus/48000/2", "VP8/90000")
    if BUG == "badsdp":
        out = "this is not SDP"
    if BUG == "badice":
        out = re.sub(r"a=ice-pwd:(\S+)", lambda m: "a=ice-pwd:" + "x" * len(m.group(1)), out)
    if BUG == "baddtls":
        out = re.sub(r"a=fingerprint:sha-256 (\S+)", lambda m: "a=fingerprint:sha-256 " + re.sub(r"[0-9A-F]", "0", m.group(1)), out)
    return name, out


async def offer(request):
    body = await request.json()
    name, sdp = await answer_offer(body["sdp"])
    return web.json_response({"sdp": sdp, "type": "answer", "pc_id": name})


async def whip(request):
    if request.content_type != "application/sdp":
        return web.Response(status=415, text="WHIP takes application/sdp")
    name, sdp = await answer_offer(await request.text())
    return web.Response(status=201, text=sdp, content_type="application/sdp", headers={"Location": f"/whip/{name}"})


async def hang_up(request):
    pc = PEERS.pop(request.match_info["id"], None)
    if pc is None:
        return web.Response(status=404)
    await pc.close()
    return web.Response(status=200)


async def health(request):
    return web.Response(text="ok\n")


def main():
    app = web.Application()
    app.router.add_post("/api/offer", offer)
    app.router.add_post("/whip", whip)
    app.router.add_delete("/whip/{id}", hang_up)
    app.router.add_get("/health", health)
    web.run_app(app, host="127.0.0.1", port=int(os.environ["PORT"]), print=None)


if __name__ == "__main__":
    assert voice_bot.client is not None
    main()
