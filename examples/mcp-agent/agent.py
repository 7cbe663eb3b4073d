"""An agent service whose tools come from an MCP server, through the official `mcp` SDK.

POST /turn {"session": ID, "message": TEXT} runs the tool loop for that session against
OPENAI_BASE_URL (Chat Completions, the official `openai` SDK). The model is offered the
tools the MCP server lists, and every tool call it makes goes to that server
(`tools/call`); the result goes back to the model. The answer is
`{"reply": TEXT, "llm_calls": N, "mcp_calls": M}`. GET /health answers when it is up.

Where the tools come from (MCP_TRANSPORT):
  http   (default) one MCP client for the whole service, over Streamable HTTP to
         $PLIMSOLL_MOCK_URL/mcp (the mock of the step): a pool shared by every session;
  stdio  one stdio MCP server per session, started on the session's first turn
         (`plimsoll mcp --stdio`, which relays to the step's mock), kept until the
         agent stops: a process per session, as many agents do it.
MCP_MODE picks the SDK's protocol negotiation: auto (2026-07-28 when the server speaks
it) or legacy (the initialize handshake). MCP_POOL=N lets only N tool calls run at once
across the service (a client pool too small for its load: the wall it makes is
plimsoll-slow-tool.toml's subject).

AGENT_BUG=drop_mcp_result plants a bug on purpose: the result of `kv_get` is dropped
(an empty tool message) before the next model call. Plimsoll's oracle must name the tool.
"""

import argparse
import asyncio
import json
import os

import openai
import uvicorn
from fastapi import FastAPI, Request
from mcp import Client
from mcp.client.stdio import StdioServerParameters

MODEL = os.environ.get("AGENT_MODEL", "mcp-agent")
TRANSPORT = os.environ.get("MCP_TRANSPORT", "http")
MODE = os.environ.get("MCP_MODE", "auto")
BUG = os.environ.get("AGENT_BUG", "")
POOL = int(os.environ.get("MCP_POOL", "0"))

parser = argparse.ArgumentParser()
parser.add_argument("--plimsoll", default="plimsoll", help="the plimsoll binary, for stdio servers")
args = parser.parse_args()

app = FastAPI()
llm = openai.AsyncOpenAI()  # base URL and key come from the environment
sessions: dict = {}
pool = asyncio.Semaphore(POOL) if POOL > 0 else None


class Held:
    """An MCP client held open by a task of its own (the SDK's context manager must be
    entered and left in one task), usable from any request."""

    def __init__(self, target):
        self.ready = asyncio.get_running_loop().create_future()
        self.task = asyncio.create_task(self.hold(target))

    async def hold(self, target):
        try:
            async with Client(target, mode=MODE) as c:
                listed = await c.list_tools()
                tools = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                          "parameters": t.input_schema}} for t in listed.tools]
                self.ready.set_result((c, tools))
                await asyncio.Event().wait()
        except Exception as e:  # the first turn that needs it says why
            if not self.ready.done():
                self.ready.set_exception(e)
            raise


shared: Held | None = None


def mcp_for(session: dict) -> Held:
    global shared
    if TRANSPORT == "stdio":
        if "mcp" not in session:
            session["mcp"] = Held(StdioServerParameters(command=args.plimsoll, args=["mcp", "--stdio"], env=dict(os.environ)))
        return session["mcp"]
    if shared is None:
        shared = Held(os.environ["PLIMSOLL_MOCK_URL"] + "/mcp")
    return shared


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


@app.get("/health")
async def health():
    return {"status": "ok"}


@app.post("/turn")
async def turn(request: Request):
    body = await request.json()
    s = sessions.setdefault(body["session"], {"messages": []})
    client, tools = await mcp_for(s).ready
    s["messages"].append({"role": "user", "content": body["message"]})
    mcp_calls = 0
    for calls in range(1, 33):
        r = await llm.chat.completions.create(model=MODEL, messages=s["messages"], tools=tools)
        msg = r.choices[0].message
        if not msg.tool_calls:
            s["messages"].append({"role": "assistant", "content": msg.content})
            return {"reply": msg.content, "llm_calls": calls, "mcp_calls": mcp_calls}
        s["messages"].append({"role": "assistant", "content": msg.content, "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in msg.tool_calls]})
        for c in msg.tool_calls:
            call = client.call_tool(c.function.name, json.loads(c.function.arguments or "{}"))
            if pool is None:
                result = await call
            else:
                async with pool:
                    result = await call
            mcp_calls += 1
            content = text_of(result)
            if BUG == "drop_mcp_result" and c.function.name == "kv_get":
                content = ""
            s["messages"].append({"role": "tool", "tool_call_id": c.id, "content": content})
    return {"error": "too many tool rounds"}


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")), log_level="warning")
