"""An agent service built with FastAPI and the official `openai` SDK.

POST /turn {"session": ID, "message": TEXT} runs the tool loop for that session against
OPENAI_BASE_URL (streaming Chat Completions), executes `memory_set` / `memory_get`
against the session's in-memory store, and streams the answer back to the client as
server-sent events: `data: {"delta": ...}` while the model writes, then
`data: {"reply": TEXT, "llm_calls": N}`. GET /health answers when it is up.

AGENT_BUG=shared_memory plants a classic bug on purpose: one store for all sessions,
so under concurrency a session can read another's value. Plimsoll's integrity oracle
must catch it.
"""

import json
import os

import openai
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

MODEL = os.environ.get("AGENT_MODEL", "memory")
SHARED = os.environ.get("AGENT_BUG") == "shared_memory"
TOOLS = [
    {"type": "function", "function": {"name": "memory_set", "description": "store a value",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"}}, "required": ["key", "value"]}}},
    {"type": "function", "function": {"name": "memory_get", "description": "read a stored value",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}}},
]

app = FastAPI()
client = openai.AsyncOpenAI()  # base URL and key come from the environment
sessions: dict = {}
shared_store: dict = {}


def run_tool(store: dict, name: str, args: dict) -> str:
    if name == "memory_set":
        store[args["key"]] = args["value"]
        return "stored"
    if name == "memory_get":
        return store.get(args["key"], "")
    return "ok"


@app.get("/health")
async def health():
    return {"status": "ok"}


@app.post("/turn")
async def turn(request: Request):
    body = await request.json()
    s = sessions.setdefault(body["session"], {"messages": [], "store": {}})
    store = shared_store if SHARED else s["store"]
    s["messages"].append({"role": "user", "content": body["message"]})

    async def events():
        for calls in range(1, 33):
            stream = await client.chat.completions.create(model=MODEL, messages=s["messages"], tools=TOOLS, stream=True)
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
                s["messages"].append({"role": "assistant", "content": text})
                yield f"data: {json.dumps({'reply': text, 'llm_calls': calls})}\n\n"
                return
            calls_out = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in pending.values()]
            s["messages"].append({"role": "assistant", "content": None, "tool_calls": calls_out})
            for c in pending.values():
                result = run_tool(store, c["name"], json.loads(c["arguments"] or "{}"))
                s["messages"].append({"role": "tool", "tool_call_id": c["id"], "content": result})
        yield f"data: {json.dumps({'error': 'too many tool rounds'})}\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")), log_level="warning")
