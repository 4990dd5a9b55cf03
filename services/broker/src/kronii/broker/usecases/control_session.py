"""One desktop session's control, the state every other use case of the broker reads and changes
through `handle`: every event goes through the table (core.machine), the new state
is in place before anything is awaited, and then its effects follow: the queue cleared, the JSON-lines
journal, the audit row, the NATS event, the lease notification, the watchers told.

The person's input, STOP_NOW and a grant are handled synchronously from the event loop: between the
X server's event and the revocation there is no await, so no agent action can slip in between.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

from kronii.broker.core.machine import Decision, Happening, Policy, decide
from kronii.broker.core.model import ControlMode, ControlState, DropReason
from kronii.broker.core.results import ControlChange
from kronii.broker.core.table import Action, Event, cleared_as
from kronii.broker.metrics import BrokerMetrics
from kronii.broker.ports import ControlJournal, ControlPublisher, LeaseNotifier
from kronii.broker.usecases.input_fence import InputFence
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock, SystemClock
from kronii.foundation.errors import NotFound

__all__ = ["CURRENT", "ControlSession"]

log = logging.getLogger(__name__)

# Decisions the journal keeps even when the state did not change (the seed: intents, safe points).
_ALWAYS_JOURNALED = frozenset(
    {
        Event.GRANT,
        Event.ACQUIRE,
        Event.RELEASE,
        Event.SAFE_POINT,
        Event.WAIT,
        Event.SAFE_INTERRUPT,
        Event.STOP_NOW,
    }
)
# Audit action per table outcome; grants, overrides, stops and pauses are in the hash chain.
_AUDITED = {
    "granted": "broker.grant",
    "acquired": "broker.acquire",
    "held": "broker.acquire",  # the agent the person granted acquiring under that grant (row AG)
    "released": "broker.release",
    "overridden": "broker.override",
    "overridden_unbrokered": "broker.unbrokered_input",
    "stopped": "broker.stop",
    "paused": "broker.pause",
    "expired": "broker.expire",
    "revoked": "broker.revoke",
}


# The alias for the broker's own desktop session, for clients that do not list sessions first.
CURRENT = "current"


class ControlSession:
    def __init__(
        self,
        *,
        session_id: str,
        policy: Policy,
        metrics: BrokerMetrics,
        publisher: ControlPublisher,
        journal: ControlJournal,
        audit: AuditTrail,
        notifier: LeaseNotifier | None = None,
        clock: Clock | None = None,
        interactive_reason: str = "",
    ) -> None:
        self._state = ControlState(
            session_id, interactive=bool(interactive_reason), interactive_reason=interactive_reason
        )
        self._policy = policy
        self._metrics = metrics
        self._publisher = publisher
        self._journal = journal
        self._audit = audit
        self._notifier = notifier
        # Leases and the journal's times are on the wall clock, as the state's times are shown.
        self._clock = clock or SystemClock()
        self._clearers: list[Callable[[DropReason], None]] = []
        self._watchers: set[asyncio.Queue[ControlChange]] = set()
        self._effects: set[asyncio.Task[None]] = set()
        self._last_change = ("current", "")
        # Closed from any thread the moment the person (or a STOP) is seen; the table follows.
        self.fence = InputFence(lambda: self._state.epoch)
        self._update_gauges()

    @property
    def state(self) -> ControlState:
        return self._state

    @property
    def session_id(self) -> str:
        return self._state.session_id

    def now_ms(self) -> int:
        return self._clock.wall_ms()

    def named(self, session_id: str) -> ControlSession:
        """This session, when ``session_id`` names it (or is `current`); else NotFound."""
        if session_id in (CURRENT, self.session_id):
            return self
        raise NotFound(
            "no desktop session has that id (`GET /sessions` lists them; `current` is this desktop)"
        )

    def attach_notifier(self, notifier: LeaseNotifier) -> None:
        self._notifier = notifier

    def tell_person(self, title: str, sentence: str) -> None:
        """A notice for the person on the desktop (no buttons), when the broker has a notifier."""
        if self._notifier is not None:
            self._spawn(self._notifier.show_notice(title, sentence))

    def on_clear(self, clear: Callable[[DropReason], None]) -> None:
        """Called with the drop reason whenever a row clears the agents' queue."""
        self._clearers.append(clear)

    def peek(self, happening: Happening) -> Decision:
        """What the table would say now, without applying it."""
        return decide(self._state, happening, self.now_ms(), self._policy)

    def handle(self, happening: Happening, actor: str = "") -> Decision:
        """Apply one event now. Synchronous on purpose: the state is in place when this returns."""
        now = self.now_ms()
        decision = decide(self._state, happening, now, self._policy)
        self._state = decision.state
        self._metrics.decisions.labels(decision.row.id).inc()
        if Action.CLEAR_QUEUE in decision.actions:
            reason = cleared_as(decision.row)
            for clear in self._clearers:
                clear(reason)
        self._account(decision)
        if decision.changed or happening.event in _ALWAYS_JOURNALED or decision.refusal is not None:
            self._journal.write(self._journal_record(decision, happening, actor, now))
        self._follow_up(decision, happening, actor, now)
        return decision

    def _account(self, decision: Decision) -> None:
        outcome = decision.row.outcome
        if outcome in ("granted", "acquired"):
            self._metrics.leases.labels("grant" if outcome == "granted" else "acquire").inc()
        elif outcome == "renewed":
            self._metrics.renewals.inc()
        if decision.row.signal and decision.changed:
            self._metrics.taken_back.labels(decision.row.signal).inc()
        if decision.changed:
            self._update_gauges()

    def _update_gauges(self) -> None:
        self._metrics.agent_holds.set(1 if self._state.control_mode is ControlMode.AGENT else 0)
        self._metrics.interactive.set(1 if self._state.interactive else 0)

    def _journal_record(
        self, decision: Decision, happening: Happening, actor: str, now: int
    ) -> dict[str, Any]:
        state = decision.state
        record: dict[str, Any] = {
            "ts": datetime.fromtimestamp(now / 1000, UTC).isoformat(),
            "session_id": state.session_id,
            "event": happening.event.value,
            "row": decision.row.id,
            "outcome": decision.row.outcome,
            "actor": actor,
            "control_mode": state.control_mode.value,
            "user_intent": state.user_intent.value,
            "agent_status": state.agent_status.value,
            "epoch": state.epoch,
            "holder": state.holder,
        }
        for key, value in (
            ("refusal", decision.refusal),
            ("answer", decision.answer),
            ("signal", decision.signal),
            ("drop", decision.drop),
        ):
            if value:
                record[key] = str(value)
        return record

    def _follow_up(self, decision: Decision, happening: Happening, actor: str, now: int) -> None:
        actions = decision.actions
        if not decision.changed and Action.PUBLISH not in actions:
            return
        change = ControlChange(decision.state, happening.event.value, decision.signal, now)
        self._last_change = (change.cause, change.signal)
        for watcher in list(self._watchers):
            watcher.put_nowait(change)
        if Action.PUBLISH in actions:
            self._spawn(self._publisher.publish(change.state, change.cause, change.signal))
        action = _AUDITED.get(decision.row.outcome)
        if Action.AUDIT in actions and action is not None:
            self._spawn(self._record(action, decision, happening, actor))
        if self._notifier is not None and Action.NOTIFY_LEASE in actions:
            self._spawn(self._notifier.show_lease(decision.state))
        if self._notifier is not None and Action.CLOSE_NOTIFICATION in actions:
            self._spawn(self._notifier.close())

    async def _record(self, action: str, decision: Decision, happening: Happening, actor: str) -> None:
        before, after = decision.before, decision.state
        await self._audit(
            actor=actor or (f"agent:{happening.agent}" if happening.agent else "kronii"),
            action=action,
            subject=after.session_id,
            outcome=decision.row.outcome,
            agent=after.holder or before.holder,
            epoch=after.epoch,
            signal=decision.signal,
            lease_expiry_ms=after.lease_expiry_ms,
            window=after.window,
        )

    def _spawn(self, effect: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(self._guarded(effect))
        self._effects.add(task)
        task.add_done_callback(self._effects.discard)

    @staticmethod
    async def _guarded(effect: Coroutine[Any, Any, None]) -> None:
        try:
            await effect
        except Exception:  # an effect's failure never undoes or hides the decision
            log.exception("broker: a follow-up of a control decision failed")

    async def watch(self) -> AsyncGenerator[ControlChange, None]:
        """The current state, then every change, until the caller stops iterating."""
        queue: asyncio.Queue[ControlChange] = asyncio.Queue()
        self._watchers.add(queue)
        try:
            yield ControlChange(self._state, "current", "", self.now_ms())
            while True:
                yield await queue.get()
        finally:
            self._watchers.discard(queue)

    async def settle(self, within_s: float = 2.0) -> None:
        """Wait for the follow-ups in flight (at stop, and in tests)."""
        if self._effects:
            await asyncio.wait(set(self._effects), timeout=within_s)

    def republish(self) -> None:
        """The current state on NATS again, with the cause and signal of its last change: a
        supervisor or pipeline that started after that change still learns the person holds the desktop."""
        self._spawn(self._publisher.publish(self._state, *self._last_change))

    def tick(self) -> None:
        if self._state.control_mode is ControlMode.AGENT:
            self.handle(Happening(Event.TICK), actor="kronii")
