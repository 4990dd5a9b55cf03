"""The one audit port: what a use case calls to leave an audit row (`ServiceContext.record` is the
real one, `kronii.stores.audit.AuditLog` the chain it appends to). Every service's use cases take
an `AuditTrail`; this module imports nothing, so a port or a core may name it."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["AuditTrail"]


class AuditTrail(Protocol):
    """One hash-chained audit row per call: who decided (`actor`), what (`action`), on what
    (`subject`), how it ended (`outcome`), and the detail (capped and redacted where it is stored)."""

    async def __call__(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None: ...
