"""An agent's client of the input broker: sign in with a registered Ed25519 key, hold a lease, report
safe points and send input, over the broker's loopback HTTP API. In the shared library because agents
live in other services too (the vision engine signs in as one), and no service imports another.

Standard library only (plus `cryptography`, imported when a key is actually loaded): the xdotool
shim builds one of these per command, so importing this module must stay cheap. Every failure, the
broker's refusals and a broker that does not answer alike, is a BrokerError carrying the broker's
code and sentence. The user's routes (grant, user_intent) are deliberately absent: an agent never
calls them.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from kronii.agents import keys as agent_keys
from kronii.crypto.errors import KeyFileError
from kronii.desktop.input_actions import InputAction, parse_action
from kronii.foundation.errors import KroniiError
from kronii.launcher.local_http import JsonClient

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = [
    "BAD_KEY",
    "DEFAULT_URL",
    "UNREACHABLE",
    "BrokerClient",
    "BrokerError",
    "InputResult",
    "SafePointDecision",
    "SessionState",
    "SignIn",
    "load_private_key",
]

DEFAULT_URL = "http://127.0.0.1:8106"
# The code of a BrokerError raised when nothing answered (no HTTP status at all).
UNREACHABLE = "unreachable"
BAD_KEY = "bad_key_file"


class BrokerError(Exception):
    """The broker refused (``status`` is its 4xx/5xx, ``code`` its error code), did not answer
    (``code`` UNREACHABLE, ``status`` 0), or the key could not be used (``code`` BAD_KEY).
    ``str()`` is the sentence to show."""

    def __init__(self, code: str, message: str, *, status: int = 0, field: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.field = field


@dataclass(frozen=True)
class SessionState:
    """The broker's control state of one desktop session, as it sent it."""

    session_id: str
    interactive: bool
    control_mode: str
    lease_expiry: str | None
    user_intent: str
    agent_status: str
    epoch: int
    holder: str
    window: int = 0
    interactive_reason: str = ""

    def held_by(self, client_id: str) -> bool:
        """Whether ``client_id`` holds a lease (the broker answers with no expiry once it has lapsed)."""
        return self.control_mode == "AGENT" and self.holder == client_id and bool(self.lease_expiry)

    @classmethod
    def from_json(cls, body: Any) -> SessionState:
        if not isinstance(body, dict):
            raise BrokerError("bad_answer", "the broker answered with something that is not a session state")
        try:
            return cls(
                session_id=str(body["session_id"]),
                interactive=bool(body.get("interactive", False)),
                control_mode=str(body.get("control_mode", "USER")),
                lease_expiry=body.get("lease_expiry") or None,
                user_intent=str(body.get("user_intent", "WAIT")),
                agent_status=str(body.get("agent_status", "IDLE")),
                epoch=int(body.get("epoch", 0)),
                holder=str(body.get("holder") or ""),
                window=int(body.get("window") or 0),
                interactive_reason=str(body.get("interactive_reason") or ""),
            )
        except (KeyError, TypeError, ValueError):
            raise BrokerError("bad_answer", "the broker's session state is missing a field") from None


@dataclass(frozen=True)
class InputResult:
    injected: bool
    dropped: str  # "" when injected, else the broker's reason ("user_control", "no_lease", ...)
    epoch: int


@dataclass(frozen=True)
class SafePointDecision:
    action: str  # "CONTINUE" | "PAUSE" | "STOP"
    state: SessionState


@dataclass(frozen=True)
class SignIn:
    token: str
    expires_at: str  # ISO 8601, as the broker sent it


def load_private_key(path: str | os.PathLike[str]) -> Ed25519PrivateKey:
    """An Ed25519 private key from a file only its owner can read (kronii.agents.keys)."""
    try:
        return agent_keys.load_private_key(path)
    except KeyFileError as error:
        raise BrokerError(BAD_KEY, str(error)) from None


def private_key_from_bytes(data: bytes) -> Ed25519PrivateKey:
    try:
        return agent_keys.private_key_from_bytes(data)
    except KeyFileError as error:
        raise BrokerError(BAD_KEY, str(error)) from None


