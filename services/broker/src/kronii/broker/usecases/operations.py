"""The one facade the HTTP routes and the gRPC servicer call: each operation takes the caller the
transport named (the Gatekeeper) and a command, and goes to its use case, which checks the caller,
hands the event to the session's ControlSession and says a refusal in a sentence."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from kronii.broker.core.callers import Caller, Operation, check
from kronii.broker.core.commands import (
    GrantCommand,
    InputCommand,
    IntentCommand,
    LeaseCommand,
    SafePointCommand,
    SignInCommand,
)
from kronii.broker.core.model import ControlState
from kronii.broker.core.results import (
    AgentSession,
    ControlChange,
    InputResult,
    SafePointAnswer,
    SignInChallenge,
)
from kronii.broker.ports import AgentSignIn
from kronii.broker.usecases.answer_safe_point import AnswerSafePoint
from kronii.broker.usecases.control_session import ControlSession
from kronii.broker.usecases.grant_control import GrantControl
from kronii.broker.usecases.hold_lease import HoldLease
from kronii.broker.usecases.set_intent import SetIntent
from kronii.broker.usecases.sign_in_agent import SignInAgent
from kronii.broker.usecases.submit_input import InputLane
from kronii.desktop.input_actions import InputAction

__all__ = ["BrokerOperations"]


class BrokerOperations:
    def __init__(
        self,
        session: ControlSession,
        lane: InputLane,
        sign_in: AgentSignIn,
        *,
        default_lease_secs: int,
        focused_window: Callable[[], int] = lambda: 0,
        presence_problem: Callable[[], str] = lambda: "",
    ) -> None:
        self._session = session
        self._lane = lane
        self._intent = SetIntent(session)
        self._grants = GrantControl(
            session, default_lease_secs=default_lease_secs, focused_window=focused_window
        )
        self._lease = HoldLease(
            session, default_lease_secs=default_lease_secs, presence_problem=presence_problem
        )
        self._safe_point = AnswerSafePoint(session)
        self._sign_in = SignInAgent(sign_in)

    def sessions(self, caller: Caller) -> list[ControlState]:
        check(caller, Operation.READ)
        return [self._session.state]

    def state(self, caller: Caller, session_id: str) -> ControlState:
        check(caller, Operation.READ)
        return self._session.named(session_id).state

    def watch(self, caller: Caller, session_id: str) -> AsyncIterator[ControlChange]:
        check(caller, Operation.READ)
        return self._session.named(session_id).watch()

    def user_intent(self, caller: Caller, command: IntentCommand) -> ControlState:
        return self._intent(caller, command)

    def grant(self, caller: Caller, command: GrantCommand) -> ControlState:
        return self._grants.grant(caller, command)

    def extend(self, caller: Caller, command: LeaseCommand) -> ControlState:
        return self._grants.extend(caller, command)

    def lease(self, caller: Caller, command: LeaseCommand) -> ControlState:
        """acquire, renew or release by the calling agent."""
        return self._lease(caller, command)

    def safe_point(self, caller: Caller, command: SafePointCommand) -> SafePointAnswer:
        return self._safe_point(caller, command)

    async def input(self, caller: Caller, command: InputCommand[InputAction]) -> InputResult:
        return await self._lane.act(caller, command)

    async def begin_sign_in(self, client_id: str) -> SignInChallenge:
        return await self._sign_in.begin(client_id)

    async def sign_in(self, command: SignInCommand) -> AgentSession:
        return await self._sign_in.complete(command)
