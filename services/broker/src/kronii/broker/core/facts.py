"""What the outside world reports to the broker, as values: the person's input the X server saw,
input that went around the broker and who may have sent it, and what the transport says about a call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["CallFacts", "InputSender", "UnbrokeredInput", "UserInputSeen"]


@dataclass(frozen=True)
class UserInputSeen:
    """An input event the X server says did not come from the broker: the person's (or, inside an
    UnbrokeredInput, another program's). ``at`` is the
    monotonic time the watcher read it (the desktop adapter puts it on the service clock's scale
    before a use case sees it), for the revocation latency."""

    # "input" where the desktop says only that there was some (a Wayland seat's idle notification)
    kind: Literal["key", "button", "motion", "input"]
    source_id: int
    source_name: str
    at: float


@dataclass(frozen=True)
class InputSender:
    """A program connected to the X server when input arrived on the core XTEST device, and new
    there: the likely sender (the X server does not say which client an XTEST event came from)."""

    program: str
    pid: int

    def describe(self) -> str:
        return f"{self.program} (pid {self.pid})"


@dataclass(frozen=True)
class UnbrokeredInput:
    """Input that came from the core XTEST device, shared by every plain XTEST client (xdotool and
    the like), not from the broker nor a person's device; ``senders`` the likely programs, newest
    first, empty when none could be found."""

    seen: UserInputSeen
    senders: tuple[InputSender, ...] = ()

    def who(self) -> str:
        """The likeliest sender as words ("xdotool (pid 812)"); "" when none was found."""
        return self.senders[0].describe() if self.senders else ""


@dataclass(frozen=True)
class CallFacts:
    """What the transport says about a call: the peer's address (a loopback port the local socket
    registered, for a person), the Authorization header, and the TTY binding's claim."""

    peer_host: str
    peer_port: int
    authorization: str = ""
    tty: str = ""
    session: str = ""
