"""What the outside world reports to the broker, as values: the person's input the X server saw,
and what the transport says about a call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["CallFacts", "UserInputSeen"]


@dataclass(frozen=True)
class UserInputSeen:
    """An input event the X server says did not come from the broker: the person's. ``at`` is the
    monotonic time the watcher read it (the desktop adapter puts it on the service clock's scale
    before a use case sees it), for the revocation latency."""

    kind: Literal["key", "button", "motion"]
    source_id: int
    source_name: str
    at: float


@dataclass(frozen=True)
class CallFacts:
    """What the transport says about a call: the peer's address (a loopback port the local socket
    registered, for a person), the Authorization header, and the TTY binding's claim."""

    peer_host: str
    peer_port: int
    authorization: str = ""
    tty: str = ""
    session: str = ""
