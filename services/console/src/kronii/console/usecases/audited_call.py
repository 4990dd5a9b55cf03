"""A service call the person made through the console, with the console's audit row of how it ended:
`console.<page>.<action>`, the person as actor, the outcome (or "refused" and the error, then raised)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.errors import KroniiError

__all__ = ["audited_call"]

T = TypeVar("T")


async def audited_call(
    audit: AuditTrail, person: str, action: str, subject: str, call: Awaitable[T], outcome: Callable[[T], str],
    **detail: object,
) -> T:  # fmt: skip
    try:
        answer = await call
    except KroniiError as error:
        await audit(
            actor=person, action=action, subject=subject, outcome="refused", error=str(error), **detail
        )
        raise
    await audit(actor=person, action=action, subject=subject, outcome=outcome(answer), **detail)
    return answer
