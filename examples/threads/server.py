"""A small threads-style agent server, shaped like LangGraph's API server, Letta or an
Assistants API: a session opens a thread, then runs it once per turn, then deletes it.

  POST   /threads                           -> 201 {"thread_id"}  (Location: /threads/ID)
  POST   /threads/ID/runs   {"input": ...}  -> 202 {"run_id", "status": "pending"}
  GET    /threads/ID/runs/RUN               -> {"status": "pending"|"success", "messages": [...]}
  POST   /threads/ID/runs/stream {"input"}  -> SSE: metadata, messages/partial..., values, end
  DELETE /threads/ID                        -> 204

Each run sends the thread's whole history to the LLM (OPENAI_BASE_URL, Chat Completions),
so the mock's integrity oracle checks that the server kept it. Planted bug for tests:
THREADS_FORGET_AFTER=N forgets a thread after its N-th run ("thread not found").
THREADS_DROP_HISTORY=1 sends the LLM only the newest message (the mock's oracle must
catch it). THREADS_WARN_ABOVE=N logs a WARNING each time a run starts while more than N
runs are active (a heartbeat that only fails under load). THREADS_HOLD_KB=N holds N KB
per open thread until it is deleted (a known cost per resident session). Standard
library only."""

import http.server
import json
import logging
import os
import threading
import urllib.request
import uuid

UPSTREAM = os.environ["OPENAI_BASE_URL"].rstrip("/")
PORT = int(os.environ.get("PORT", "8000"))
FORGET_AFTER = int(os.environ.get("THREADS_FORGET_AFTER", "0"))
WARN_ABOVE = int(os.environ.get("THREADS_WARN_ABOVE", "0"))
DROP_HISTORY = os.environ.get("THREADS_DROP_HISTORY") == "1"
HOLD_KB = int(os.environ.get("THREADS_HOLD_KB", "0"))

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
log = logging.getLogger("threads")

lock = threading.Lock()
threads = {}  # thread id -> {"messages": [...], "runs": {run id: run}, "count": n}
active = [0]


def llm(messages, stream=False):
    body = {"model": "gpt-4o-mini", "messages": messages[-1:] if DROP_HISTORY else messages}
    if stream:
        body["stream"] = True
    req = urllib.request.Request(
        UPSTREAM + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={
            "content-type": "application/json",
            "authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", ""),
        },
    )
    return urllib.request.urlopen(req, timeout=120)


def started():
    with lock:
        active[0] += 1
        n = active[0]
    if WARN_ABOVE and n > WARN_ABOVE:
        log.warning("heartbeat failed: deadline exceeded with %d runs active", n)


def finished():
    with lock:
        active[0] -= 1


def run_in_background(thread, run):
    started()
    try:
        with llm(thread["messages"]) as r:
            reply = json.loads(r.read())["choices"][0]["message"]
        msg = {"role": "assistant", "content": reply.get("content") or ""}
        with lock:
            thread["messages"].append(msg)
            run["status"] = "success"
    except Exception as e:  # the run fails, the poller sees it
        log.error("run %s failed: %s", run["run_id"], e)
        run["status"] = "error"
    finally:
        finished()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes

    def log_message(self, *args):
        pass

    def reply(self, status, doc=None, headers=()):
        body = b"" if doc is None else json.dumps(doc).encode()
        self.send_response(status)
        if doc is not None:
            self.send_header("content-type", "application/json")
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def parts(self):
        return [p for p in self.path.split("?")[0].split("/") if p]

    def thread(self, tid):
        with lock:
            t = threads.get(tid)
        if t is None:
            self.reply(404, {"detail": f"thread {tid} not found"})
        return t

    def read_json(self):
        n = int(self.headers.get("content-length", "0"))
        return json.loads(self.rfile.read(n) or b"{}")

    def do_GET(self):
        p = self.parts()
        if p == ["ok"]:
            return self.reply(200, {"ok": True})
        if len(p) == 4 and p[0] == "threads" and p[2] == "runs":
            t = self.thread(p[1])
            if t is None:
                return
            with lock:
                run = t["runs"].get(p[3])
                doc = run and {"run_id": run["run_id"], "status": run["status"], "messages": list(t["messages"])}
            return self.reply(200, doc) if doc else self.reply(404, {"detail": "run not found"})
        self.reply(404, {"detail": "not found"})

    def do_DELETE(self):
        p = self.parts()
        with lock:
            gone = len(p) == 2 and threads.pop(p[1], None) is not None
        self.reply(204) if gone else self.reply(404, {"detail": "thread not found"})

    def do_POST(self):
        p = self.parts()
        body = self.read_json()
        if p == ["threads"]:
            tid = str(uuid.uuid4())
            with lock:
                held = bytearray(HOLD_KB * 1024)
                held[::4096] = b"x" * len(range(0, len(held), 4096))  # every page touched
                threads[tid] = {"messages": [], "runs": {}, "count": 0, "held": held}
            return self.reply(201, {"thread_id": tid}, [("location", f"/threads/{tid}")])
        if len(p) in (3, 4) and p[0] == "threads" and p[2] == "runs":
            t = self.thread(p[1])
            if t is None:
                return
            with lock:
                t["count"] += 1
                if FORGET_AFTER and t["count"] > FORGET_AFTER:
                    threads.pop(p[1], None)  # the planted bug
                t["messages"].append({"role": "user", "content": body.get("input", "")})
            if len(p) == 4 and p[3] == "stream":
                return self.stream(t)
            run = {"run_id": str(uuid.uuid4()), "status": "pending"}
            with lock:
                t["runs"][run["run_id"]] = run
            threading.Thread(target=run_in_background, args=(t, run), daemon=True).start()
            return self.reply(202, {"run_id": run["run_id"], "status": "pending"})
        self.reply(404, {"detail": "not found"})

    def event(self, name, data):
        chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        self.wfile.flush()

    def stream(self, t):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        # Like LangGraph: run metadata first, long before the model's first token.
        self.event("metadata", {"run_id": str(uuid.uuid4())})
        started()
        text = ""
        try:
            with llm(t["messages"], stream=True) as r:
                for line in r:
                    line = line.decode().strip()
                    if not line.startswith("data:") or line.endswith("[DONE]"):
                        continue
                    chunk = json.loads(line[5:])
                    delta = (chunk.get("choices") or [{}])[0].get("delta", {}).get("content")
                    if delta:
                        text += delta
                        self.event("messages/partial", [{"type": "ai", "content": text}])
        finally:
            finished()
        with lock:
            t["messages"].append({"role": "assistant", "content": text})
            messages = list(t["messages"])
        self.event("values", {"messages": messages})
        self.event("end", None)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the default 5 drops connects under load


server = Server(("127.0.0.1", PORT), Handler)
server.serve_forever()
