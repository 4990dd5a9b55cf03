"""The input broker's control state and the person's intents for the Control page (InputBroker), over
the console's service clients: what `kronii control status|interrupt|stop|wait` asks. STOP_NOW and
SAFE_INTERRUPT may come from any local process of the person (they only take power away from agents);
WAIT is the desktop user's alone (the broker's socket with a proof of presence), so the broker refuses
it from the console and the page shows its sentence.

A grant (and more time for the agent that holds the desktop) goes as `kronii control grant|renew`
sends it: through the broker's local socket only (the kernel names the caller, the console's own
process; a call over TCP is never the person), with the same TTY binding headers. The console has no
terminal, so the broker's proof of presence for it is polkit's org.kronii.grant-control, whose
authentication agent asks the person on their own screen while the page waits; where polkit does not
run the broker refuses, and the page shows its sentence and the terminal command that works."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import httpx
from kronii.console.core.control import DesktopState
from kronii.console.ports import ServiceNotAnswering
from kronii.edge.presence_rules import SESSION_HEADER, TTY_HEADER
from kronii.foundation.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied

__all__ = [
    "GRANT_TIMEOUT_SECS",
    "BrokerApi",
    "JsonServices",
    "desktop_state",
    "epoch_of",
    "grant_refusal",
]

SERVICE = "broker"
SESSION = "current"
# A grant answers once the person answered polkit's dialog (it waits up to 60 s for them).
GRANT_TIMEOUT_SECS = 90.0


class JsonServices(Protocol):
    """The part of the console's service clients these adapters use (ConsoleDeps.services)."""

    async def get_json(self, service: str, path: str, params: Mapping[str, Any] | None = None) -> Any: ...

    async def post_json(self, service: str, path: str, body: Any = None) -> Any: ...


def epoch_of(stamp: Any) -> float | None:
    """An RFC 3339 time (proto JSON) as epoch seconds; None when unset or not a time."""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _number(value: Any) -> int:
    # Proto JSON sends 64-bit numbers as strings.
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def desktop_state(body: Mapping[str, Any]) -> DesktopState:
    return DesktopState(
        session_id=str(body.get("session_id") or ""),
        control_mode=str(body.get("control_mode") or "USER"),
        holder=str(body.get("holder") or ""),
        lease_expiry=epoch_of(body.get("lease_expiry")),
        window=_number(body.get("window")),
        user_intent=str(body.get("user_intent") or "WAIT"),
        agent_status=str(body.get("agent_status") or "IDLE"),
        interactive=bool(body.get("interactive", False)),
        interactive_reason=str(body.get("interactive_reason") or ""),
        epoch=_number(body.get("epoch")),
        user_holds_until=epoch_of(body.get("user_holds_until")),
    )


def presence_headers() -> dict[str, str]:
    """The TTY binding `kronii control grant` sends (kronii.broker.cli.http): this process's terminal
    on standard input ("" for a service, which has none) and its session."""
    try:
        tty = os.ttyname(0) if os.isatty(0) else ""
    except OSError:
        tty = ""
    return {TTY_HEADER: tty, SESSION_HEADER: str(os.getsid(0))}


def grant_refusal(agent: str, seconds: int, broker_said: str) -> str:
    """Why a grant from the page did not count, and what works."""
    return (
        "the broker gives an agent the desktop only when it can see you are there: where polkit runs, "
        "your desktop asks for your password in polkit's dialog (answer it, then try again if it timed "
        f"out); elsewhere run kronii control grant {agent} --seconds {seconds} in a terminal at the "
        f"desktop (the broker said: {broker_said})"
    )


def _reason(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("detail"):
        return str(body["detail"])
    return f"HTTP {response.status_code}"


def _granted(response: httpx.Response, agent: str, seconds: int) -> DesktopState:
    said = _reason(response)
    status = response.status_code
    if status < 400:
        body = response.json()
        if isinstance(body, dict):
            return desktop_state(body)
        raise ServiceNotAnswering(SERVICE, "its answer was not a control state")
    if status == 403:
        raise PermissionDenied(grant_refusal(agent, seconds, said))
    if status == 400:
        raise InvalidArgument(f"the broker refused: {said}")
    if status == 404:
        raise NotFound(f"the broker refused: {said}")
    if status == 409:
        raise FailedPrecondition(f"the broker refused: {said}")
    raise ServiceNotAnswering(SERVICE, said, status=status)


class BrokerApi:
    def __init__(
        self, services: JsonServices, socket_path: Path, *, timeout_secs: float = GRANT_TIMEOUT_SECS
    ) -> None:
        self._services = services
        self._socket = socket_path
        self._timeout = timeout_secs

    async def state(self) -> DesktopState:
        return desktop_state(await self._services.get_json(SERVICE, f"/sessions/{SESSION}"))

    async def intent(self, intent: str) -> DesktopState:
        body = await self._services.post_json(SERVICE, f"/sessions/{SESSION}/user_intent", {"intent": intent})
        return desktop_state(body)

    async def grant(self, agent: str, seconds: int) -> DesktopState:
        """`kronii control grant AGENT --seconds N`: the window is the broker's choice (the one that has
        the focus when it grants)."""
        body = {"agent": agent, "lease_seconds": seconds, "window": 0}
        return _granted(await self._as_person("control/grant", body), agent, seconds)

    async def renew(self, agent: str, seconds: int) -> DesktopState:
        """`kronii control renew --seconds N`: more time for the agent that holds the desktop."""
        return _granted(await self._as_person("control/extend", {"lease_seconds": seconds}), agent, seconds)

    async def _as_person(self, verb: str, body: dict[str, Any]) -> httpx.Response:
        if not self._socket.exists():
            raise ServiceNotAnswering(SERVICE, "its local socket is not there, so no grant can reach it")
        transport = httpx.AsyncHTTPTransport(uds=str(self._socket))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://localhost", timeout=self._timeout,
            headers=presence_headers(),
        ) as http:  # fmt: skip
            try:
                return await http.post(f"/sessions/{SESSION}/{verb}", json=body)
            except httpx.HTTPError:
                raise ServiceNotAnswering(SERVICE, "its local socket did not answer") from None
