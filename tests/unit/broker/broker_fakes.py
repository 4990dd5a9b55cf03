"""A small in-process stand-in for the broker's agent HTTP API (http.server in a thread), for the
client, step runner and xdotool shim tests: Ed25519 sign-in, one session's control state, leases
that the test can revoke or grant mid-run, scripted safe point answers and scripted input drops."""

from __future__ import annotations

import base64
import json
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

AGENT = "codex-main"


def new_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def write_pem_key(path: Path, key: Ed25519PrivateKey, mode: int = 0o600) -> Path:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    path.chmod(mode)
    return path


@dataclass
class Call:
    method: str
    path: str
    body: dict[str, Any]
    token: str


@dataclass
class FakeBroker:
    """The state of one session ("current"); every field may be changed by the test at any time."""

    interactive: bool = False
    keys: dict[str, Ed25519PublicKey] = field(default_factory=dict)
    control_mode: str = "USER"
    holder: str = ""
    epoch: int = 0
    lease_until: datetime | None = None
    agent_status: str = "IDLE"
    user_intent: str = "WAIT"
    safe_points: list[str] = field(default_factory=list)  # answered in order, then CONTINUE
    drops: list[str] = field(default_factory=list)  # input answered dropped with these, in order
    calls: list[Call] = field(default_factory=list)
    inputs: list[dict[str, Any]] = field(default_factory=list)
    renewals: int = 0
    pause_grants_after: float | None = None  # after a PAUSE, grant again after this many seconds
    lock: threading.RLock = field(default_factory=threading.RLock)
    _challenges: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    _tokens: dict[str, str] = field(default_factory=dict)

    def register(self, client_id: str, key: Ed25519PrivateKey) -> None:
        self.keys[client_id] = key.public_key()

    # -- what the desktop user does, for tests ---------------------------------------------------

    def grant(self, client_id: str = AGENT, seconds: int = 30) -> None:
        with self.lock:
            self.control_mode, self.holder, self.agent_status = "AGENT", client_id, "RUNNING"
            self.epoch += 1
            self.lease_until = datetime.now(UTC) + timedelta(seconds=seconds)

    def revoke(self, status: str = "IDLE") -> None:
        with self.lock:
            self.control_mode, self.holder, self.lease_until, self.agent_status = "USER", "", None, status
            self.epoch += 1

    def state(self) -> dict[str, Any]:
        with self.lock:
            return {
                "session_id": "current-desktop",
                "interactive": self.interactive,
                "control_mode": self.control_mode,
                "lease_expiry": self.lease_until.isoformat() if self.lease_until else None,
                "user_intent": self.user_intent,
                "agent_status": self.agent_status,
                "epoch": self.epoch,
                "holder": self.holder,
                "window": 0,
                "interactive_reason": "viewer" if self.interactive else "",
            }

    def count(self, path: str) -> int:
        return sum(1 for call in self.calls if call.path == path)

    # -- the API -----------------------------------------------------------------------------------

    def handle(self, method: str, path: str, body: dict[str, Any], token: str) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.calls.append(Call(method, path, body, token))
            if path == "/v1/broker/agents/challenge":
                return self._challenge(body)
            if path == "/v1/broker/agents/sign-in":
                return self._sign_in(body)
            caller = self._tokens.get(token)
            if caller is None:
                return _error(
                    401, "unauthenticated", "sign in first: the session token is missing or expired"
                )
            if method == "GET" and path == "/sessions/current":
                return 200, self.state()
            verb = path.removeprefix("/sessions/current/")
            if verb.startswith("control/"):
                return self._lease(verb.removeprefix("control/"), caller, body)
            if verb == "agent/safe_point":
                return self._safe_point()
            if verb == "agent/input":
                return self._input(caller, body)
            return _error(404, "not_found", f"no route {method} {path}")

    def _challenge(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        challenge_id, nonce = secrets.token_hex(8), secrets.token_bytes(32)
        self._challenges[challenge_id] = (str(body.get("client_id")), nonce)
        return 200, {"challenge_id": challenge_id, "nonce": base64.b64encode(nonce).decode()}

    def _sign_in(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        client_id, nonce = self._challenges.pop(str(body.get("challenge_id")), ("", b""))
        key = self.keys.get(client_id)
        if key is None or client_id != body.get("client_id"):
            return _error(401, "unauthenticated", "unknown challenge or client")
        try:
            key.verify(base64.b64decode(body["signature"]), nonce)
        except InvalidSignature:
            return _error(401, "unauthenticated", "the signature does not match the registered key")
        token = secrets.token_hex(16)
        self._tokens[token] = client_id
        return 200, {"token": token, "expires_at": (datetime.now(UTC) + timedelta(minutes=10)).isoformat()}

    def _lease(self, verb: str, caller: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        seconds = int(body.get("lease_seconds", 30))
        if verb == "acquire":
            if self.interactive:
                return _error(409, "failed_precondition", "a person is watching: ask them to grant control")
            self.grant(caller, seconds)
        elif verb == "renew":
            if self.holder != caller:
                return _error(409, "failed_precondition", "no lease to renew: the desktop user has control")
            self.renewals += 1
            self.lease_until = datetime.now(UTC) + timedelta(seconds=seconds)
        elif verb == "release":
            if self.holder != caller:
                return _error(409, "failed_precondition", "no lease to release")
            self.revoke()
        else:
            return _error(404, "not_found", f"no lease verb {verb}")
        return 200, self.state()

    def _safe_point(self) -> tuple[int, dict[str, Any]]:
        action = self.safe_points.pop(0) if self.safe_points else "CONTINUE"
        if action == "STOP":
            self.revoke("STOPPED")
        elif action == "PAUSE":
            self.revoke("PAUSED")  # control returns to the user at the safe point
            if self.pause_grants_after is not None:
                threading.Timer(self.pause_grants_after, self.grant).start()
        return 200, {"action": action, "state": self.state()}

    def _input(self, caller: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.inputs.append(body)
        if self.drops:
            reason = self.drops.pop(0)
        elif self.holder != caller:
            reason = "no_lease"
        elif body.get("epoch") not in (None, 0, self.epoch):
            reason = "stale_epoch"
        else:
            reason = ""
        return 200, {"injected": not reason, "dropped": reason, "epoch": self.epoch}


def _error(status: int, code: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"detail": message, "field": ""}


def _handler(broker: FakeBroker) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}") if length else {}
            token = (self.headers.get("authorization") or "").removeprefix("Bearer ")
            status, answer = broker.handle(method, self.path, body, token)
            payload = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def serve(broker: FakeBroker) -> Iterator[str]:
    """The fake broker's base URL while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(broker))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
