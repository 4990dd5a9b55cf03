"""The activation orchestrator (seed 002, section 8.4): it watches the threads, decides by the wake
policy (core/wake_policy.py) whom to wake, asks the supervisor's trigger use case to wake it (it
never types: collisions, deferrals and the fallback chain stay the supervisor's), and posts each
wake's outcome back to the thread.

A post or a cursor that moved has its thread looked at at once; every thread touched in the last day
is looked at again every `sweep_secs` (dormancy and lag grow with time alone). A wake's trigger id
is made of its thread, agent, reason and message (wake_trigger_id): a pass that runs twice, or again
after a restart, asks for the same trigger, and the supervisor answers a repeated id with its one
outcome; the outcome note has the trigger id as its dedupe key, so it is posted once too.

After a person's work in a worker's pane (a look at it read their text in its input line), each
thread the worker is on gets a sync note (section 13.2): addressed to the thread's coordinator (a participant whose runtime
has the role orchestrator or coordinator), else to the worker itself; no other agent on that thread
is woken until its addressee has read it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from dataclasses import dataclass

from kronii.foundation.errors import KroniiError
from kronii.supervisor.core.model import ErrorCode, Result, RuntimeRecord, RuntimeStatus
from kronii.supervisor.core.threads import (
    KRONII,
    PERSON,
    MessageKind,
    NewMessage,
    ThreadMessage,
    ThreadView,
    addressed_to,
    is_turn,
)
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.core.trigger import TriggerCommand, TriggerOutcome
from kronii.supervisor.core.wake_policy import (
    Decision,
    Situation,
    Verdict,
    WakeLimits,
    decide,
    wake_prompt,
    wake_trigger_id,
)
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.ports import AuditTrail, Clock, Runtimes
from kronii.supervisor.usecases.threads import ThreadDesk
from kronii.supervisor.usecases.trigger_agent import TriggerAgent

__all__ = ["Orchestrator"]

log = logging.getLogger(__name__)

COORDINATOR_ROLES = frozenset({"orchestrator", "coordinator"})
# The orchestrator's identity when it asks the supervisor for a trigger (in-process: no token).
_CLAIMS = Claims(subject="orchestrator", scopes=frozenset({"trigger"}), workspaces=frozenset({"*"}),
                 expires_at=float("inf"))  # fmt: skip
_PERSON_TYPED = frozenset({ErrorCode.OPERATOR_BUSY.value, ErrorCode.COLLISION_MAX_DEFER.value})
# A repeated trigger_id's answers while the supervisor still keeps the trigger.
_WAITING = frozenset({Result.DEFERRED.value, Result.ALREADY_ACTIVE.value})
_WAKE_PREFIX = "wake-"
_CONTEXT = 50
_SETTLED_KEPT = 10_000


@dataclass(frozen=True, slots=True)
class _Wake:
    view: ThreadView
    agent: str
    decision: Decision
    trigger_id: str
    posted_at: float


class Orchestrator:
    def __init__(
        self,
        *,
        desk: ThreadDesk,
        triggers: TriggerAgent,
        registry: Runtimes,
        audit: AuditTrail,
        metrics: SupervisorMetrics,
        clock: Clock,
        limits: WakeLimits,
        prompt_chars: int,
        sweep_secs: float = 5.0,
    ) -> None:
        self._desk = desk
        self._triggers = triggers
        self._registry = registry
        self._audit = audit
        self._metrics = metrics
        self._clock = clock
        self._limits = limits
        self._prompt_chars = prompt_chars
        self._sweep_secs = sweep_secs
        self._dirty: set[tuple[str, str]] = set()
        self._kick = asyncio.Event()
        # (workspace, thread, agent) -> the wake in flight or deferred with the supervisor.
        self._active: dict[tuple[str, str, str], _Wake] = {}
        # Wakes whose outcome is known, newest last (bounded: an old one asked again is one Redis lookup).
        self._settled: OrderedDict[str, None] = OrderedDict()
        # Runtimes whose pane a person typed in, and when (agent_state_changed), not yet synced.
        self._interventions: dict[str, float] = {}
        # When the latest person's episode in each runtime's pane began (one sync per episode).
        self._episodes: dict[str, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        desk.on_change(self.changed)

    def changed(self, workspace_id: str, thread_id: str) -> None:
        self._dirty.add((workspace_id, thread_id))
        self._kick.set()

    async def run_forever(self) -> None:
        next_sweep = 0.0
        while True:
            try:
                now = self._clock.monotonic()
                await self._sync_interventions()
                if now >= next_sweep:
                    next_sweep = now + self._sweep_secs
                    await self.sweep()
                await self.pass_dirty()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the orchestrator's pass failed; trying again")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._kick.wait(), timeout=max(0.05, next_sweep - self._clock.monotonic())
                )
            self._kick.clear()

    async def drain(self) -> None:
        """Wait for the wakes in flight to get their first answer (tests, and a pass that must end)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def sweep(self) -> None:
        """Every thread touched in the last day, and the gauges."""
        views = await self._desk.recent_threads(self._clock.wall() - 86400)
        self._metrics.threads_blocked.set(sum(1 for v in views if v.guard.blocked))
        worst = 0
        for view in views:
            worst = max(worst, await self.consider(view))
        self._metrics.thread_lag.set(worst)

    async def pass_dirty(self) -> None:
        await self._sync_interventions()
        dirty, self._dirty = self._dirty, set()
        for workspace_id, thread_id in sorted(dirty):
            view = await self._desk.thread(workspace_id, thread_id)
            if view is not None:
                await self.consider(view)

    async def consider(self, view: ThreadView) -> int:
        """Decide for every agent on the thread; start the wakes. The thread's worst lag."""
        agents = [p for p in view.participants if p.name not in (PERSON, KRONII)]
        if not agents:
            return 0
        # What some agent has not read, and the last few besides (a message everyone has read may
        # still wait for an answer: dormancy).
        newer = await self._desk.newer(
            view, min(min(p.cursor for p in agents), max(0, view.last_seq - _CONTEXT))
        )
        sync_for = _pending_sync(view, newer)
        worst = 0
        for participant in agents:
            situation = self._situation(view, participant.name, newer, sync_for)
            worst = max(worst, situation.lag)
            decision = decide(situation)
            if decision.verdict is Verdict.WAKE:
                self._start(view, participant.name, decision)
        return worst

    def _situation(
        self, view: ThreadView, agent: str, newer: list[ThreadMessage], sync_for: str
    ) -> Situation:
        cursor = view.cursor(agent)
        record = self._registry.for_agent(view.workspace_id, agent)
        return Situation(
            agent=agent,
            thread=view,
            newer=tuple(m for m in newer if m.seq > cursor),
            read_unanswered=_read_unanswered(view, agent, newer),
            has_runtime=record is not None and record.status is not RuntimeStatus.OFFLINE,
            paused=bool(record and record.paused),
            active=(view.workspace_id, view.thread_id, agent) in self._active,
            sync_for=sync_for,
            now=self._clock.wall(),
            limits=self._limits,
        )

    def _start(self, view: ThreadView, agent: str, decision: Decision) -> None:
        assert decision.reason is not None
        trigger_id = wake_trigger_id(
            view.workspace_id, view.thread_id, agent, decision.reason, decision.upto_seq
        )
        if trigger_id in self._settled:
            return
        posted_at = max((m.at for m in decision.messages), default=self._clock.wall())
        wake = _Wake(view, agent, decision, trigger_id, posted_at)
        self._active[(view.workspace_id, view.thread_id, agent)] = wake
        task = asyncio.create_task(self._wake(wake), name=f"wake-{agent}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _wake(self, wake: _Wake) -> None:
        view, decision = wake.view, wake.decision
        assert decision.reason is not None
        self._metrics.wakes.labels(decision.reason.value).inc()
        command = TriggerCommand(
            trigger_id=wake.trigger_id,
            agent_id=wake.agent,
            workspace_id=view.workspace_id,
            thread_id=view.thread_id,
            prompt=wake_prompt(decision, view.workspace_id, view.thread_id, self._prompt_chars),
            reason=f"orchestrator: {decision.reason.value} up to #{decision.upto_seq}",
        )
        try:
            outcome = await self._triggers.trigger(command, _CLAIMS)
        except KroniiError as error:
            self._done(wake, settled=True)
            self._metrics.wake_outcomes.labels("refused").inc()
            await self._note(wake.view, f"{wake.trigger_id}-refused", f"could not wake {wake.agent}: {error}")
            return
        except Exception:
            self._done(wake, settled=False)
            log.exception("waking %s on %s failed", wake.agent, view.thread_id)
            return
        if outcome.duplicate:
            # Asked before (a restart, a second pass): its outcome was noted when it came. One still
            # in flight or deferred stays active until the supervisor finishes it (final()).
            if outcome.result not in _WAITING:
                self._done(wake, settled=True)
        elif outcome.result == Result.DEFERRED.value:
            await self._deferred(outcome)
        # A final outcome reached final() through the supervisor's outcome events already.

    async def final(self, outcome: TriggerOutcome) -> None:
        """A trigger's final outcome (every one the supervisor finishes passes here): a wake's is
        counted, audited and posted back to its thread."""
        if not outcome.trigger_id.startswith(_WAKE_PREFIX) or not outcome.thread_id:
            return
        wake = self._active.get((outcome.workspace_id, outcome.thread_id, outcome.agent_id))
        if wake is not None and wake.trigger_id == outcome.trigger_id:
            if outcome.result == Result.DELIVERED.value:
                self._metrics.wake_latency.observe(max(0.0, self._clock.wall() - wake.posted_at))
            self._done(wake, settled=True)
        self._metrics.wake_outcomes.labels(outcome.result or "failed").inc()
        await self._audited(outcome)
        await self._note(
            await self._thread_of(outcome),
            f"{outcome.trigger_id}-{outcome.result}",
            _outcome_sentence(outcome),
        )

    async def _deferred(self, outcome: TriggerOutcome) -> None:
        self._metrics.wake_outcomes.labels(Result.DEFERRED.value).inc()
        await self._audited(outcome)
        view = await self._thread_of(outcome)
        await self._note(view, f"{outcome.trigger_id}-deferred", _outcome_sentence(outcome))
        if outcome.error_code in _PERSON_TYPED and view is not None:
            # The person was at work in the pane before this thread wanted the agent: the same
            # episode's sync, once.
            began = self._episodes.setdefault(outcome.runtime_id, self._clock.wall())
            await self._sync(view, outcome.agent_id, f"sync-{outcome.runtime_id}-{int(began)}")

    async def _audited(self, outcome: TriggerOutcome) -> None:
        await self._audit(
            actor="orchestrator", action="supervisor.wake", subject=outcome.trigger_id, outcome=outcome.result,
            agent_id=outcome.agent_id, workspace_id=outcome.workspace_id, thread_id=outcome.thread_id,
            error_code=outcome.error_code,
        )  # fmt: skip

    async def _thread_of(self, outcome: TriggerOutcome) -> ThreadView | None:
        return await self._desk.thread(outcome.workspace_id, outcome.thread_id)

    def _done(self, wake: _Wake, *, settled: bool) -> None:
        """The wake is no longer in flight; a settled one is never asked for again in this process
        (its outcome is known: asking again would only hear it again)."""
        if settled:
            self._settled[wake.trigger_id] = None
            while len(self._settled) > _SETTLED_KEPT:
                self._settled.popitem(last=False)
        key = (wake.view.workspace_id, wake.view.thread_id, wake.agent)
        if self._active.get(key) is wake:
            del self._active[key]
            self.changed(wake.view.workspace_id, wake.view.thread_id)

    async def _note(
        self, view: ThreadView | None, key: str, text: str, *, kind: MessageKind = MessageKind.OUTCOME,
        to: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        """kronii's note on the thread, once per key; a thread or store that is away loses only the note
        (the audit trail has the outcome)."""
        if view is None:
            return
        new = NewMessage(
            workspace_id=view.workspace_id, thread_id=view.thread_id, author=KRONII, kind=kind, body=text,
            to=to, dedupe_key=_dedupe(key),
        )  # fmt: skip
        try:
            await self._desk.note(new)
        except KroniiError as error:
            log.warning("the %s note on %s was not posted: %s", kind.value, view.thread_id, error)

    def agent_state_changed(self, runtime_id: str, before: str, now: str) -> None:
        """A look at a pane read a person's text in the agent's input line (section 13.2's manual
        intervention): the threads it is on get a sync note before autonomous flow goes on."""
        if now == "draft" and before != "draft":
            self._episodes[runtime_id] = self._interventions[runtime_id] = self._clock.wall()
            self._kick.set()

    async def _sync_interventions(self) -> None:
        pending, self._interventions = self._interventions, {}
        if not pending:
            return
        views = await self._desk.recent_threads(self._clock.wall() - 86400)
        for runtime_id, at in pending.items():
            record = self._registry.get(runtime_id)
            if record is None:
                continue
            for view in views:
                if view.workspace_id == record.workspace_id and view.participant(record.agent_id) is not None:
                    await self._sync(view, record.agent_id, f"sync-{runtime_id}-{int(at)}")

    async def _sync(self, view: ThreadView, worker: str, key: str) -> None:
        """Section 13.2: the person worked in the worker's pane; the coordinator hears of it first."""
        if view.guard.blocked:
            return
        to = self._coordinator(view, worker) or worker
        text = f"a person is working in {worker}'s pane; look at what they did before the thread goes on"
        await self._note(view, key, text, kind=MessageKind.SYNC, to=(to,))

    def _coordinator(self, view: ThreadView, worker: str) -> str:
        for participant in view.participants:
            record: RuntimeRecord | None = self._registry.for_agent(view.workspace_id, participant.name)
            if participant.name != worker and record is not None and record.role in COORDINATOR_ROLES:
                return participant.name
        return ""


def _pending_sync(view: ThreadView, newer: list[ThreadMessage]) -> str:
    """The addressee of the latest sync note it has not read yet ("" : none)."""
    for message in reversed(newer):
        if message.kind is MessageKind.SYNC and message.to:
            name = message.to[0]
            return name if view.cursor(name) < message.seq else ""
    return ""


def _read_unanswered(view: ThreadView, agent: str, newer: list[ThreadMessage]) -> ThreadMessage | None:
    """The latest turn addressed to the agent that it has read, if it has posted nothing since."""
    cursor = view.cursor(agent)
    answered = False
    for message in reversed(newer):
        if message.author == agent and is_turn(message.kind):
            answered = True
        if message.seq <= cursor and addressed_to(message, agent) and message.kind is not MessageKind.SYNC:
            return None if answered else message
    return None


def _outcome_sentence(outcome: TriggerOutcome) -> str:
    who = outcome.agent_id
    if outcome.result == Result.DELIVERED.value:
        via = outcome.delivery_backend or "its pane"
        before = [step for step in outcome.fallback_chain if step != via]
        chain = f", after {' then '.join(before)}" if before else ""
        return f"woke {who}: delivered ({via}{chain}; acknowledged by {outcome.acked_by or 'its pane'})"
    if outcome.result == Result.DEFERRED.value:
        if outcome.error_code in _PERSON_TYPED:
            return (
                f"waking {who} is deferred: a person is typing in its pane; kronii tries again when they stop"
            )
        return f"waking {who} is deferred ({outcome.error_code}): {outcome.detail or 'kronii tries again shortly'}"
    if outcome.result == Result.ALREADY_ACTIVE.value:
        return f"{who} is already being woken ({outcome.error_code or 'in flight'})"
    detail = f": {outcome.detail}" if outcome.detail else ""
    return f"waking {who} {outcome.result} ({outcome.error_code or 'no code'}){detail}"


def _dedupe(key: str) -> str:
    return key[:128]
