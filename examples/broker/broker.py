"""A small pub/sub and work-queue broker over TCP, one line per frame, with switches
that plant the bugs real brokers have had. Python standard library only.

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
import os
import random


class Broker:
    def __init__(self, args):
        self.args = args
        self.topics = {}  # topic -> [writer]
        self.queues = {}  # queue -> ([writer], next index)
        self.rng = random.Random(args.seed)

    def dropped(self):
        return self.args.drop > 0 and self.rng.random() < self.args.drop

    async def deliver(self, writer, line, slow=False):
        if self.dropped():
            return
        if slow:
            await asyncio.sleep(self.args.slow_subscriber / 1000)
        try:
            writer.write(line)
            await writer.drain()
        except (ConnectionError, RuntimeError):
            pass

    async def publish(self, topic, payload):
        subs = list(self.topics.get(topic, []))
        line = b"MSG " + topic + b" " + payload + b"\r\n"
        for i, w in enumerate(subs):
            await self.deliver(w, line, slow=(i == 0 and self.args.slow_subscriber > 0))
        return len(subs)

    async def push(self, queue, payload):
        consumers, nxt = self.queues.get(queue, ([], 0))
        if not consumers:
            return
        w = consumers[nxt % len(consumers)]
        self.queues[queue] = (consumers, nxt + 1)
        await self.deliver(w, b"MSG " + queue + b" " + payload + b"\r\n")

    def forget(self, writer):
        for subs in self.topics.values():
            if writer in subs:
                subs.remove(writer)
        for consumers, _ in self.queues.values():
            if writer in consumers:
                consumers.remove(writer)

    async def serve(self, reader, writer):
        frames = 0
        try:
            while True:
                raw = await reader.readline()
                if not raw:
                    break
                frames += 1
                if self.args.die_after and frames > self.args.die_after:
                    break
                parts = raw.rstrip(b"\r\n").split(b" ", 2)
                cmd = parts[0].upper()
                if cmd == b"SUB" and len(parts) >= 2:
                    self.topics.setdefault(parts[1], []).append(writer)
                    writer.write(b"+OK sub " + parts[1] + b"\r\n")
                elif cmd == b"CONSUME" and len(parts) >= 2:
                    self.queues.setdefault(parts[1], ([], 0))[0].append(writer)
                    writer.write(b"+OK consume " + parts[1] + b"\r\n")
                elif cmd == b"PUB" and len(parts) == 3:
                    n = await self.publish(parts[1], parts[2])
                    writer.write(b"+OK %d\r\n" % n)
                elif cmd == b"PUSH" and len(parts) == 3:
                    await self.push(parts[1], parts[2])
                    writer.write(b"+OK\r\n")
                else:
                    writer.write(b"-ERR unknown command\r\n")
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            self.forget(writer)
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
