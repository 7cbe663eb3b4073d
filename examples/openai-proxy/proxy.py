"""A tiny LLM proxy (the LiteLLM-like case): it forwards every POST /v1/... (Chat
Completions, Messages) to OPENAI_BASE_URL as it is, with the provider's own headers, and
returns the answer, streamed or not; GET /health answers ok. Standard library only."""

import http.server
import os
import urllib.request

UPSTREAM = os.environ["OPENAI_BASE_URL"].rstrip("/")
PORT = int(os.environ.get("PORT", "8000"))


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        body = b'{"status": "ok"}'
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        data = self.rfile.read(int(self.headers.get("content-length", "0")))
        path = self.path[len("/v1"):] if self.path.startswith("/v1/") else self.path
        req = urllib.request.Request(
            UPSTREAM + path,
            data=data,
            headers={
                "content-type": "application/json",
                "authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", ""),
                **{k: v for k, v in self.headers.items() if k.lower() in ("anthropic-version", "x-api-key")},
            },
        )
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                status, ctype, out = r.status, r.headers.get("content-type", ""), r.read()
        except urllib.error.HTTPError as e:
            status, ctype, out = e.code, e.headers.get("content-type", ""), e.read()
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Proxy).serve_forever()
