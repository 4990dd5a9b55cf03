"""`kronii control` and `kronii broker` on click, against a small fake of the broker's HTTP API served on
a Unix socket and on loopback TCP: the person's calls (grant, renew, wait) go only through the socket
with the TTY binding; stop and interrupt fall back to TCP; refusals and a silent broker become the
shared exit codes with the broker's sentence; local times for a person and UTC in --json; the agents'
keys (add, list, revoke, keygen) on a stand-in registry; the audit and the xdotool shadow; completion;
and modules that import nothing heavy."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import socketserver
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.shell_completion import BashComplete
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from kronii.broker.cli import broker as broker_cli
from kronii.broker.cli import control as control_cli
from kronii.common.cli import exits
from kronii.common.cli.agent_clients import AgentClients
from kronii.common.cli.exits import CommandError
from kronii.common.client_sessions import ClientRecord

AGENT = "codex-main"
STATE_KEYS = {
    "session_id", "interactive", "interactive_reason", "control_mode", "holder", "lease_expiry", "window",
    "user_intent", "agent_status", "epoch", "user_holds_until",
}  # fmt: skip


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeBroker:
    """One session's state as the broker's HTTP API shows it (proto JSON: 64-bit numbers as strings,
    unset timestamps absent); ``refuse`` answers a path with a status and body instead."""

    state: dict[str, Any] = field(
        default_factory=lambda: {
            "session_id": "desk-1", "interactive": True, "interactive_reason": "viewer", "control_mode": "USER",
            "holder": "", "window": "0", "user_intent": "WAIT", "agent_status": "IDLE", "epoch": "3",
        }  # fmt: skip
    )
    seen: list[Seen] = field(default_factory=list)
    refuse: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if path in self.refuse:
            return self.refuse[path]
        if method == "GET" and path == "/sessions/current":
            return 200, self.state
        if path == "/sessions/current/control/grant":
            expiry = datetime.now(UTC) + timedelta(seconds=body.get("lease_seconds") or 30)
            self.state.update(control_mode="AGENT", holder=body["agent"], window=str(body["window"]),
                              lease_expiry=expiry.isoformat().replace("+00:00", "Z"), agent_status="RUNNING",
                              epoch=str(int(self.state["epoch"]) + 1))  # fmt: skip
            return 200, self.state
        if path == "/sessions/current/user_intent":
            self.state["user_intent"] = body["intent"]
            if body["intent"] == "STOP_NOW":
                self.state.update(control_mode="USER", holder="", agent_status="STOPPED")
                self.state.pop("lease_expiry", None)
            return 200, self.state
        return 404, {"detail": "no such route"}


def _handler(fake: FakeBroker) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            fake.seen.append(Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            status, answer = fake.answer(self.command, self.path, body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _serve

        def log_message(self, *args: Any) -> None:  # a Unix peer has no address to log
            pass

    return Handler


class _UnixHTTPServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True


@contextmanager_fixture := None  # placeholder removed below