class BrokerClient:
    """Calls on one desktop session (``session``, default the broker's own desktop, "current").

    ``epoch``, once a lease is held, goes with every input so the broker drops input sent under a
    lease that has since been revoked; ``on_input`` sees every input result (the step runner
    cancels its token there)."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        session: str = "current",
        token: str = "",
        timeout: float = 5.0,
    ) -> None:
        self.url = url.rstrip("/")
        self.session = session
        self.client_id = ""
        self.epoch: int | None = None
        self.on_input: Callable[[InputResult], None] | None = None
        self.before_input: Callable[[], None] | None = None
        self._http = JsonClient(self.url, timeout)
        if token:
            self.use_token(token)

    def use_token(self, token: str, client_id: str = "") -> None:
        self._http.headers["authorization"] = f"Bearer {token}"
        if client_id:
            self.client_id = client_id

    # -- sign-in ---------------------------------------------------------------------------------

    def sign_in(self, client_id: str, key: Ed25519PrivateKey | str | os.PathLike[str]) -> SignIn:
        """Prove ``client_id`` with its private key (or key file); later calls carry the session token."""
        private_key = key if not isinstance(key, str | os.PathLike) else load_private_key(key)
        challenge = self._call("POST", "/v1/broker/agents/challenge", {"client_id": client_id})
        try:
            challenge_id = str(challenge["challenge_id"])
            nonce = base64.b64decode(str(challenge["nonce"]), validate=True)
        except (KeyError, TypeError, ValueError):
            raise BrokerError("bad_answer", "the broker's challenge is missing its id or nonce") from None
        signature = base64.b64encode(private_key.sign(nonce)).decode("ascii")
        body = {"challenge_id": challenge_id, "client_id": client_id, "signature": signature}
        answer = self._call("POST", "/v1/broker/agents/sign-in", body)
        if not isinstance(answer.get("token"), str) or not answer["token"]:
            raise BrokerError("bad_answer", "the broker's sign-in answer has no token")
        self.use_token(answer["token"], client_id)
        return SignIn(answer["token"], str(answer.get("expires_at") or ""))

    # -- state and lease -------------------------------------------------------------------------

    def sessions(self) -> list[SessionState]:
        answer = self._call("GET", "/sessions")
        return [SessionState.from_json(item) for item in answer.get("sessions") or []]

    def state(self) -> SessionState:
        return SessionState.from_json(self._call("GET", self._session_path("")))

    def acquire(self, lease_seconds: int) -> SessionState:
        """Take a lease; the broker allows it only on a session nobody is watching (by its policy)."""
        return self._lease("acquire", {"lease_seconds": lease_seconds})

    def renew(self, lease_seconds: int) -> SessionState:
        return self._lease("renew", {"lease_seconds": lease_seconds})

    def release(self) -> SessionState:
        state = self._lease("release", {})
        self.epoch = None
        return state

    def safe_point(self, step: str, sequence: int) -> SafePointDecision:
        answer = self._call(
            "POST", self._session_path("/agent/safe_point"), {"step": step, "sequence": sequence}
        )
        action = answer.get("action")
        if action not in ("CONTINUE", "PAUSE", "STOP"):
            raise BrokerError("bad_answer", f"the broker answered the safe point with {action!r}")
        return SafePointDecision(str(action), SessionState.from_json(answer.get("state")))

    # -- input -----------------------------------------------------------------------------------

    def key(self, keys: str) -> InputResult:
        return self.send({"kind": "key", "keys": keys})

    def type_text(self, text: str) -> InputResult:
        return self.send({"kind": "type", "text": text})

    def click(self, x: int, y: int, button: int = 1) -> InputResult:
        return self.send({"kind": "click", "x": x, "y": y, "button": button})

    def move(self, x: int, y: int) -> InputResult:
        return self.send({"kind": "move", "x": x, "y": y})

    def scroll(self, dx: int, dy: int) -> InputResult:
        return self.send({"kind": "scroll", "dx": dx, "dy": dy})

    def send(self, body: dict[str, object]) -> InputResult:
        """One input action, checked here first with the broker's own rules so a malformed one
        fails with the same sentence without a round trip."""
        action = _checked(body)
        if self.before_input is not None:
            self.before_input()
        payload = _action_body(action)
        if self.epoch is not None:
            payload["epoch"] = self.epoch
        answer = self._call("POST", self._session_path("/agent/input"), payload)
        result = InputResult(
            injected=bool(answer.get("injected")),
            dropped=str(answer.get("dropped") or ""),
            epoch=int(answer.get("epoch") or 0),
        )
        if self.on_input is not None:
            self.on_input(result)
        return result

    # -- plumbing --------------------------------------------------------------------------------

    def _lease(self, verb: str, body: dict[str, object]) -> SessionState:
        state = SessionState.from_json(self._call("POST", self._session_path(f"/control/{verb}"), body))
        if state.held_by(self.client_id) or (not self.client_id and state.control_mode == "AGENT"):
            self.epoch = state.epoch
        return state

    def _session_path(self, tail: str) -> str:
        return f"/sessions/{quote(self.session, safe='')}{tail}"

    def _call(self, method: str, path: str, body: Mapping[str, object] | None = None) -> dict[str, Any]:
        try:
            answer = self._http.request(method, path, json=body)
        except OSError as error:
            reason = error.strerror or str(error) or type(error).__name__
            raise BrokerError(
                UNREACHABLE, f"the input broker at {self.url} did not answer ({reason})"
            ) from None
        if answer.status >= 400:
            raise _refusal(answer.status, answer.body, answer.text)
        if not isinstance(answer.body, dict):
            raise BrokerError("bad_answer", f"the broker answered {path} with something that is not JSON")
        return answer.body


def _checked(body: dict[str, object]) -> InputAction:
    try:
        return parse_action(body)
    except KroniiError as error:
        raise BrokerError(error.code, error.message, field=error.field) from None


def _action_body(action: InputAction) -> dict[str, object]:
    if action.kind == "key":
        return {"kind": "key", "keys": action.keys}
    if action.kind == "type":
        return {"kind": "type", "text": action.text}
    if action.kind == "scroll":
        return {"kind": "scroll", "dx": action.dx, "dy": action.dy}
    if action.kind == "move":
        return {"kind": "move", "x": action.x, "y": action.y}
    return {"kind": "click", "x": action.x, "y": action.y, "button": action.button}


# Every kronii service answers an error with {"detail": sentence, "field": ...}; the status says which.
_CODES = {
    400: "invalid_argument",
    401: "unauthenticated",
    403: "permission_denied",
    404: "not_found",
    409: "failed_precondition",
    422: "unprocessable",
    429: "resource_exhausted",
    503: "unavailable",
}


def _refusal(status: int, body: Any, text: str) -> BrokerError:
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        return BrokerError(
            _CODES.get(status, "error"),
            body["detail"],
            status=status,
            field=str(body.get("field") or ""),
        )
    return BrokerError("error", f"the broker answered HTTP {status}: {text[:120].strip()}", status=status)
