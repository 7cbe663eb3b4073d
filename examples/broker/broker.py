"""A small pub/sub and work-queue broker, over TCP (one line per frame) and WebSocket
(one text message per frame) on the same port, with switches that plant the bugs real
brokers have had. Python standard library only.

    SUB topic            -> "+OK sub topic"; then every message PUB'd to topic:
                            "MSG topic PAYLOAD"
    PUB topic PAYLOAD    -> "+OK N" (N subscribers it went to)
    CONSUME queue        -> "+OK consume queue"; then its share of PUSH'd messages
    PUSH queue PAYLOAD   -> "+OK"; the message goes to one consumer, round robin

Switches (the planted bugs):
    --drop P              drop a share P of deliveries (0.01: 1 %), seeded
    --die-after N         a connection that has sent N frames is closed on its next one
    --slow-subscriber MS  the first subscriber of a topic takes MS ms per delivery, and
                          the broker delivers in one loop: everyone behind it waits
                          (head-of-line blocking)

Binds 127.0.0.1; prints "broker listening on PORT" when ready.
"""

import argparse
import asyncio
import base64
import hashlib
import os
import random
import struct

WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Lines:
    """A TCP client: a frame is a line."""

    def __init__(self, reader, writer, first):
        self.reader, self.writer, self.first = reader, writer, first

    async def recv(self):
        if self.first is not None:
            line, self.first = self.first, None
        else:
            line = await self.reader.readline()
        return line.rstrip(b"\r\n") if line else None

    def send(self, frame):
        self.writer.write(frame + b"\r\n")


class WebSocket:
    """A WebSocket client (RFC 6455, text frames, no extensions): a frame is a message."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer

    async def handshake(self):
        key = None
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "sec-websocket-key":
                key = value.strip().encode()
        if key is None:
            self.writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
            return False
        accept = base64.b64encode(hashlib.sha1(key + WS_GUID).digest())
        self.writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                          b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")
        return True

    async def recv(self):
        while True:
            head = await self.reader.readexactly(2)
            opcode, n = head[0] & 0x0F, head[1] & 0x7F
            if n == 126:
                n = struct.unpack("!H", await self.reader.readexactly(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", await self.reader.readexactly(8))[0]
            mask = await self.reader.readexactly(4) if head[1] & 0x80 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(await self.reader.readexactly(n)))
            if opcode == 8:
                return None
            if opcode == 9:
                self.frame(0xA, data)
            elif opcode in (1, 2):
                return data

    def frame(self, opcode, data):
        n = len(data)
        if n < 126:
            head = struct.pack("!BB", 0x80 | opcode, n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x80 | opcode, 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
        self.writer.write(head + data)

    def send(self, frame):
        self.frame(1, frame)


class Broker:
    def __init__(self, args):
        self.args = args
        self.topics = {}  # topic -> [writer]
        self.queues = {}  # queue -> ([writer], next index)
        self.rng = random.Random(args.seed)

    def dropped(self):
        return self.args.drop > 0 and self.rng.random() < self.args.drop

    async def deliver(self, conn, frame, slow=False):
        if self.dropped():
            return
        if slow:
            await asyncio.sleep(self.args.slow_subscriber / 1000)
        try:
            conn.send(frame)
            await conn.writer.drain()
        except (ConnectionError, RuntimeError):
            pass

    async def publish(self, topic, payload):
        subs = list(self.topics.get(topic, []))
        frame = b"MSG " + topic + b" " + payload
        for i, c in enumerate(subs):
            await self.deliver(c, frame, slow=(i == 0 and self.args.slow_subscriber > 0))
        return len(subs)

    async def push(self, queue, payload):
        consumers, nxt = self.queues.get(queue, ([], 0))
        if not consumers:
            return
        c = consumers[nxt % len(consumers)]
        self.queues[queue] = (consumers, nxt + 1)
        await self.deliver(c, b"MSG " + queue + b" " + payload)

    def forget(self, conn):
        for subs in self.topics.values():
            if conn in subs:
                subs.remove(conn)
        for consumers, _ in self.queues.values():
            if conn in consumers:
                consumers.remove(conn)

    async def serve(self, reader, writer):
        first = await reader.readline()
        if first.startswith(b"GET "):
            conn = WebSocket(reader, writer)
            if not await conn.handshake():
                writer.close()
                return
        else:
            conn = Lines(reader, writer, first)
        frames = 0
        try:
            while True:
                frame = await conn.recv()
                if frame is None:
                    break
                frames += 1
                if self.args.die_after and frames > self.args.die_after:
                    break
                parts = frame.split(b" ", 2)
                cmd = parts[0].upper()
                if cmd == b"SUB" and len(parts) >= 2:
                    self.topics.setdefault(parts[1], []).append(conn)
                    conn.send(b"+OK sub " + parts[1])
                elif cmd == b"CONSUME" and len(parts) >= 2:
                    self.queues.setdefault(parts[1], ([], 0))[0].append(conn)
                    conn.send(b"+OK consume " + parts[1])
                elif cmd == b"PUB" and len(parts) == 3:
                    n = await self.publish(parts[1], parts[2])
                    conn.send(b"+OK %d" % n)
                elif cmd == b"PUSH" and len(parts) == 3:
                    await self.push(parts[1], parts[2])
                    conn.send(b"+OK")
                else:
                    conn.send(b"-ERR unknown command")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.forget(conn)
            writer.close()


async def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=int(os.environ.get("PORT", "7400")))
    p.add_argument("--drop", type=float, default=0.0)
    p.add_argument("--die-after", type=int, default=0)
    p.add_argument("--slow-subscriber", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    broker = Broker(args)
    server = await asyncio.start_server(broker.serve, "127.0.0.1", args.port, limit=1 << 20)
    print(f"broker listening on {args.port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
