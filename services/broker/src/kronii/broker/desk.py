"""The operations the HTTP routes and the gRPC servicer call: each checks who is calling (from the
transport), hands the event to the session's ControlDesk, and turns a refusal into a sentence."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from kronii.broker.control_desk import ControlChange, ControlDesk
from kronii.broker.core.callers import Caller, Operation, check
from kronii.broker.core.machine import Decision, Happening
from kronii.broker.core.model import ControlState, SafePointAction, UserIntent
from kronii.broker.core.table import Event, Refusal
from kronii.broker.input_lane import InputLane, InputResult
from kronii.broker.ports import AgentSession, AgentSignIn, SignInChallenge
from kronii.common.desktop_input import InputAction
from kronii.common.errors import FailedPrecondition, InvalidArgument, NotFound

__all__ = ["CURRENT", "BrokerDesk"]

# The alias for the broker's own desktop session, for clients that do not list sessions first.
CURRENT = "current"

_REFUSED: dict[Refusal, str] = {
    Refusal.NOT_INTERACTIVE: (
        "no person is attached to this desktop session, so there is nothing to grant: an agent takes a "
        "session nobody watches with acquire"
    ),
    Refusal.GRANT_NEEDED: (
        "a person is at this desktop: an agent gets control only when the desktop user grants it "
        "(`kronii control grant`)"
    ),
    Refusal.STOPPED_BY_USER: (
        "the desktop user stopped agents here (STOP_NOW): control comes back only when they grant it "
        "or choose WAIT"
    ),
    Refusal.POLICY: "the operator does not let agents take a desktop without a grant (allow_headless_acquire)",
    Refusal.HELD: "another agent holds this desktop's lease",
    Refusal.NO_LEASE: "this agent does not hold a live lease on this desktop",
    Refusal.OVERRIDE_PENDING: (
        "the desktop user asked agents to pause (SAFE_INTERRUPT): stop at your next safe point; "
        "the lease is not renewed"
    ),
    Refusal.PRESENCE_UNKNOWN: (
        "{cause}, so it cannot tell whether a person watches: until it can, an agent gets this desktop "
        "only when the desktop user grants it (`kronii control grant`)"
    ),
}
# The cause when the desktop has none to give (it always has one while presence is unknown).
_UNKNOWN_CAUSE = "the broker cannot see the desktop's viewers"
_INTENT_EVENTS = {
    UserIntent.WAIT: (Event.WAIT, Operation.WAIT),
    UserIntent.SAFE_INTERRUPT: (Event.SAFE_INTERRUPT, Operation.SAFE_INTERRUPT),
    UserIntent.STOP_NOW: (Event.STOP_NOW, Operation.STOP_NOW),
}


def _refused(decision: Decision, presence_problem: str = "") -> ControlState:
    if decision.refusal is not None:
        cause = presence_problem or _UNKNOWN_CAUSE
        raise FailedPrecondition(_REFUSED[decision.refusal].format(cause=cause))
    return decision.state


class BrokerDesk:
    def __init__(
        self,
        desk: ControlDesk,
        lane: InputLane,
        sign_in: AgentSignIn,
        *,
        default_lease_secs: int,
        focused_window: Callable[[], int] = lambda: 0,
        presence_problem: Callable[[], str] = lambda: "",
    ) -> None:
        self._desk = desk
        self._focused_window = focused_window
        self._presence_problem = presence_problem
        self._lane = lane
        self._sign_in = sign_in
        self._default_lease_ms = default_lease_secs * 1000

    def _session(self, session_id: str) -> ControlDesk:
        if session_id in (CURRENT, self._desk.session_id):
            return self._desk
        raise NotFound(
            "no desktop session has that id (`GET /sessions` lists them; `current` is this desktop)"
        )

    def _lease_ms(self, lease_seconds: int) -> int:
        if lease_seconds < 0:
            raise InvalidArgument("lease_seconds must not be negative", field="lease_seconds")
        return lease_seconds * 1000 if lease_seconds else self._default_lease_ms

    def sessions(self, caller: Caller) -> list[ControlState]:
        check(caller, Operation.READ)
        return [self._desk.state]

    def state(self, caller: Caller, session_id: str) -> ControlState:
        check(caller, Operation.READ)
        return self._session(session_id).state

    def user_intent(self, caller: Caller, session_id: str, intent: str) -> ControlState:
        try:
            event, operation = _INTENT_EVENTS[UserIntent(intent)]
        except ValueError:
            raise InvalidArgument("intent must be WAIT, SAFE_INTERRUPT or STOP_NOW", field="intent") from None
        check(caller, operation)
        desk = self._session(session_id)
        return desk.handle(Happening(event), actor=caller.actor).state

    def grant(
        self, caller: Caller, session_id: str, lease_seconds: int, agent: str, window: int
    ) -> ControlState:
        check(caller, Operation.GRANT)
        if not agent:
            raise InvalidArgument("name the agent the lease is for (its client id)", field="agent")
        desk = self._session(session_id)
        # No window named: the one the person has in front of them now, so the agent's keys stay there.
        window = window or self._focused_window()
        happening = Happening(Event.GRANT, agent=agent, lease_ms=self._lease_ms(lease_seconds), window=window)
        return _refused(desk.handle(happening, actor=caller.actor))

    def extend(self, caller: Caller, session_id: str, lease_seconds: int) -> ControlState:
        """The person gives the agent that holds the desktop more time: same grant, same epoch."""
        check(caller, Operation.EXTEND)
        desk = self._session(session_id)
        happening = Happening(Event.EXTEND, lease_ms=self._lease_ms(lease_seconds))
        return _refused(desk.handle(happening, actor=caller.actor))

    def lease(self, caller: Caller, session_id: str, event: Event, lease_seconds: int = 0) -> ControlState:
        """acquire, renew or release by the calling agent."""
        check(caller, Operation(event.value))
        desk = self._session(session_id)
        happening = Happening(event, agent=caller.agent, lease_ms=self._lease_ms(lease_seconds))
        return _refused(desk.handle(happening, actor=caller.actor), self._presence_problem())

    def safe_point(
        self, caller: Caller, session_id: str, step: str, sequence: int
    ) -> tuple[SafePointAction, ControlState]:
        check(caller, Operation.SAFE_POINT)
        if len(step) > 200:
            raise InvalidArgument("step must be at most 200 characters", field="step")
        desk = self._session(session_id)
        decision = desk.handle(Happening(Event.SAFE_POINT, agent=caller.agent), actor=caller.actor)
        assert decision.answer is not None
        return decision.answer, decision.state

    async def input(
        self, caller: Caller, session_id: str, action: InputAction, epoch: int = 0
    ) -> InputResult:
        check(caller, Operation.INPUT)
        self._session(session_id)
        return await self._lane.submit(caller.agent, action, epoch)

    def watch(self, caller: Caller, session_id: str) -> AsyncIterator[ControlChange]:
        check(caller, Operation.READ)
        return self._session(session_id).watch()

    async def begin_sign_in(self, client_id: str) -> SignInChallenge:
        return await self._sign_in.begin(client_id)

    async def sign_in(self, challenge_id: str, client_id: str, signature: bytes) -> AgentSession:
        return await self._sign_in.authenticate(challenge_id, client_id, signature)
