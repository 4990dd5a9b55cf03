"""The vision engine's plans for the Control page (VisionPlans): listed, shown, denied over the
console's service clients; approved through the engine's local socket, the one door a person's
approval may come through (the kernel names the calling process, the console's own; the engine then
wants a proof of presence of it: where polkitd runs, polkit's org.kronii.approve-plan, whose
authentication agent asks the person on their own screen while the page waits, the same proof
`kronii vision approve` gets there). Without such a proof the engine refuses, and the page shows its
sentence, the polkit dialog and the command that approves from a terminal. What the engine answers is
already redacted (titles, OCR text); nothing else is read."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
from kronii.console.adapters.broker_api import JsonServices, epoch_of
from kronii.console.core.control import Ambiguity, Box, PlanAction, PlanView
from kronii.console.ports import ServiceNotAnswering
from kronii.foundation.errors import FailedPrecondition, NotFound, PermissionDenied

__all__ = ["APPROVE_TIMEOUT_SECS", "VisionApi", "approval_refusal", "plan_view"]

SERVICE = "vision"
SOCKET_NAME = "vision.sock"
# An approval answers once the person answered polkit's dialog (the engine waits up to 60 s for them)
# and the plan was checked against the screen it was made on.
APPROVE_TIMEOUT_SECS = 90.0


def _box(data: Any) -> Box | None:
    if not isinstance(data, Mapping) or not (data.get("width") and data.get("height")):
        return None
    return Box(int(data.get("x", 0)), int(data.get("y", 0)), int(data["width"]), int(data["height"]))


def _action(data: Mapping[str, Any]) -> PlanAction:
    metadata = data.get("metadata") or {}
    return PlanAction(
        description=str(data.get("description") or data.get("type") or ""),
        needs_yes=bool(data.get("require_confirmation", False)),
        why=str(metadata.get("confirm_reason", "")) if isinstance(metadata, Mapping) else "",
        box=_box(data.get("bounds")),
    )


def _ambiguity(data: Mapping[str, Any]) -> Ambiguity:
    candidates = tuple(
        (str(c.get("id", "")), str(c.get("role", "")), _box(c.get("bounds")))
        for c in data.get("candidates", [])
    )
    return Ambiguity(name=str(data.get("name", "")), candidates=candidates)


def plan_view(data: Mapping[str, Any]) -> PlanView:
    created_ms = data.get("created_ms")
    return PlanView(
        plan_id=str(data.get("plan_id", "")),
        intent=str(data.get("intent", "")),
        state=str(data.get("state", "")),
        focused_title=str(data.get("focused_title", "")),
        reason=str(data.get("reason") or data.get("blocked") or ""),
        safety_rows=tuple(str(row) for row in data.get("safety_rows", [])),
        actions=tuple(_action(a) for a in data.get("actions", [])),
        ambiguities=tuple(_ambiguity(a) for a in data.get("ambiguities", [])),
        results=tuple(f"{r.get('action', '')} ({r.get('how', '')})" for r in data.get("results", [])),
        approved_by=str(data.get("approved_by", "")),
        replanned_as=str(data.get("replanned_as", "")),
        created_at=int(created_ms) / 1000 if created_ms else epoch_of(data.get("created_at")),
    )


class VisionApi:
    def __init__(
        self, services: JsonServices, socket_path: Path, *, timeout_secs: float = APPROVE_TIMEOUT_SECS
    ):
        self._services = services
        self._socket = socket_path
        self._timeout = timeout_secs

    async def plans(self) -> list[PlanView]:
        body = await self._services.get_json(SERVICE, "/v1/vision/plans")
        return [plan_view(p) for p in body.get("plans", [])]

    async def plan(self, plan_id: str) -> PlanView:
        return plan_view(await self._services.get_json(SERVICE, f"/v1/vision/plans/{plan_id}"))

    async def deny(self, plan_id: str) -> PlanView:
        return plan_view(await self._services.post_json(SERVICE, f"/v1/vision/plans/{plan_id}/deny"))

    async def approve(self, plan_id: str) -> PlanView:
        if not self._socket.exists():
            raise ServiceNotAnswering(SERVICE, "its local socket is not there, so no approval can reach it")
        transport = httpx.AsyncHTTPTransport(uds=str(self._socket))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://localhost", timeout=self._timeout
        ) as http:
            try:
                response = await http.post(f"/v1/vision/plans/{plan_id}/approve")
            except httpx.HTTPError:
                raise ServiceNotAnswering(SERVICE, "its local socket did not answer") from None
        return _answer(response, plan_id)


def approval_refusal(plan_id: str, engine_said: str) -> str:
    """Why a yes from the page did not count, and the two ways that do."""
    return (
        "the vision engine takes a yes only from a person it can see is there: where polkit runs, "
        "Approve makes your desktop ask for your password in polkit's dialog (answer it, then Approve "
        f"again if it timed out); elsewhere run kronii vision approve {plan_id} in a terminal, or answer "
        f"its desktop notification (the engine said: {engine_said})"
    )


def _answer(response: httpx.Response, plan_id: str) -> PlanView:
    try:
        body = response.json()
    except ValueError:
        body = {}
    if response.status_code < 400 and isinstance(body, dict):
        return plan_view(body)
    detail = body.get("detail") if isinstance(body, dict) else None
    sentence = f"the vision engine refused: {detail or f'HTTP {response.status_code}'}"
    if response.status_code == 403:
        raise PermissionDenied(approval_refusal(plan_id, str(detail or "HTTP 403")))
    if response.status_code == 404:
        raise NotFound(sentence)
    if response.status_code == 409:
        raise FailedPrecondition(sentence)
    raise ServiceNotAnswering(
        SERVICE, str(detail or f"HTTP {response.status_code}"), status=response.status_code
    )
