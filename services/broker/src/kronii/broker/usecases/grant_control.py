"""The desktop user gives an agent the desktop (a grant, for the window in front of them unless one
is named) or gives the agent that holds it more time (same grant, same epoch)."""

from __future__ import annotations

from collections.abc import Callable

from kronii.broker.core.callers import Caller, Operation, check
from kronii.broker.core.commands import GrantCommand, LeaseCommand
from kronii.broker.core.machine import Happening
from kronii.broker.core.model import ControlState
from kronii.broker.core.refusals import lease_ms, refused
from kronii.broker.core.table import Event
from kronii.broker.usecases.control_session import ControlSession
from kronii.foundation.errors import InvalidArgument

__all__ = ["GrantControl"]


class GrantControl:
    def __init__(
        self,
        session: ControlSession,
        *,
        default_lease_secs: int,
        focused_window: Callable[[], int] = lambda: 0,
    ) -> None:
        self._session = session
        self._default_lease_ms = default_lease_secs * 1000
        self._focused_window = focused_window

    def grant(self, caller: Caller, command: GrantCommand) -> ControlState:
        check(caller, Operation.GRANT)
        if not command.agent:
            raise InvalidArgument("name the agent the lease is for (its client id)", field="agent")
        session = self._session.named(command.session_id)
        # No window named: the one the person has in front of them now, so the agent's keys stay there.
        window = command.window or self._focused_window()
        happening = Happening(
            Event.GRANT,
            agent=command.agent,
            lease_ms=lease_ms(command.lease_seconds, self._default_lease_ms),
            window=window,
        )
        return refused(session.handle(happening, actor=caller.actor))

    def extend(self, caller: Caller, command: LeaseCommand) -> ControlState:
        """The person gives the agent that holds the desktop more time: same grant, same epoch."""
        check(caller, Operation.EXTEND)
        session = self._session.named(command.session_id)
        happening = Happening(Event.EXTEND, lease_ms=lease_ms(command.lease_seconds, self._default_lease_ms))
        return refused(session.handle(happening, actor=caller.actor))
