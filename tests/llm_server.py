"""A real OpenAI-compatible chat completions server for tests: it listens on a free loopback port,
streams recorded replies chunk by chunk (as llama.cpp does, a token or two per chunk) at a
chosen pace, and records what each request asked and whether the client hung up before the
reply was over (the way a cancelled call stops a real server generating).

Replies are scripted per role (the request's `response_format` names it, or the system prompt
does) and taken in order; the last one repeats. A reply may be refused with a status instead,
for the response-format negotiation."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LlmServer", "Reply", "Served"]


@dataclass(frozen=True)
class Reply:
    """One recorded answer: its text, streamed in pieces of `chunk` characters every `pace_s`."""

    text: str
    pace_s: float = 0.0
    chunk: int = 3
    finish_reason: str = "stop"
    # Refuse this response_format kind ("json_schema", ...) with this status before answering.
    refuse_format: str | None = None
    refuse_status: int = 500


@dataclass
class Served:
    """What the server saw of one request."""

    body: dict[str, Any]
    role: str
    chunks_sent: int = 0
    chunks_total: int = 0
    hung_up: bool = False
    finished: bool = False
    started: float = field(default_factory=time.monotonic)
    ended: float = 0.0


_PROMPT_WORDS = {
    "extractor": "extract facts",
    "synthesizer": "suggestions worth",
    "planner": "whether the best candidate",
    "notifier": "desktop notification",
}


class LlmServer:
    def __init__(self, replies: dict[str, list[Reply]]) -> None:
        self.replies = {role: list(items) for role, items in replies.items()}
        self.served: list[Served] = []
        self._server: asyncio.Server | None = None
        self.port = 0
        self.refused_formats: list[str] = []
        self.model_checks = 0  # GET /v1/models: readiness checks, not calls (never in `served`)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> LlmServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    def _next(self, role: str) -> Reply:
        queue = self.replies.get(role) or self.replies.get("*") or [Reply('{"fragments": []}')]
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def _role(self, body: dict[str, Any]) -> str:
        response_format = body.get("response_format") or {}
        named = (response_format.get("json_schema") or {}).get("name")
        if named:
            return str(named)
        system = next(
            (m.get("content", "") for m in body.get("messages", []) if m.get("role") == "system"), ""
        ).lower()
        return next((role for role, words in _PROMPT_WORDS.items() if words in system), "*")

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            if head.startswith(b"GET "):  # GET /v1/models, as a service's readiness asks: not a call
                await self._models(writer)
                return
            length = 0
            for line in head.decode().split("\r\n"):
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            body = json.loads(await reader.readexactly(length)) if length else {}
            await self._answer(body, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _models(self, writer: asyncio.StreamWriter) -> None:
        self.model_checks += 1
        body = json.dumps({"object": "list", "data": [{"id": "test-model", "object": "model"}]}).encode()
        head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
        writer.write(head.encode() + body)
        await writer.drain()

    async def _answer(
        self, body: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        role = self._role(body)
        reply = self._next(role)
        kind = (body.get("response_format") or {}).get("type", "none")
        if reply.refuse_format is not None and kind == reply.refuse_format:
            self.refused_formats.append(kind)
            # Put the reply back: the client asks again with another format.
            self.replies.setdefault(role, []).insert(
                0, Reply(reply.text, reply.pace_s, reply.chunk, reply.finish_reason)
            )
            error = json.dumps({"error": {"message": f"unsupported response_format {kind}"}}).encode()
            writer.write(
                f"HTTP/1.1 {reply.refuse_status} Error\r\ncontent-type: application/json\r\n"
                f"content-length: {len(error)}\r\nconnection: close\r\n\r\n".encode()
                + error
            )
            await writer.drain()
            return
        served = Served(body, role)
        self.served.append(served)
        pieces = [reply.text[i : i + reply.chunk] for i in range(0, len(reply.text), reply.chunk)] or [""]
        served.chunks_total = len(pieces)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
            b"connection: close\r\n\r\n"
        )
        try:
            for index, piece in enumerate(pieces):
                if reply.pace_s:
                    await asyncio.sleep(reply.pace_s)
                if reader.at_eof():
                    raise ConnectionResetError
                last = index == len(pieces) - 1
                chunk = {
                    "object": "chat.completion.chunk",
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"content": piece},
                            "finish_reason": reply.finish_reason if last else None,
                        }
                    ],
                }
                writer.write(f"data: {json.dumps(chunk)}\n\n".encode())
                await writer.drain()
                served.chunks_sent += 1
            writer.write(b"data: [DONE]\n\n")
            await writer.drain()
            served.finished = True
        except ConnectionError:
            served.hung_up = True
        finally:
            served.ended = time.monotonic()
