"""The supervisor's HTTP API for the Agents page (SupervisorAgents). The supervisor wants its own
signed service token on every call (HS256 JSON Web Token, scopes trigger/operate/read), made here from
this host's supervisor secret as `kronii agents` makes it, and sent only to a server that first proves
it holds the same secret (GET /v1/identity, bound to the port dialled): a token never goes to a server
that is not this host's supervisor. The console signs as `console:<person>`, so the supervisor's own
audit rows name the console. Refusals keep the supervisor's sentence; silence is ServiceNotAnswering."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from kronii.console.core.agents import Runtime, Trigger, TriggerAsk
from kronii.console.ports import ServiceNotAnswering
from kronii.foundation.errors import (
    FailedPrecondition,
    InvalidArgument,
    KroniiError,
    NotFound,
    PermissionDenied,
)

__all__ = ["SupervisorApi", "runtime_of", "supervisor_secret", "trigger_of"]

SERVICE = "supervisor"
SUBJECT = "console:person"
SCOPES = ("operate", "read", "trigger")
TOKEN_TTL_SECS = 600.0
# A trigger answers once its outcome is known: typed, confirmed, or deferred (up to ~30 s).
TRIGGER_TIMEOUT_SECS = 90.0
_IDENTITY_CONTEXT = b"kronii-supervisor-identity:"
_REFUSALS: dict[int, type[KroniiError]] = {
    400: InvalidArgument,
    403: PermissionDenied,
    404: NotFound,
    409: FailedPrecondition,
    422: InvalidArgument,
}


def supervisor_secret(data_dir: Path, environ: dict[str, str] | None = None) -> bytes | None:
    """This host's supervisor secret: KRONII_SUPERVISOR_TOKEN_SECRET, else the key file the
    supervisor keeps in its data directory; None before the supervisor ever ran here."""
    env = os.environ if environ is None else environ
    given = env.get("KRONII_SUPERVISOR_TOKEN_SECRET", "")
    if given:
        return given.encode()
    path = Path(data_dir) / "supervisor" / "token.key"
    try:
        return path.read_bytes().strip() or None
    except OSError:
        return None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _token(secret: bytes, now: float) -> str:
    """The supervisor's service token (its core.tokens: HS256 over a key derived from the secret)."""
    key = hmac.new(secret, b"service-token", hashlib.sha256).digest()
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"sub": SUBJECT, "scopes": list(SCOPES), "workspaces": ["*"], "iat": int(now),
              "exp": int(now + TOKEN_TTL_SECS)}  # fmt: skip
    body = _b64(json.dumps(claims, separators=(",", ":")).encode())
    signature = hmac.new(key, f"{header}.{body}".encode("ascii"), hashlib.sha256).digest()
    return f"{header}.{body}.{_b64(signature)}"


def _proof(secret: bytes, nonce: str, port: int) -> str:
    key = hmac.new(secret, b"identity", hashlib.sha256).digest()
    return hmac.new(key, _IDENTITY_CONTEXT + f"{nonce}:{port}".encode("ascii"), hashlib.sha256).hexdigest()


def _epoch(stamp: Any) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def runtime_of(data: dict[str, Any]) -> Runtime:
    return Runtime(
        runtime_id=str(data.get("runtime_id", "")),
        agent_id=str(data.get("agent_id", "")),
        workspace_id=str(data.get("workspace_id", "")),
        kind=str(data.get("kind", "")),
        role=str(data.get("role", "")),
        status=str(data.get("status", "")),
        agent_state=str(data.get("agent_state", "")),
        paused=bool(data.get("paused", False)),
        operator_busy=bool(data.get("operator_busy", False)),
        cwd=str(data.get("cwd", "")),
        offline_reason=str(data.get("offline_reason", "")),
        last_activity_at=_epoch(data.get("last_activity_at")),
    )


def trigger_of(data: dict[str, Any]) -> Trigger:
    return Trigger(
        trigger_id=str(data.get("trigger_id", "")),
        agent_id=str(data.get("agent_id", "")),
        workspace_id=str(data.get("workspace_id", "")),
        result=str(data.get("result", "")),
        runtime_id=str(data.get("runtime_id", "")),
        thread_id=str(data.get("thread_id", "")),
        error_code=str(data.get("error_code", "")),
        detail=str(data.get("detail", "")),
        delivery_backend=str(data.get("delivery_backend", "")),
        fallback_chain=tuple(str(step) for step in data.get("fallback_chain", []) or []),
        acked_by=str(data.get("acked_by", "")),
        delivered_at=_epoch(data.get("delivered_at")),
        deferred_until=_epoch(data.get("deferred_until")),
        created_at=_epoch(data.get("created_at")),
        updated_at=_epoch(data.get("updated_at")),
    )


