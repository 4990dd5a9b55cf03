"""The input broker's control state and the person's intents for the Control page (InputBroker), over
the console's service clients: what `kronii control status|interrupt|stop|wait` asks. STOP_NOW and
SAFE_INTERRUPT may come from any local process of the person (they only take power away from agents);
WAIT is the desktop user's alone (the broker's socket with a proof of presence), so the broker refuses
it from the console and the page shows its sentence."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

from kronii.console.core.control import DesktopState

__all__ = ["BrokerApi", "JsonServices", "desktop_state", "epoch_of"]

SERVICE = "broker"
SESSION = "current"


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


class BrokerApi:
    def __init__(self, services: JsonServices) -> None:
        self._services = services

    async def state(self) -> DesktopState:
        return desktop_state(await self._services.get_json(SERVICE, f"/sessions/{SESSION}"))

    async def intent(self, intent: str) -> DesktopState:
        body = await self._services.post_json(SERVICE, f"/sessions/{SESSION}/user_intent", {"intent": intent})
        return desktop_state(body)
