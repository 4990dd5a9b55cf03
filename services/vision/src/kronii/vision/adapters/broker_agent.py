"""The input broker, as the vision engine's agent client: signed in with the engine's Ed25519 key, a
lease, safe points between steps, and input under the lease, over the broker's loopback HTTP API.

Blocking standard-library HTTP (kronii.common.local_http) run in a worker thread, so the event loop
never waits on the broker. A refusal of any kind (not registered, nobody granted, the person took
the desktop back, the broker down) is LeaseRefused with the broker's own sentence."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kronii.common.local_http import JsonClient
from kronii.vision.adapters.capture_frames import load_private_key
from kronii.vision.ports import LeaseRefused

__all__ = ["BrokerAgent"]

_SIGN_IN_PREFIX = "/v1/broker/agents/"


def _detail(body: Any, text: str) -> str:
    if isinstance(body, Mapping) and body.get("detail"):
        return str(body["detail"])
    return text.strip()[:200] or "no reason given"


class BrokerAgent:
    def __init__(self, url: str, client_id: str, key_path: Path, *, timeout: float = 5.0) -> None:
        self._url = url.rstrip("/")
        self._client_id = client_id
        self._key_path = key_path
        self._http = JsonClient(self._url, timeout)
        self._epoch: int | None = None

    def _call(self, method: str, path: str, body: Mapping[str, object] | None = None) -> dict[str, Any]:
        try:
            answer = self._http.request(method, path, json=body)
        except OSError as error:
            raise LeaseRefused(
                f"the input broker at {self._url} did not answer ({error.strerror or error}): start it with "
                "`kronii up`"
            ) from None
        if answer.status == 401 and not path.startswith(_SIGN_IN_PREFIX):
            self._sign_in()
            answer = self._http.request(method, path, json=body)
        if answer.status >= 400:
            raise LeaseRefused(f"{_detail(answer.body, answer.text)} (HTTP {answer.status})")
        return answer.body if isinstance(answer.body, dict) else {}

    def _sign_in(self) -> None:
        try:
            key = load_private_key(self._key_path)
        except (OSError, ValueError) as error:
            raise LeaseRefused(f"the vision engine's key {self._key_path} cannot be read: {error}") from None
        self._http.headers.pop("authorization", None)
        challenge = self._call("POST", f"{_SIGN_IN_PREFIX}challenge", {"client_id": self._client_id})
        nonce = base64.b64decode(str(challenge.get("nonce", "")))
        signature = base64.b64encode(key.sign(nonce)).decode("ascii")
        proof = {
            "challenge_id": challenge.get("challenge_id"),
            "client_id": self._client_id,
            "signature": signature,
        }
        try:
            answer = self._call("POST", f"{_SIGN_IN_PREFIX}sign-in", proof)
        except LeaseRefused as refused:
            if "(HTTP 401)" not in str(refused):
                raise
            raise LeaseRefused(
                f"the input broker does not accept the vision engine's key ({refused}): register it once "
                f"as the person at the desktop, `kronii vision setup` prints the command"
            ) from None
        self._http.headers["authorization"] = f"Bearer {answer.get('token', '')}"

    def _ensure_signed_in(self) -> None:
        if "authorization" not in self._http.headers:
            self._sign_in()

    def _lease(self, verb: str, body: Mapping[str, object]) -> None:
        self._ensure_signed_in()
        state = self._call("POST", f"/sessions/current/control/{verb}", body)
        self._epoch = int(state.get("epoch") or 0) if verb != "release" else None

    def _input(self, body: dict[str, object]) -> None:
        self._ensure_signed_in()
        if self._epoch is not None:
            body["epoch"] = self._epoch
        answer = self._call("POST", "/sessions/current/agent/input", body)
        if not answer.get("injected"):
            raise LeaseRefused(f"the broker dropped the input ({answer.get('dropped') or 'no reason'})")

    def _safe_point(self, step: str, sequence: int) -> str:
        self._ensure_signed_in()
        answer = self._call(
            "POST", "/sessions/current/agent/safe_point", {"step": step, "sequence": sequence}
        )
        action = str(answer.get("action", "STOP"))
        state = answer.get("state")
        intent = state.get("user_intent") if isinstance(state, dict) else None
        if action == "STOP" and intent != "STOP_NOW":
            return "TAKEN_BACK"  # the person's own input ended the lease: not a STOP they asked for
        return action

    async def acquire(self, lease_seconds: int) -> None:
        await asyncio.to_thread(self._lease, "acquire", {"lease_seconds": lease_seconds})

    async def safe_point(self, step: str, sequence: int) -> str:
        return await asyncio.to_thread(self._safe_point, step, sequence)

    async def click(self, x: int, y: int) -> None:
        await asyncio.to_thread(self._input, {"kind": "click", "x": x, "y": y, "button": 1})

    async def type_text(self, text: str) -> None:
        await asyncio.to_thread(self._input, {"kind": "type", "text": text})

    async def release(self) -> None:
        await asyncio.to_thread(self._lease, "release", {})
