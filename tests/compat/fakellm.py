"""A loopback OpenAI-compatible server with canned replies, so real Agents run
without a network or an LLM (the same approach as the fixture generator)."""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        last = (body.get("messages") or [{}])[-1]
        text = last.get("content") or ""
        if isinstance(text, list):
            text = " ".join(p.get("text", "") for p in text if isinstance(p, dict))
        base = {"id": "chatcmpl-fake", "created": int(time.time()), "model": body.get("model", "gpt-4o-mini")}
        usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
        reply = f"Echo: {text}"
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            chunk = {**base, "object": "chat.completion.chunk"}
            for delta, finish in (({"role": "assistant", "content": reply}, None), ({}, "stop")):
                event = {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            return
        out = {**base, "object": "chat.completion", "usage": usage,
               "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}]}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def start() -> ThreadingHTTPServer:
    """Start the server and point the OpenAI client of this process at it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.environ["OPENAI_API_KEY"] = "sk-fake"
    os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{server.server_port}/v1"
    return server
