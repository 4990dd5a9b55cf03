"""The person's three choices (seed 004): WAIT (the person only), SAFE_INTERRUPT and STOP_NOW
(anyone the mesh admits: they only take power away from agents)."""

from __future__ import annotations

from kronii.broker.core.callers import Caller, Operation, check
from kronii.broker.core.commands import IntentCommand
from kronii.broker.core.machine import Happening
from kronii.broker.core.model import ControlState, UserIntent
from kronii.broker.core.table import Event
from kronii.broker.usecases.control_session import ControlSession
from kronii.foundation.errors import InvalidArgument

__all__ = ["SetIntent"]

_INTENT_EVENTS = {
    UserIntent.WAIT: (Event.WAIT, Operation.WAIT),
    UserIntent.SAFE_INTERRUPT: (Event.SAFE_INTERRUPT, Operation.SAFE_INTERRUPT),
    UserIntent.STOP_NOW: (Event.STOP_NOW, Operation.STOP_NOW),
}


class SetIntent:
    def __init__(self, session: ControlSession) -> None:
        self._session = session

    def __call__(self, caller: Caller, command: IntentCommand) -> ControlState:
        try:
            event, operation = _INTENT_EVENTS[UserIntent(command.intent)]
        except ValueError:
            raise InvalidArgument("intent must be WAIT, SAFE_INTERRUPT or STOP_NOW", field="intent") from None
        check(caller, operation)
        session = self._session.named(command.session_id)
        return session.handle(Happening(event), actor=caller.actor).state
