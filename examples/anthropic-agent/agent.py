"""An agent service built with FastAPI and the official `anthropic` SDK.

Same shape as examples/openai-agent: POST /turn {"session", "message"} runs the tool
loop against ANTHROPIC_BASE_URL with `messages.stream`, executes `memory_set` /
`memory_get` against the session's store, and streams `data: {"delta": ...}` events,
then `data: {"reply": TEXT, "llm_calls": N}`. GET /health answers when it is up.
AGENT_BUG=shared_memory shares one store across sessions, on purpose.
AGENT_THINKING=1 turns on extended thinking (the mock signs each thinking block and
checks it comes back); AGENT_BUG=strip_thinking drops the thinking blocks from the
history between tool rounds, on purpose: the bug dify#41092 and opencode#3077 fixed.
"""

import json
import os

import anthropic
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

MODEL = os.environ.get("AGENT_MODEL", "memory")
SHARED = os.environ.get("AGENT_BUG") == "shared_memory"
STRIP = os.environ.get("AGENT_BUG") == "strip_thinking"
THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2048} \
    if os.environ.get("AGENT_THINKING") == "1" or STRIP else {"max_tokens": 1024}
TOOLS = [
    {"name": "memory_set", "description": "store a value",
     "input_schema": {"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"}}, "required": ["key", "value"]}},
    {"name": "memory_get", "description": "read a stored value",
     "input_schema": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}},
]

app = FastAPI()
client = anthropic.AsyncAnthropic()  # base URL and key come from the environment
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
            async with client.messages.stream(model=MODEL, messages=s["messages"], tools=TOOLS, **THINKING) as stream:
                async for text in stream.text_stream:
                    yield f"data: {json.dumps({'delta': text})}\n\n"
                message = await stream.get_final_message()
            kept = [b for b in message.content if not (STRIP and b.type in ("thinking", "redacted_thinking"))]
            s["messages"].append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in kept]})
            uses = [b for b in message.content if b.type == "tool_use"]
            if not uses:
                text = "".join(b.text for b in message.content if b.type == "text")
                yield f"data: {json.dumps({'reply': text, 'llm_calls': calls})}\n\n"
                return
            s["messages"].append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": u.id, "content": run_tool(store, u.name, u.input)} for u in uses
            ]})
        yield f"data: {json.dumps({'error': 'too many tool rounds'})}\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")), log_level="warning")
