"""A small fake of the critic's HTTP API for the command-line tests (test_critic_cli.py): canned
records, hits and doctor report in the API's proto JSON, each request kept, and export's JSON lines
streamed chunked as the critic sends them."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

__all__ = ["DOCTOR", "NEW", "NEW_AT", "OLD", "OLD_AT", "FakeCritic", "Seen", "handler"]

OLD_AT = "2025-10-01T07:00:00Z"
NEW_AT = (datetime.now(UTC) - timedelta(minutes=5)).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def record(record_id: str, at: str, line: str, status: int) -> dict[str, Any]:
    """A record as the critic's API sends it (proto JSON)."""
    return {"record_id": record_id, "timestamp": at, "trigger": "error" if status else "ok",
            "command_name": line.split()[0], "command_line": line, "cwd": "/home/ana/app", "exit_status": status,
            "duration_ms": 900, "shell": "bash", "session": "s-1", "error_type": "", "error_message": "",
            "summary": "", "redactions": 0, "embedding": []}  # fmt: skip


OLD = record("r-old", OLD_AT, "make test", 2)
NEW = record("r-new", NEW_AT, "make test TOKEN=<SECRET>", 2)
DOCTOR = {
    "hooks": [{"shell": "bash", "events": "42", "last_seen": NEW_AT}, {"shell": "zsh", "events": "0"}],
    "spool": {"path": "/run/user/1000/kronii/critic/spool", "ok": True, "problem": "", "pending": "0"},
    "hints": {"path": "/run/user/1000/kronii/critic", "ok": True, "problem": "", "pending": "1"},
    "model": {"available": True, "name": "all-MiniLM-L6-v2 int8", "sha256": "ab" * 32, "problem": ""},
    "records": {"ram": "200", "files": "1500", "database": "98765", "redactions": "7"},
    "embeddings": {
        "depth": 1,
        "capacity": 256,
        "dropped": "3",
        "latency_p50_ms": 4.5,
        "latency_p95_ms": 9.25,
    },
    "mute": {"muted": False},
    "problems": [],
}


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    body: Any


@dataclass
class FakeCritic:
    """The critic's HTTP API with canned answers; ``refuse`` answers a path with a status and body."""

    seen: list[Seen] = field(default_factory=list)
    refuse: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    doctor: dict[str, Any] = field(default_factory=lambda: json.loads(json.dumps(DOCTOR)))
    silent: bool = False  # accept, read, never answer

    def answer(self, seen: Seen) -> tuple[int, Any]:
        if seen.path in self.refuse:
            return self.refuse[seen.path]
        hits = [{"record": NEW, "similarity": 0.912345678, "score": 1.2, "tier": "ram"},
                {"record": OLD, "similarity": 0.5, "score": 0.6, "tier": "disk"}]  # fmt: skip
        if (seen.method, seen.path) == ("POST", "/v1/critic/search"):
            return 200, {"hits": hits if seen.body["text"] != "nothing" else []}
        routes: dict[tuple[str, str], Any] = {
            ("POST", "/v1/critic/similar"): {"anchor": NEW, "hits": hits[1:]},
            ("GET", "/v1/critic/doctor"): self.doctor,
            ("POST", "/v1/critic/events"): {"recorded": True, "record": NEW, "hint": ""},
        }
        if (seen.method, seen.path) == ("POST", "/v1/critic/mute"):
            seconds = seen.body["seconds"]
            until = (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")
            return 200, ({"muted": True, "until": until} if seconds else {"muted": False})
        if (seen.method, seen.path) in routes:
            return 200, routes[(seen.method, seen.path)]
        return 404, {"detail": "no such route"}


def handler(fake: FakeCritic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            parts = urlsplit(self.path)
            seen = Seen(self.command, parts.path, dict(parse_qsl(parts.query)), body)
            fake.seen.append(seen)
            if fake.silent:
                time.sleep(3)
                return
            if parts.path == "/v1/critic/export" and parts.path not in fake.refuse:
                self._export()
                return
            status, answer = fake.answer(seen)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _export(self) -> None:
            """JSON lines, chunked, as the critic streams them."""
            self.send_response(200)
            self.send_header("content-type", "application/x-ndjson")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for kept in (OLD, NEW):
                line = (json.dumps(kept) + "\n").encode()
                self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")

        do_GET = do_POST = _serve

        def log_message(self, *args: Any) -> None:
            pass

    return Handler
