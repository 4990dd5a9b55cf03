"""The holder at a step boundary asks whether to go on: CONTINUE, PAUSE or STOP (the agent must obey)."""

from __future__ import annotations

from kronii.broker.core.callers import Caller, Operation, check
from kronii.broker.core.commands import SafePointCommand
from kronii.broker.core.machine import Happening
from kronii.broker.core.results import SafePointAnswer
from kronii.broker.core.table import Event
from kronii.broker.usecases.control_session import ControlSession
from kronii.foundation.errors import InvalidArgument

__all__ = ["AnswerSafePoint"]


class AnswerSafePoint:
    def __init__(self, session: ControlSession) -> None:
        self._session = session

    def __call__(self, caller: Caller, command: SafePointCommand) -> SafePointAnswer:
        check(caller, Operation.SAFE_POINT)
        if len(command.step) > 200:
            raise InvalidArgument("step must be at most 200 characters", field="step")
        session = self._session.named(command.session_id)
        decision = session.handle(Happening(Event.SAFE_POINT, agent=caller.agent), actor=caller.actor)
        assert decision.answer is not None
        return SafePointAnswer(decision.answer, decision.state)
