"""A WebRTC voice peer on aiortc (the stack under Pipecat's SmallWebRTC), the smallest
one a caller can test its wire against: whatever audio it hears it sends back, on the
call's own track. It takes offers both ways a bot does: Pipecat's SmallWebRTC
`POST /api/offer` (JSON) and WHIP (`POST /whip`, `application/sdp`, 201 with a Location
to DELETE). Modes, for the bad inputs a caller must survive:

  --mode echo       the audio back (default)
  --mode silent     answers and connects, sends no RTP
  --mode video      answers with a video m-line only (no audio track)
  --mode garbage    answers 200 with SDP that does not parse

aioice never offers 127.0.0.1 as a host candidate; on a machine with only loopback it
would offer nothing, so this peer offers loopback too (it does no harm where eth0 exists).

  python aiortc_echo.py --port 8765 [--mode echo]
"""

import argparse
import asyncio
import uuid

import aioice.ice
from aiohttp import web
from aiortc import MediaStreamTrack, RTCPeerConnection, RTCSessionDescription

_host = aioice.ice.get_host_addresses
aioice.ice.get_host_addresses = lambda use_ipv4=True, use_ipv6=True: ["127.0.0.1"] + _host(use_ipv4, use_ipv6)

PEERS = {}


class Echo(MediaStreamTrack):
    kind = "audio"

    def __init__(self, source):
        super().__init__()
        self.source = source

    async def recv(self):
        return await self.source.recv()


async def answer(sdp, mode):
    pc = RTCPeerConnection()
    pc_id = uuid.uuid4().hex
    PEERS[pc_id] = pc

    @pc.on("track")
    def on_track(track):
        if track.kind == "audio" and mode == "echo":
            pc.addTrack(Echo(track))

    @pc.on("connectionstatechange")
    async def on_state():
        if pc.connectionState in ("failed", "closed"):
            await pc.close()
            PEERS.pop(pc_id, None)

    await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type="offer"))
    if mode == "silent":
        for t in pc.getTransceivers():
            t.direction = "recvonly"
    await pc.setLocalDescription(await pc.createAnswer())
    out = pc.localDescription.sdp
    if mode == "video":
        out = out.replace("m=audio", "m=video").replace("opus/48000/2", "VP8/90000")
    if mode == "garbage":
        out = "this is not SDP"
    return pc_id, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--mode", default="echo", choices=["echo", "silent", "video", "garbage"])
    args = ap.parse_args()

    async def offer(request):
        body = await request.json()
        pc_id, sdp = await answer(body["sdp"], args.mode)
        return web.json_response({"sdp": sdp, "type": "answer", "pc_id": pc_id})

    async def whip(request):
        if request.content_type != "application/sdp":
            return web.Response(status=415, text="WHIP takes application/sdp")
        pc_id, sdp = await answer(await request.text(), args.mode)
        return web.Response(status=201, text=sdp, content_type="application/sdp",
                            headers={"Location": f"/whip/{pc_id}"})

    async def hang_up(request):
        pc = PEERS.pop(request.match_info["id"], None)
        if pc is None:
            return web.Response(status=404)
        await pc.close()
        return web.Response(status=200)

    async def peers(request):
        return web.json_response({"open": len(PEERS)})

    app = web.Application()
    app.router.add_post("/api/offer", offer)
    app.router.add_post("/whip", whip)
    app.router.add_delete("/whip/{id}", hang_up)
    app.router.add_get("/peers", peers)
    web.run_app(app, host="127.0.0.1", port=args.port, print=None)


if __name__ == "__main__":
    main()
