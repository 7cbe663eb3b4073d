"""Records a trace of the openai-agent example under a varied, hand-made load.

Starts `plimsoll mock` (record.toml) and the agent (../agent.py) with OpenTelemetry on,
then plays SESSIONS sessions arriving over about a minute: each with its own model
(chatty, quick, memory, deep), its own number of turns (most 1-4, a few up to 16), its
own user message length and pauses between turns (lognormal, 0.05-3 s), up to about 8
at once. Stops the agent (its spans are flushed on exit) and the mock.

    PATH="$PWD/../../../target/release:$PATH" /work/venv/bin/python record.py agent-trace.jsonl
"""

import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SESSIONS = int(os.environ.get("SESSIONS", "32"))
rng = random.Random(34)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait(url, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except Exception:
            time.sleep(0.1)
    raise SystemExit(f"{url} never answered")


def session(base, k, plan):
    model, turns, words, thinks = plan
    for t in range(1, turns + 1):
        if t > 1:
            time.sleep(thinks[t - 2])
        text = " ".join(rng.choice(["please", "check", "the", "order", "notes", "for", "me", "today"]) for _ in range(words))
        msg = f"[[plimsoll session=r{k} nonce=psn{k:016x} turn={t}]] {text}"
        body = json.dumps({"session": f"r{k}", "message": msg, "model": model}).encode()
        req = urllib.request.Request(f"{base}/turn", body, {"content-type": "application/json"})
        urllib.request.urlopen(req, timeout=60).read()


def main(out):
    mock_port, agent_port = free_port(), free_port()
    mock = subprocess.Popen(["plimsoll", "mock", "--listen", f"127.0.0.1:{mock_port}", "--scenario", os.path.join(HERE, "record.toml")])
    try:
        record(out, mock_port, agent_port)
    finally:
        mock.send_signal(signal.SIGTERM)
        mock.wait(10)
    print(f"wrote {out}")


def record(out, mock_port, agent_port):
    wait(f"http://127.0.0.1:{mock_port}/health")
    if os.path.exists(out):
        os.remove(out)
    env = dict(os.environ, OPENAI_BASE_URL=f"http://127.0.0.1:{mock_port}/v1", OPENAI_API_KEY="x",
               PORT=str(agent_port), OTEL_TRACES_FILE=os.path.abspath(out))
    agent = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "agent.py")], env=env)
    try:
        drive(f"http://127.0.0.1:{agent_port}")
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(30)


def drive(base):
    wait(f"{base}/health")
    threads = []
    for k in range(SESSIONS):
        model = rng.choices(["chatty", "quick", "memory", "deep"], [3, 4, 4, 2])[0]
        turns = min(16, max(1, int(rng.lognormvariate(0.8, 0.8))))
        thinks = [min(3.0, max(0.05, rng.lognormvariate(-1.2, 0.9))) for _ in range(turns)]
        plan = (model, turns, rng.randint(3, 60), thinks)
        th = threading.Thread(target=session, args=(base, k, plan))
        th.start()
        threads.append(th)
        time.sleep(rng.expovariate(1 / 1.2))
    for th in threads:
        th.join()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "agent-trace.jsonl")
