"""An agent endpoint that takes form fields and uploads, as agno's AgentOS and many
FastAPI agent servers do: FastAPI's own Form/UploadFile parsing is what the tests rely on.

POST /runs (form: message, session_id, stream) and POST /upload (multipart: message, image,
blob) each ask the model (the session's history kept by session_id) (the official `openai` SDK against OPENAI_BASE_URL) with the
message and answer JSON saying what FastAPI parsed. GET /health answers when it is up.
"""

import os

import openai
import uvicorn
from fastapi import FastAPI, Form, UploadFile

app = FastAPI()
client = openai.AsyncOpenAI()
history: dict[str, list] = {}


async def ask(message: str, session_id: str = "") -> str:
    messages = history.setdefault(session_id, []) if session_id else []
    messages.append({"role": "user", "content": message})
    r = await client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    reply = r.choices[0].message.content or ""
    messages.append({"role": "assistant", "content": reply})
    return reply


@app.get("/health")
async def health():
    return {"ok": True}


@app.post("/runs")
async def runs(message: str = Form(...), session_id: str = Form(...), stream: bool = Form(...)):
    return {"message": message, "session_id": session_id, "stream": stream, "reply": await ask(message, session_id)}


async def described(f: UploadFile) -> dict:
    data = await f.read()
    return {"filename": f.filename, "content_type": f.content_type, "size": len(data), "head": data[:4].hex()}


@app.post("/upload")
async def upload(message: str = Form(...), image: UploadFile = Form(...), blob: UploadFile = Form(...)):
    return {
        "message": message,
        "image": await described(image),
        "blob": await described(blob),
        "reply": await ask(message),
    }


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