class SupervisorApi:
    """One pooled client; the identity is proven once per client (again after a failed proof)."""

    def __init__(
        self, base_url: str, secret: bytes | Callable[[], bytes | None] | None, *, timeout_secs: float
    ) -> None:
        # The supervisor's token is also what the mesh's access check takes from a caller it cannot
        # place (docs/api.md), so no mesh token rides along.
        self._url = base_url.rstrip("/")
        # The secret may not exist yet when the console starts beside a supervisor that has never run
        # here (it writes its key file at its first start): then it is looked for at each call.
        self._secret: bytes | None = secret if isinstance(secret, bytes) else None
        self._find_secret = secret if callable(secret) else None
        self._proven = False
        headers = {"accept": "application/json"}
        self._client = httpx.AsyncClient(base_url=self._url, headers=headers, timeout=timeout_secs)

    async def runtimes(self) -> list[Runtime]:
        body = await self._call("GET", "/v1/runtimes", params={"include_offline": "true"})
        return [runtime_of(item) for item in body.get("runtimes", [])]

    async def triggers(self, *, result: str = "", limit: int = 50) -> list[Trigger]:
        params: dict[str, Any] = {"limit": limit}
        if result:
            params["result"] = result
        body = await self._call("GET", "/v1/triggers", params=params)
        return [trigger_of(item) for item in body.get("triggers", [])]

    async def pane(self, runtime_id: str, lines: int) -> list[str]:
        body = await self._call("GET", f"/v1/runtimes/{runtime_id}/logs", params={"lines": lines})
        return [str(line) for line in body.get("lines", [])]

    async def trigger(self, ask: TriggerAsk) -> Trigger:
        body = {"trigger_id": ask.trigger_id, "workspace_id": ask.workspace_id, "agent_id": ask.agent_id,
                "prompt": ask.prompt, "reason": ask.reason}  # fmt: skip
        return trigger_of(await self._call("POST", "/v1/triggers", json=body, timeout=TRIGGER_TIMEOUT_SECS))

    async def set_paused(self, runtime_id: str, paused: bool, reason: str) -> Runtime:
        verb = "pause" if paused else "resume"
        return runtime_of(
            await self._call("POST", f"/v1/runtimes/{runtime_id}/{verb}", json={"reason": reason})
        )

    async def force(self, trigger_id: str, reason: str) -> Trigger:
        body = await self._call(
            "POST", f"/v1/triggers/{trigger_id}/force", json={"reason": reason}, timeout=TRIGGER_TIMEOUT_SECS
        )
        return trigger_of(body)

    async def close(self) -> None:
        await self._client.aclose()

    async def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        headers = {"authorization": f"Bearer {await self._bearer()}"}
        try:
            response = await self._client.request(method, path, headers=headers, **kwargs)
        except httpx.TimeoutException:
            raise ServiceNotAnswering(SERVICE, "it did not answer in time") from None
        except httpx.HTTPError:
            raise ServiceNotAnswering(SERVICE, "it cannot be reached (is `kronii up` running it?)") from None
        body = _json(response)
        if response.status_code >= 400:
            detail = (
                body.get("detail") if isinstance(body.get("detail"), str) else f"HTTP {response.status_code}"
            )
            refusal = _REFUSALS.get(response.status_code)
            if refusal is not None:
                raise refusal(f"the supervisor refused: {detail}")
            raise ServiceNotAnswering(SERVICE, str(detail), status=response.status_code)
        return body

    async def _bearer(self) -> str:
        if self._secret is None and self._find_secret is not None:
            self._secret = self._find_secret()
        if self._secret is None:
            raise ServiceNotAnswering(
                SERVICE, "it has not run on this host yet (no token secret): start it with `kronii up`"
            )
        if not self._proven:
            await self._prove_identity(self._secret)
        return _token(self._secret, time.time())

    async def _prove_identity(self, secret: bytes) -> None:
        nonce = secrets.token_hex(16)
        try:
            response = await self._client.get("/v1/identity", params={"nonce": nonce})
        except httpx.HTTPError:
            raise ServiceNotAnswering(SERVICE, "it cannot be reached (is `kronii up` running it?)") from None
        body = _json(response)
        port = urlsplit(self._url).port or 80
        proof = body.get("proof")
        if not (
            response.status_code == 200
            and isinstance(proof, str)
            and hmac.compare_digest(proof.lower(), _proof(secret, nonce, port))
        ):
            raise ServiceNotAnswering(
                SERVICE, f"the server at {self._url} is not this host's supervisor (its identity proof does "
                "not match the local secret); no token was sent to it",
            )  # fmt: skip
        self._proven = True


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
