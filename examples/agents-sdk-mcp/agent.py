"""An agent service built with the OpenAI Agents SDK, its tools from MCP through the
SDK's own MCP integration (`agents.mcp`), pointed at the step's mock.

POST /turn {"session": ID, "message": TEXT} runs `Runner.run` for that session (the
conversation kept with `to_input_list()`); the model is `mcp-agent` at OPENAI_BASE_URL
(the Responses API, the SDK's default), and its tools are whatever the MCP server lists:
  MCP_TRANSPORT=http  (default) one `MCPServerStreamableHttp` for the service, to
                      $PLIMSOLL_MOCK_URL/mcp, connected for the life of the app;
  MCP_TRANSPORT=stdio one `MCPServerStdio` per session (`plimsoll mcp --stdio`, relaying
                      to the step's mock), started on the session's first turn.
Tracing is off: nothing leaves the machine. GET /health answers when it is up.

Needs its own venv (the SDK pins a websockets older than tests/requirements.lock's):
  python3 -m venv /tmp/venv-agents && /tmp/venv-agents/bin/pip install -r requirements.txt
"""

import argparse
import asyncio
import contextlib
import os

import uvicorn
from agents import Agent, Runner, set_tracing_disabled
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp
from fastapi import FastAPI, Request

set_tracing_disabled(True)
MODEL = os.environ.get("AGENT_MODEL", "mcp-agent")
TRANSPORT = os.environ.get("MCP_TRANSPORT", "http")

parser = argparse.ArgumentParser()
parser.add_argument("--plimsoll", default="plimsoll", help="the plimsoll binary, for stdio servers")
args = parser.parse_args()

sessions: dict = {}
shared: dict = {}


def make_agent(server) -> Agent:
    return Agent(name="assistant", instructions="Use the tools you are given.", model=MODEL, mcp_servers=[server])


@contextlib.asynccontextmanager
async def lifespan(app):
    if TRANSPORT == "stdio":
        yield
        return
    url = os.environ["PLIMSOLL_MOCK_URL"] + "/mcp"
    async with MCPServerStreamableHttp(params={"url": url}, cache_tools_list=True, name="plimsoll") as server:
        shared["agent"] = make_agent(server)
        yield


async def hold_stdio(ready: asyncio.Future):
    """One stdio MCP server, entered and left in this task (as the SDK needs)."""
    params = {"command": args.plimsoll, "args": ["mcp", "--stdio"], "env": dict(os.environ)}
    async with MCPServerStdio(params=params, cache_tools_list=True, name="plimsoll-stdio") as server:
        ready.set_result(make_agent(server))
        await asyncio.Event().wait()


app = FastAPI(lifespan=lifespan)


@app.get("/health")
async def health():
    return {"status": "ok"}


@app.post("/turn")
async def turn(request: Request):
    body = await request.json()
    s = sessions.setdefault(body["session"], {"history": []})
    if TRANSPORT == "stdio":
        if "agent" not in s:
            s["agent"] = asyncio.get_running_loop().create_future()
            s["task"] = asyncio.create_task(hold_stdio(s["agent"]))
        agent = await s["agent"]
    else:
        agent = shared["agent"]
    result = await Runner.run(agent, s["history"] + [{"role": "user", "content": body["message"]}])
    s["history"] = result.to_input_list()
    return {"reply": result.final_output}


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")), log_level="warning")
