"""Whether the person holds the desktop, as the input broker last said on `kronii.broker.control`.

The broker sets `user_holds_until` when the person took the desktop back (their own input over an
agent's lease, STOP_NOW, a pause at a safe point) and unsets it after a new grant or a WAIT. Until
then the rest of the mesh leaves the desktop alone: the supervisor defers triggers into its panes,
the pipeline starts no actions. Pure: times are epoch seconds passed in, never read from a clock."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.broker.v1 import broker_pb2 as bpb

__all__ = ["DesktopHold", "DesktopHolds"]


def _seconds(stamp: Timestamp) -> float:
    return stamp.seconds + stamp.nanos / 1e9


@dataclass(frozen=True, slots=True)
class DesktopHold:
    """One broker session's hold: until when the person holds it (None: nobody does) and why."""

    session_id: str
    until: float | None = None
    # The broker's signal to the agent ("user_input_override", "stop_now") or else what changed it.
    reason: str = ""
    # When the broker made the change: a change older than the one kept is stale.
    at: float = 0.0

    def holds(self, now: float) -> bool:
        return self.until is not None and now < self.until

    @classmethod
    def from_message(cls, message: bpb.ControlChanged) -> DesktopHold:
        state = message.state
        until = _seconds(state.user_holds_until) if state.HasField("user_holds_until") else None
        at = _seconds(message.at) if message.HasField("at") else 0.0
        return cls(state.session_id, until, message.signal or message.cause, at)

    def describe(self) -> str:
        """A sentence for an outcome or a run's notes."""
        why = f" ({self.reason})" if self.reason else ""
        session = f" of session {self.session_id!r}" if self.session_id else ""
        return f"the user holds the desktop{session}{why}"


def _no_holds() -> Mapping[str, DesktopHold]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class DesktopHolds:
    """The latest hold of each broker session (a desktop may have several sessions)."""

    by_session: Mapping[str, DesktopHold] = field(default_factory=_no_holds)

    def updated(self, hold: DesktopHold) -> DesktopHolds:
        known = self.by_session.get(hold.session_id)
        if known is not None and hold.at < known.at:
            return self  # a change that arrived after a newer one says nothing now
        return DesktopHolds(MappingProxyType({**self.by_session, hold.session_id: hold}))

    def holding(self, now: float, session: str = "") -> DesktopHold | None:
        """The hold in force at `now` on `session`, or on any session when `session` is empty (the
        one that lasts longest); None when the desktop is free."""
        held = [
            hold
            for hold in self.by_session.values()
            if hold.holds(now) and (not session or hold.session_id == session)
        ]
        return max(held, key=lambda hold: hold.until or 0.0, default=None)
