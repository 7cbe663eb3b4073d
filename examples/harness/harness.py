"""An in-process harness: the agent loop and its driver in one Python process.

Runs PLIMSOLL_CONCURRENCY sessions of 3 turns each with the official `openai` SDK
against OPENAI_BASE_URL (the memory tool loop of examples/openai-agent, without a web
server), times them, and prints one `RESULT {json}` line. Plimsoll starts it with
`plimsoll run --config examples/harness/plimsoll.toml`, samples this process, and
merges its own figures (memory, threads, CPU, LLM calls, integrity) into the line.
"""

import asyncio
import json
import os
import secrets
import statistics
import time

import openai

TURNS = 3
TOOLS = [
    {"type": "function", "function": {"name": "memory_set", "parameters": {"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "memory_get", "parameters": {"type": "object", "properties": {"key": {"type": "string"}}}}},
]


async def session(client, i, turn_ms, errors):
    sid, nonce, store, messages = f"s{i}", "psn" + secrets.token_hex(8), {}, []
    for turn in range(1, TURNS + 1):
        t0 = time.perf_counter()
        messages.append({"role": "user", "content": f"[[plimsoll session={sid} nonce={nonce} turn={turn}]] fact {turn}"})
        try:
            while True:
                r = await client.chat.completions.create(model="memory", messages=messages, tools=TOOLS)
                msg = r.choices[0].message
                if not msg.tool_calls:
                    messages.append({"role": "assistant", "content": msg.content})
                    break
                call = msg.tool_calls[0]
                args = json.loads(call.function.arguments)
                if call.function.name == "memory_set":
                    store[args["key"]] = args["value"]
                    result = "stored"
                else:
                    result = store.get(args["key"], "")
                messages.append({"role": "assistant", "content": None, "tool_calls": [call.model_dump()]})
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        except openai.APIError as e:
            errors[type(e).__name__] = errors.get(type(e).__name__, 0) + 1
            return None
        turn_ms.append((time.perf_counter() - t0) * 1000)
    return True


async def main():
    n = int(os.environ.get("PLIMSOLL_CONCURRENCY", "10"))
    client = openai.AsyncOpenAI(max_retries=2)
    # Set up; from here on, memory growth is the sessions' (Plimsoll takes its baseline).
    print("PLIMSOLL BASELINE", flush=True)
    await asyncio.sleep(0.2)
    turn_ms, errors, session_ms = [], {}, []
    t0 = time.perf_counter()

    async def timed(i):
        s0 = time.perf_counter()
        ok = await session(client, i, turn_ms, errors)
        if ok:
            session_ms.append((time.perf_counter() - s0) * 1000)
        return ok

    results = await asyncio.gather(*(timed(i) for i in range(n)))
    wall = (time.perf_counter() - t0) * 1000

    def q(xs, p):
        return round(statistics.quantiles(xs, n=100)[p - 1], 2) if len(xs) >= 2 else (round(xs[0], 2) if xs else None)

    ok = sum(1 for r in results if r)
    print("RESULT " + json.dumps({
        "concurrency": n, "sessions_ok": ok, "sessions_failed": n - ok, "turns": len(turn_ms),
        "wall_ms": round(wall, 2), "p50_session_ms": q(session_ms, 50), "p99_session_ms": q(session_ms, 99),
        "p50_turn_ms": q(turn_ms, 50), "p99_turn_ms": q(turn_ms, 99), "errors_by_kind": errors,
    }), flush=True)


asyncio.run(main())
