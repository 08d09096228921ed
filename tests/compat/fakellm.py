"""A loopback OpenAI-compatible server with canned replies, so real Agents run
without a network or an LLM (the same approach as the fixture generator).

``POST .../chat/completions`` echoes the last message (``Echo: <text>``), streamed or not.
``POST .../embeddings`` returns :func:`embed` of each input: a deterministic hashed bag of words,
so equal texts get equal vectors and texts sharing words are near; its dimension is the request's
``dimensions``, else ``start(dim=...)``, else ``FAKELLM_EMBED_DIM``, else 1536 (what
text-embedding-3-small gives and what the libraries assume for it). ``encoding_format=base64``
(the openai client's default) is answered as little-endian float32, as OpenAI does.

:func:`chroma_embedding_function` is the same vectors as a chromadb embedding function, for
code that talks to chromadb directly: chromadb's own default downloads an ONNX model.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_DIM = 1536
ENV_DIM = "FAKELLM_EMBED_DIM"
_WORD = re.compile(r"\w+")


def embed(text: str, dim: int = DEFAULT_DIM) -> list[float]:
    """A unit vector: each lower-cased word adds ±1 at a position its hash picks.

    Text with no word gets the first axis, so no vector is zero (cosine distance needs a norm).
    """
    vec = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        vec[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vec))
    if norm == 0.0:
        vec[0] = 1.0
        return vec
    return [x / norm for x in vec]


def _texts(raw) -> list[str]:
    """The request's ``input``: a string, a list of strings, or token id lists (hashed as words)."""
    if isinstance(raw, str):
        return [raw]
    if raw and all(isinstance(x, int) for x in raw):
        return [" ".join(map(str, raw))]
    return [x if isinstance(x, str) else " ".join(map(str, x)) for x in raw or []]


class _Handler(BaseHTTPRequestHandler):
    dim = DEFAULT_DIM

    def log_message(self, *args):
        pass

    def _send_json(self, out: dict) -> None:
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _embeddings(self, body: dict) -> None:
        dim = int(body.get("dimensions") or self.dim)
        data = []
        for i, text in enumerate(_texts(body.get("input"))):
            vec = embed(text, dim)
            if body.get("encoding_format") == "base64":
                vec = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode()
            data.append({"object": "embedding", "index": i, "embedding": vec})
        words = sum(len(_WORD.findall(t)) for t in _texts(body.get("input")))
        self._send_json({"object": "list", "data": data, "model": body.get("model", "text-embedding-3-small"),
                         "usage": {"prompt_tokens": words, "total_tokens": words}})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if self.path.rstrip("/").endswith("/embeddings"):
            self._embeddings(body)
            return
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
        self._send_json(out)


def start(dim: int | None = None) -> ThreadingHTTPServer:
    """Start the server and point the OpenAI clients of this process at it (openai reads
    ``OPENAI_BASE_URL``, litellm also ``OPENAI_API_BASE``); ``dim``: the embeddings' default size."""
    handler = type("_Handler", (_Handler,), {"dim": dim or int(os.environ.get(ENV_DIM) or DEFAULT_DIM)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/v1"
    os.environ["OPENAI_API_KEY"] = "sk-fake"
    os.environ["OPENAI_BASE_URL"] = url
    os.environ["OPENAI_API_BASE"] = url
    return server


CHROMA_EF_NAME = "praisonmem_test_hash"


def chroma_embedding_function(dim: int = 64):
    """A chromadb embedding function giving :func:`embed`'s vectors, registered with chromadb under
    :data:`CHROMA_EF_NAME` so a collection made with it opens again (needs chromadb)."""
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
    from chromadb.utils.embedding_functions import known_embedding_functions, register_embedding_function

    if CHROMA_EF_NAME not in known_embedding_functions:
        class HashEmbeddingFunction(EmbeddingFunction[Documents]):
            def __init__(self, dim: int = 64) -> None:
                self.dim = dim

            def __call__(self, input: Documents) -> Embeddings:
                import numpy as np

                return [np.array(embed(text, self.dim), dtype=np.float32) for text in input]

            @staticmethod
            def name() -> str:
                return CHROMA_EF_NAME

            def default_space(self):
                return "cosine"

            def get_config(self) -> dict:
                return {"dim": self.dim}

            @staticmethod
            def build_from_config(config: dict) -> "HashEmbeddingFunction":
                return HashEmbeddingFunction(int(config.get("dim", 64)))

        register_embedding_function(HashEmbeddingFunction)
    return known_embedding_functions[CHROMA_EF_NAME](dim)


OUTSIDE: list[str] = []  # what forbid_network() stopped, for the snippet to report
_LOOPBACK = ("127.", "::1", "localhost")


def forbid_network() -> None:
    """From now on this process reaches loopback only: a name lookup or connect to anything else is
    recorded in :data:`OUTSIDE` and fails with ``OSError`` (an audit hook: it cannot be removed)."""
    import sys

    def hook(event: str, args: tuple) -> None:
        target = None
        if event == "socket.getaddrinfo":
            target = args[0]
        elif event == "socket.connect" and isinstance(args[1], tuple):
            target = args[1][0]
        elif event == "socket.gethostbyname":
            target = args[0]
        if target is None or (isinstance(target, bytes) and target.startswith(b"127.")):
            return
        host = target.decode() if isinstance(target, bytes) else str(target)
        if not host.startswith(_LOOPBACK):
            OUTSIDE.append(f"{event} {host}")
            raise OSError(f"tests reach no network: {event} {host}")

    sys.addaudithook(hook)
