"""A pydantic-ai agent (PyPI pydantic-ai-slim[anthropic], unmodified) behind a tiny FastAPI
service, with Anthropic prompt caching switched on the way pydantic-ai's docs say:
`AnthropicModelSettings(anthropic_cache_instructions=True,
anthropic_cache_tool_definitions=True, anthropic_cache=True)` — a breakpoint on the
instructions, one on the last tool, and the top-level automatic breakpoint that follows
the conversation.

POST /turn {"session", "message"} runs the agent with the session's message history
(kept in memory) and answers {"reply": TEXT, "messages": N}. GET /health answers when up.
The two tools, memory_set / memory_get, play the mock's memory script against a store
per session. ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY come from Plimsoll.

AGENT_CACHE picks the settings: "auto" (default, the three above), "explicit"
(anthropic_cache_messages instead of the top-level anthropic_cache), "off" (none).
AGENT_BUG=date adds the dynamic-instructions pattern pydantic-ai's docs show
(`@agent.instructions` returning the current date-time) to see what it does to the cache.
"""

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone

import uvicorn
from fastapi import FastAPI, Request
from pydantic_ai import Agent, RunContext
from pydantic_ai.models.anthropic import AnthropicModel, AnthropicModelSettings
from pydantic_ai.providers.anthropic import AnthropicProvider

MODEL = os.environ.get("AGENT_MODEL", "claude-sonnet-4-6")
CACHE = os.environ.get("AGENT_CACHE", "auto")
BUG = os.environ.get("AGENT_BUG", "")
HOUSE_RULES = " ".join(
    f"Rule {i}: store every value exactly as the user gave it, read it back before you answer, and say which fact it was."
    for i in range(1, 121)
)

SETTINGS = {
    "auto": AnthropicModelSettings(anthropic_cache_instructions=True, anthropic_cache_tool_definitions=True,
                                   anthropic_cache=True),
    "explicit": AnthropicModelSettings(anthropic_cache_instructions=True, anthropic_cache_tool_definitions=True,
                                       anthropic_cache_messages=True),
    "off": AnthropicModelSettings(),
}[CACHE]


@dataclass
class Deps:
    store: dict = field(default_factory=dict)


model = AnthropicModel(MODEL, provider=AnthropicProvider(base_url=os.environ["ANTHROPIC_BASE_URL"],
                                                         api_key=os.environ.get("ANTHROPIC_API_KEY", "x")))
agent = Agent(model, deps_type=Deps, instructions=f"You are a memory agent. {HOUSE_RULES}",
              model_settings=SETTINGS)

if BUG == "date":
    @agent.instructions
    def now() -> str:
        return f"The current time is {datetime.now(timezone.utc).isoformat()}."


@agent.tool
def memory_set(ctx: RunContext[Deps], key: str, value: str) -> str:
    """Store a value."""
    ctx.deps.store[key] = value
    return "stored"


@agent.tool
def memory_get(ctx: RunContext[Deps], key: str) -> str:
    """Read a stored value."""
    return ctx.deps.store.get(key, "")


app = FastAPI()
sessions: dict = {}


@app.get("/health")
async def health():
    return {"status": "ok"}


@app.post("/turn")
async def turn(request: Request):
    body = await request.json()
    s = sessions.setdefault(body["session"], {"history": [], "deps": Deps()})
    result = await agent.run(body["message"], message_history=s["history"], deps=s["deps"])
    s["history"] = result.all_messages()
    return {"reply": result.output, "messages": len(s["history"])}


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")), log_level="warning")
