"""An agent service whose memory lives in PostgreSQL: FastAPI, the official `openai` SDK
and psycopg 3 with its connection pool (psycopg_pool.AsyncConnectionPool).

POST /turn {"session": ID, "message": TEXT} runs the tool loop against OPENAI_BASE_URL
(Chat Completions), executes `memory_set` / `memory_get` as SQL on a table of facts,
keeps the conversation in a table too, and answers {"reply": TEXT, "llm_calls": N}.
GET /health answers when the database does.

The pool opens connections as turns need them, up to PG_POOL (default 4). Each turn takes one for the whole turn,
model calls included (a common shape: a transaction or a session object per request),
so at most PG_POOL turns run at once, whatever the CPU: the pool is the wall. Each turn
also asks the database for a little work (PG_WORK rows summed, default 20,000: about a
millisecond of the backend's CPU), so the database's CPU per turn is there to measure.

PostgreSQL is not started by Plimsoll here: it is the user's own, already running, and
watched with a [[probe]] (see plimsoll.toml). PG_URL says where it is.
"""

import json
import os

import openai
import uvicorn
from fastapi import FastAPI, Request
from psycopg_pool import AsyncConnectionPool

MODEL = os.environ.get("AGENT_MODEL", "memory")
WORK = int(os.environ.get("PG_WORK", "20000"))
SIZE = int(os.environ.get("PG_POOL", "4"))
POOL = AsyncConnectionPool(os.environ["PG_URL"], min_size=1, max_size=SIZE, open=False, timeout=600)
TOOLS = [
    {"type": "function", "function": {"name": "memory_set", "description": "store a value",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"}}, "required": ["key", "value"]}}},
    {"type": "function", "function": {"name": "memory_get", "description": "read a stored value",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}}},
]
SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (session text, key text, value text, PRIMARY KEY (session, key));
CREATE TABLE IF NOT EXISTS conversations (session text PRIMARY KEY, messages text);
"""

app = FastAPI()
llm = openai.AsyncOpenAI()  # base URL and key come from the environment


@app.on_event("startup")
async def start():
    await POOL.open(wait=True)
    async with POOL.connection() as c:
        await c.execute(SCHEMA)


async def run_tool(c, session: str, name: str, args: dict) -> str:
    if name == "memory_set":
        await c.execute(
            "INSERT INTO facts VALUES (%s, %s, %s) ON CONFLICT (session, key) DO UPDATE SET value = excluded.value",
            (session, args["key"], args["value"]),
        )
        return "stored"
    if name == "memory_get":
        row = await (await c.execute("SELECT value FROM facts WHERE session = %s AND key = %s",
                                     (session, args.get("key", "")))).fetchone()
        return row[0] if row else ""
    return "ok"


@app.get("/health")
async def health():
    async with POOL.connection() as c:
        await c.execute("SELECT 1")
    return {"status": "ok"}


@app.post("/turn")
async def turn(request: Request):
    body = await request.json()
    session = body["session"]
    async with POOL.connection() as c:  # held for the whole turn: the pool is the wall
        row = await (await c.execute("SELECT messages FROM conversations WHERE session = %s", (session,))).fetchone()
        messages = json.loads(row[0]) if row else []
        messages.append({"role": "user", "content": body["message"]})
        await c.execute("SELECT sum(i) FROM generate_series(1, %s) AS i", (WORK,))
        for calls in range(1, 33):
            reply = await llm.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
            msg = reply.choices[0].message
            if not msg.tool_calls:
                messages.append({"role": "assistant", "content": msg.content})
                await c.execute(
                    "INSERT INTO conversations VALUES (%s, %s) ON CONFLICT (session) DO UPDATE SET messages = excluded.messages",
                    (session, json.dumps(messages)),
                )
                return {"reply": msg.content, "llm_calls": calls}
            messages.append({"role": "assistant", "content": None,
                             "tool_calls": [tc.model_dump() for tc in msg.tool_calls]})
            for tc in msg.tool_calls:
                result = await run_tool(c, session, tc.function.name, json.loads(tc.function.arguments or "{}"))
                messages.append({"role": "tool", "tool_call_id": tc.id, "content": result})
    return {"error": "too many tool rounds"}


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")), log_level="warning")
