"""A FastAPI agent whose conversation id is a plain field of the body, as many hand-written
agent servers take it: POST /chat {"session": str, "message": str} keeps each session's
history under its `session` and asks the model (the official `openai` SDK against
OPENAI_BASE_URL) with all of it. Two sessions that send one `session` share one
conversation: the mock's oracle then sees one session's messages in the other's.
"""

import os

import openai
import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel

app = FastAPI()
client = openai.AsyncOpenAI()
history: dict[str, list] = {}


class Chat(BaseModel):
    session: str
    message: str


@app.get("/health")
async def health():
    return {"ok": True}


@app.post("/chat")
async def chat(c: Chat):
    messages = history.setdefault(c.session, [])
    messages.append({"role": "user", "content": c.message})
    r = await client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    reply = r.choices[0].message.content or ""
    messages.append({"role": "assistant", "content": reply})
    return {"reply": reply}


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
