"""The seed's three invariants over random interleavings (hypothesis state machine): grants,
acquisitions, renewals, releases, the person's input and intents, safe points, agents' input
(sent now or queued and drained later) and time passing past leases, viewers coming and going.

- the agent never takes control from the user;
- the user reclaims control at once (input or STOP_NOW: USER in the same step, every older
  epoch dead);
- no agent input lands without a valid grant, and nothing queued before a stop lands after it.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from kronii.broker.core.machine import Decision, Happening, Policy, decide
from kronii.broker.core.model import ControlMode, ControlState
from kronii.broker.core.table import Action, Event

AGENTS = st.sampled_from(["a", "b"])
LEASES = st.integers(min_value=0, max_value=20_000)


class BrokerInterleavings(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.state = ControlState("s", interactive=True, interactive_reason="viewer")
        self.now = 1_000
        self.policy = Policy(hold_ms=5_000)
        # Input in flight: the broker clears its queue on a stop too, but the epoch alone must
        # already keep anything sent before a stop from landing after it, so this is never cleared.
        self.queue: list[tuple[str, int]] = []
        # The epoch at the last time the person took control: nothing older may land after it.
        self.reclaimed_epoch = 0

    def _step(self, happening: Happening) -> Decision:
        before = self.state
        decision = decide(before, happening, self.now, self.policy)
        after = decision.state
        self._never_taken(before, after, happening)
        self._grant_kept(before, after, happening)
        if Action.INJECT in decision.actions:
            self._valid_grant(before, happening)
        self.state = after
        return decision

    def _never_taken(self, before: ControlState, after: ControlState, happening: Happening) -> None:
        if before.control_mode is ControlMode.USER and after.control_mode is ControlMode.AGENT:
            by_the_person = happening.event is Event.GRANT and before.interactive
            by_policy = happening.event is Event.ACQUIRE and not before.interactive
            assert by_the_person or by_policy, (happening, before)
        if after.interactive and after.control_mode is ControlMode.AGENT:
            assert after.granted_by_user, (happening, before, after)

    def _grant_kept(self, before: ControlState, after: ControlState, happening: Happening) -> None:
        """An agent acquiring under the person's live grant holds it as they gave it: never longer."""
        if (
            happening.event is Event.ACQUIRE
            and before.granted_by_user
            and before.held_by(happening.agent, self.now)
        ):
            assert after == before, (before, after)

    def _valid_grant(self, before: ControlState, happening: Happening) -> None:
        assert before.control_mode is ControlMode.AGENT
        assert before.held_by(happening.agent, self.now)
        assert happening.epoch in (0, before.epoch)
        assert before.epoch > self.reclaimed_epoch
        if before.interactive:
            assert before.granted_by_user

    @rule(agent=AGENTS, lease=LEASES, window=st.integers(0, 3))
    def person_grants(self, agent: str, lease: int, window: int) -> None:
        self._step(Happening(Event.GRANT, agent=agent, lease_ms=lease, window=window))

    @rule(lease=LEASES)
    def person_extends(self, lease: int) -> None:
        self._step(Happening(Event.EXTEND, lease_ms=lease))

    @rule(agent=AGENTS, lease=LEASES)
    def agent_acquires(self, agent: str, lease: int) -> None:
        self._step(Happening(Event.ACQUIRE, agent=agent, lease_ms=lease))

    @rule(agent=AGENTS, lease=LEASES)
    def agent_renews(self, agent: str, lease: int) -> None:
        self._step(Happening(Event.RENEW, agent=agent, lease_ms=lease))

    @rule(agent=AGENTS)
    def agent_releases(self, agent: str) -> None:
        self._step(Happening(Event.RELEASE, agent=agent))

    @rule(agent=AGENTS, current=st.booleans())
    def agent_sends_input(self, agent: str, current: bool) -> None:
        self._step(Happening(Event.AGENT_INPUT, agent=agent, epoch=self.state.epoch if current else 0))

    @rule(agent=AGENTS)
    def agent_queues_input(self, agent: str) -> None:
        self.queue.append((agent, self.state.epoch))

    @rule()
    def broker_drains_one_queued_input(self) -> None:
        if self.queue:
            agent, epoch = self.queue.pop(0)
            self._step(Happening(Event.AGENT_INPUT, agent=agent, epoch=epoch))

    @rule(agent=AGENTS)
    def agent_reaches_a_safe_point(self, agent: str) -> None:
        self._step(Happening(Event.SAFE_POINT, agent=agent))

    @rule(event=st.sampled_from([Event.USER_INPUT, Event.STOP_NOW]))
    def person_takes_control(self, event: Event) -> None:
        before = self.state
        after = self._step(Happening(event)).state
        # At once: in this very step, not at a later safe point.
        assert after.control_mode is ControlMode.USER and after.lease_expiry_ms is None
        if before.control_mode is ControlMode.AGENT or event is Event.STOP_NOW:
            assert after.epoch == before.epoch + 1
        if after.epoch > before.epoch:
            self.reclaimed_epoch = before.epoch

    @rule(intent=st.sampled_from([Event.WAIT, Event.SAFE_INTERRUPT]))
    def person_states_an_intent(self, intent: Event) -> None:
        self._step(Happening(intent))

    @rule(ms=st.integers(1, 15_000))
    def time_passes(self, ms: int) -> None:
        self.now += ms
        self._step(Happening(Event.TICK))

    @rule(attached=st.booleans())
    def viewer_comes_or_goes(self, attached: bool) -> None:
        event = Event.INTERACTIVE if attached else Event.NOT_INTERACTIVE
        self._step(Happening(event, reason="viewer" if attached else ""))

    @invariant()
    def a_lease_in_a_watched_session_was_granted_by_the_person(self) -> None:
        if self.state.interactive and self.state.control_mode is ControlMode.AGENT:
            assert self.state.granted_by_user


BrokerInterleavings.TestCase.settings = settings(max_examples=1000, stateful_step_count=30, deadline=None)
test_broker_invariants_hold_over_random_interleavings = BrokerInterleavings.TestCase
