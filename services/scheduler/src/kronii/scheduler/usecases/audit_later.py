"""Audit rows written off the request path: an admission or a Tick never waits for PostgreSQL."""

from __future__ import annotations

import asyncio
from typing import Any

from kronii.foundation.audit_trail import AuditTrail

__all__ = ["AuditLater"]


class AuditLater:
    def __init__(self, audit: AuditTrail) -> None:
        self._audit = audit
        self._pending: set[asyncio.Task[None]] = set()

    def __call__(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None:
        task = asyncio.create_task(
            self._audit(actor=actor, action=action, subject=subject, outcome=outcome, **detail)
        )
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def drain(self, wait_secs: float) -> None:
        """Wait up to `wait_secs` for the rows still being written (at stop)."""
        if self._pending:
            await asyncio.wait(self._pending, timeout=wait_secs)
