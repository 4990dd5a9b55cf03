"""An agent's own lease: acquire (a session nobody watches, never while the broker cannot see who
watches; or the desktop the person already granted this agent, as they granted it), renew, release."""

from __future__ import annotations

from collections.abc import Callable

from kronii.broker.core.callers import Caller, Operation, check
from kronii.broker.core.commands import LeaseCommand
from kronii.broker.core.machine import Happening
from kronii.broker.core.model import ControlState
from kronii.broker.core.refusals import lease_ms, refused
from kronii.broker.usecases.control_session import ControlSession

__all__ = ["HoldLease"]


class HoldLease:
    def __init__(
        self,
        session: ControlSession,
        *,
        default_lease_secs: int,
        presence_problem: Callable[[], str] = lambda: "",
    ) -> None:
        self._session = session
        self._default_lease_ms = default_lease_secs * 1000
        self._presence_problem = presence_problem

    def __call__(self, caller: Caller, command: LeaseCommand) -> ControlState:
        """acquire, renew or release by the calling agent."""
        check(caller, Operation(command.event.value))
        session = self._session.named(command.session_id)
        happening = Happening(
            command.event,
            agent=caller.agent,
            lease_ms=lease_ms(command.lease_seconds, self._default_lease_ms),
        )
        decision = session.handle(happening, actor=caller.actor)
        return refused(decision, self._presence_problem(), agent=caller.agent)
