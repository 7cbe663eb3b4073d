"""An agent service built with FastAPI and the official `anthropic` SDK.

Same shape as examples/openai-agent: POST /turn {"session", "message"} runs the tool
loop against ANTHROPIC_BASE_URL with `messages.stream`, executes `memory_set` /
`memory_get` against the session's store, and streams `data: {"delta": ...}` events,
then `data: {"reply": TEXT, "llm_calls": N}`. GET /health answers when it is up.
AGENT_BUG=shared_memory shares one store across sessions, on purpose.
AGENT_THINKING=1 turns on extended thinking (the mock signs each thinking block and
checks it comes back); AGENT_BUG=strip_thinking drops the thinking blocks from the
history between tool rounds, on purpose: the bug dify#41092 and opencode#3077 fixed.
AGENT_CACHE=1 gives it a long system prompt and uses Anthropic's prompt cache the usual
way: a `cache_control` breakpoint on the system prompt, on the last tool and on the last
block of the conversation (moved forward on every call), so each call reads what the one
before it wrote. AGENT_BUG=timestamp plants the commonest cache bug on top: the current
time in the system prompt, so no two calls share a prefix and every call pays for
writing the cache again (plimsoll-cache.toml runs both).
"""

import copy
import json
import os
from datetime import datetime, timezone

import anthropic
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

MODEL = os.environ.get("AGENT_MODEL", "memory")
SHARED = os.environ.get("AGENT_BUG") == "shared_memory"
STRIP = os.environ.get("AGENT_BUG") == "strip_thinking"
CACHE = os.environ.get("AGENT_CACHE") == "1"
TIMESTAMP = os.environ.get("AGENT_BUG") == "timestamp"
EPHEMERAL = {"type": "ephemeral"}
HOUSE_RULES = " ".join(
    f"Rule {i}: store every value exactly as the user gave it, read it back before you answer, and say which fact it was."
    for i in range(1, 121)
)
THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2048} \
    if os.environ.get("AGENT_THINKING") == "1" or STRIP else {"max_tokens": 1024}
TOOLS = [
    {"name": "memory_set", "description": "store a value",
     "input_schema": {"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"}}, "required": ["key", "value"]}},
    {"name": "memory_get", "description": "read a stored value",
     "input_schema": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}},
]



def system_prompt() -> list:
    """The long, fixed system prompt, cached up to its end; with the planted bug it
    opens with the current time, which changes on every call."""
    opening = "You are a memory agent."
    if TIMESTAMP:
        opening += f" The time is {datetime.now(timezone.utc).isoformat(timespec='milliseconds')}."
    return [{"type": "text", "text": f"{opening} {HOUSE_RULES}", "cache_control": EPHEMERAL}]


def cached(messages: list) -> list:
    """The conversation with a breakpoint on its last block (the history itself is kept
    without one, so breakpoints never pile up past the API's four)."""
    out = copy.deepcopy(messages)
    last = out[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"]}]
    last["content"][-1]["cache_control"] = EPHEMERAL
    return out


def call_args(messages: list) -> dict:
    if not CACHE:
        return {"messages": messages, "tools": TOOLS}
    tools = TOOLS[:-1] + [dict(TOOLS[-1], cache_control=EPHEMERAL)]
    return {"system": system_prompt(), "messages": cached(messages), "tools": tools}


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
            async with client.messages.stream(model=MODEL, **call_args(s["messages"]), **THINKING) as stream:
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
