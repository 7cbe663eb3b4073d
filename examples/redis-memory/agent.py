"""An agent service whose memory lives in Redis: FastAPI, the official `openai` SDK and
`redis` (redis-py's asyncio client with a BlockingConnectionPool).

POST /turn {"session": ID, "message": TEXT} loads the session's conversation from Redis,
runs the tool loop against OPENAI_BASE_URL (streaming Chat Completions), executes
`memory_set` / `memory_get` as Redis hash commands, saves the conversation back and
streams the answer as server-sent events. GET /health answers when Redis does.

The pool has REDIS_POOL connections (default 4) and waits for a free one when all are in
use. REDIS_HOLD picks how a turn uses it:
  - "turn" (the bug, a common one): a client per request made with
    single_connection_client=True, so the turn holds one pooled connection from its first
    command to its end, model calls included. At most REDIS_POOL turns run at once,
    whatever the CPU: the pool is the wall.
  - "command" (the fix): the shared client, a connection per command, back in the pool
    at once. Four connections serve many concurrent turns.
"""

import asyncio
import concurrent.futures
import json
import os

import openai
import redis.asyncio as redis
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

MODEL = os.environ.get("AGENT_MODEL", "memory")
HOLD = os.environ.get("REDIS_HOLD", "command")
POOL = redis.BlockingConnectionPool.from_url(
    os.environ["REDIS_URL"], max_connections=int(os.environ.get("REDIS_POOL", "4")), timeout=None
)
SHARED = redis.Redis(connection_pool=POOL)
TOOLS = [
    {"type": "function", "function": {"name": "memory_set", "description": "store a value",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"}}, "required": ["key", "value"]}}},
    {"type": "function", "function": {"name": "memory_get", "description": "read a stored value",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}}},
]

app = FastAPI()
llm = openai.AsyncOpenAI()  # base URL and key come from the environment

if HOLD == "worker":
    import redis as sync_redis

    WORKERS = concurrent.futures.ThreadPoolExecutor(
        max_workers=int(os.environ.get("WORKERS", "4")), thread_name_prefix="worker"
    )
    SYNC_POOL = sync_redis.BlockingConnectionPool.from_url(
        os.environ["REDIS_URL"], max_connections=int(os.environ.get("REDIS_POOL", "4")), timeout=None
    )
    SYNC_LLM = openai.OpenAI()


def sync_turn(session: str, message: str):
    """One turn on a worker thread, holding one pooled connection from start to end."""
    r = sync_redis.Redis(connection_pool=SYNC_POOL, single_connection_client=True)
    try:
        saved = r.get(f"conv:{session}")
        messages = json.loads(saved) if saved else []
        messages.append({"role": "user", "content": message})
        for calls in range(1, 33):
            reply = SYNC_LLM.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
            msg = reply.choices[0].message
            if not msg.tool_calls:
                messages.append({"role": "assistant", "content": msg.content})
                r.set(f"conv:{session}", json.dumps(messages), ex=3600)
                return msg.content, calls
            messages.append({"role": "assistant", "content": None,
                             "tool_calls": [tc.model_dump() for tc in msg.tool_calls]})
            for tc in msg.tool_calls:
                args = json.loads(tc.function.arguments or "{}")
                if tc.function.name == "memory_set":
                    r.hset(f"mem:{session}", args["key"], args["value"])
                    result = "stored"
                else:
                    value = r.hget(f"mem:{session}", args.get("key", ""))
                    result = value.decode() if value else ""
                messages.append({"role": "tool", "tool_call_id": tc.id, "content": result})
        return None, 32
    finally:
        r.close()


async def run_tool(r, session: str, name: str, args: dict) -> str:
    if name == "memory_set":
        await r.hset(f"mem:{session}", args["key"], args["value"])
        return "stored"
    if name == "memory_get":
        value = await r.hget(f"mem:{session}", args["key"])
        return value.decode() if value else ""
    return "ok"


@app.get("/health")
async def health():
    if HOLD == "worker":
        sync_redis.Redis(connection_pool=SYNC_POOL).ping()  # the workers' pool, no other
    else:
        await SHARED.ping()
    return {"status": "ok"}


@app.post("/turn")
async def turn(request: Request):
    body = await request.json()
    session = body["session"]
    if HOLD == "worker":
        loop = asyncio.get_running_loop()
        text, calls = await loop.run_in_executor(WORKERS, sync_turn, session, body["message"])

        async def once():
            yield f"data: {json.dumps({'reply': text, 'llm_calls': calls})}\n\n"

        return StreamingResponse(once(), media_type="text/event-stream")

    async def events():
        r = redis.Redis(connection_pool=POOL, single_connection_client=True) if HOLD == "turn" else SHARED
        try:
            saved = await r.get(f"conv:{session}")
            messages = json.loads(saved) if saved else []
            messages.append({"role": "user", "content": body["message"]})
            for calls in range(1, 33):
                stream = await llm.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS, stream=True)
                text, pending = "", {}
                async for chunk in stream:
                    if not chunk.choices:
                        continue
                    delta = chunk.choices[0].delta
                    if delta.content:
                        text += delta.content
                        yield f"data: {json.dumps({'delta': delta.content})}\n\n"
                    for tc in delta.tool_calls or []:
                        slot = pending.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                        slot["id"] = tc.id or slot["id"]
                        if tc.function:
                            slot["name"] = tc.function.name or slot["name"]
                            slot["arguments"] += tc.function.arguments or ""
                if not pending:
                    messages.append({"role": "assistant", "content": text})
                    await r.set(f"conv:{session}", json.dumps(messages), ex=3600)
                    yield f"data: {json.dumps({'reply': text, 'llm_calls': calls})}\n\n"
                    return
                calls_out = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in pending.values()]
                messages.append({"role": "assistant", "content": None, "tool_calls": calls_out})
                for c in pending.values():
                    result = await run_tool(r, session, c["name"], json.loads(c["arguments"] or "{}"))
                    messages.append({"role": "tool", "tool_call_id": c["id"], "content": result})
            yield f"data: {json.dumps({'error': 'too many tool rounds'})}\n\n"
        finally:
            if r is not SHARED:
                await r.aclose()

    return StreamingResponse(events(), media_type="text/event-stream")


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")), log_level="warning")
