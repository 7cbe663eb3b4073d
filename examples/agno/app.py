"""An agno AgentOS server (PyPI agno, pinned in tests/requirements.lock) with one agent
on an OpenAI model: agno's own FastAPI app, unchanged. Its run endpoint,
POST /agents/{agent_id}/runs, takes multipart form fields (message, stream, session_id),
not JSON. The agent keeps each session's history in memory (InMemoryDb), so the mock's
history check holds. The OpenAI client reads OPENAI_BASE_URL, which Plimsoll sets.
"""

import os

import uvicorn
from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.models.openai import OpenAIChat
from agno.os import AgentOS

agent = Agent(
    name="Assistant",
    id="assistant",
    model=OpenAIChat(id="gpt-4o-mini"),
    db=InMemoryDb(),
    add_history_to_context=True,
    num_history_runs=100,
)
app = AgentOS(agents=[agent], telemetry=False).get_app()

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")), log_level="warning")
