"""A repeated failure as an offer to the workspace's agent (issue 29, "sources of work besides
agents"): the critic sends the supervisor what failed (the command line, the exit status, the error
as the record keeps it, where, how often), the supervisor chooses the agent and asks the person. The
record is redacted already, so the offer is too. Pure."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from kronii.critic.core.model import InvocationRecord
from kronii.critic.core.recommend import Notification
from kronii.critic.core.triggers import failure_key

__all__ = ["MAX_OFFER_TEXT", "FailureOffer", "failure_offer", "offer_id"]

# What an offer carries of a command and of its error: the agent's prompt has a payload limit, and a
# pasted heredoc is no use to it whole.
MAX_OFFER_TEXT = 1000
_HOUR_MS = 3_600_000


@dataclass(frozen=True)
class FailureOffer:
    offer_id: str
    command_line: str
    exit_code: int
    error_text: str
    cwd: str
    times: int
    failure_key: str
    at_ms: int


def _cut(text: str) -> str:
    return text if len(text) <= MAX_OFFER_TEXT else text[: MAX_OFFER_TEXT - 1] + "…"


def offer_id(key: str, cwd: str, at_ms: int) -> str:
    """The same failure in the same place within one clock hour is one offer: said again (the
    critic restarted and forgot it notified), the supervisor keeps it once."""
    digest = hashlib.sha256(f"{key}\n{cwd}\n{at_ms // _HOUR_MS}".encode()).hexdigest()
    return f"offer-{digest[:24]}"


def failure_offer(record: InvocationRecord, notification: Notification) -> FailureOffer:
    """The offer for the record that made the repeated-failure notification."""
    key = failure_key(record)
    return FailureOffer(
        offer_id=offer_id(key, record.cwd, notification.at_ms),
        command_line=_cut(record.command_line),
        exit_code=record.exit_status,
        error_text=_cut(record.summary or record.error_message),
        cwd=record.cwd,
        times=notification.times,
        failure_key=_cut(key),
        at_ms=notification.at_ms,
    )
