"""An agent service built with FastAPI and the official `openai` SDK.

POST /turn {"session": ID, "message": TEXT} runs the tool loop for that session against
OPENAI_BASE_URL (streaming Chat Completions), executes `memory_set` / `memory_get`
against the session's in-memory store, and streams the answer back to the client as
server-sent events: `data: {"delta": ...}` while the model writes, then
`data: {"reply": TEXT, "llm_calls": N}`. GET /health answers when it is up.

OTEL_TRACES_FILE=PATH turns on OpenTelemetry (PyPI: opentelemetry-instrumentation-openai-v2,
opentelemetry-exporter-otlp-json-file; see traces/README.md): every turn an `invoke_agent`
span with the session as `gen_ai.conversation.id`, every model call a `chat` span (the
official OpenAI instrumentation), every tool an `execute_tool` span, written as OTLP JSON
lines — what `plimsoll workload from-traces` reads. A request may name its `model`.

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

TRACE_FILE = os.environ.get("OTEL_TRACES_FILE")
telemetry = None
if TRACE_FILE:
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.util.genai.handler import get_telemetry_handler

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(FileSpanExporter(TRACE_FILE), schedule_delay_millis=500))
    trace.set_tracer_provider(provider)
    OpenAIInstrumentor().instrument()
    telemetry = get_telemetry_handler()

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

    model = body.get("model", MODEL)
    # Token usage in the stream only when traced: the instrumentation records it from there.
    extra = {"stream_options": {"include_usage": True}} if telemetry else {}

    async def events():
        if telemetry is None:
            async for e in loop():
                yield e
            return
        with telemetry.invoke_local_agent(agent_name="memory-agent", request_model=model) as agent:
            agent.conversation_id = body["session"]
            async for e in loop():
                yield e

    def tool(name: str, call_id: str, args: dict) -> str:
        if telemetry is None:
            return run_tool(store, name, args)
        with telemetry.tool(name) as t:
            t.tool_call_id = call_id
            return run_tool(store, name, args)

    async def loop():
        for calls in range(1, 33):
            stream = await client.chat.completions.create(model=model, messages=s["messages"], tools=TOOLS, stream=True, **extra)
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
                result = tool(c["name"], c["id"], json.loads(c["arguments"] or "{}"))
                s["messages"].append({"role": "tool", "tool_call_id": c["id"], "content": result})
        yield f"data: {json.dumps({'error': 'too many tool rounds'})}\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")), log_level="warning")
