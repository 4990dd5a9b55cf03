"""One trigger's lifecycle, driven through the core's table (core/machine.py): admission (what the
pane, the runtime and the guard counters say), then the effects the machine asks for: type the
prompt, wait for the agent to take it, resume or spawn, defer or finish. One delivery at a time per
pane, in arrival order."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections import deque
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any

from kronii.supervisor.core.agent_history import HistoryMark
from kronii.supervisor.core.agent_kinds import AgentKind, KindBook
from kronii.supervisor.core.agent_state import Delivery
from kronii.supervisor.core.job import SESSION_KINDS, Job, admission_detail
from kronii.supervisor.core.machine import (
    Defer,
    Deliver,
    Effect,
    EmitCollision,
    Finish,
    LaunchResume,
    LaunchSpawn,
    MarkOperatorBusy,
    Resubmit,
    TriggerMachine,
    WaitAck,
)
from kronii.supervisor.core.model import (
    CollisionGate,
    GuardFacts,
    PaneFacts,
    RuntimeFacts,
    RuntimeRecord,
    Situation,
    Snapshot,
)
from kronii.supervisor.core.pane_reports import Baseline
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.payload import Payload
from kronii.supervisor.core.policy import ThreadState, assess, observe_turn, override_audit
from kronii.supervisor.core.table import Phase, Signal
from kronii.supervisor.core.trigger import TriggerOutcome
from kronii.supervisor.ports import Clock, TerminalError
from kronii.supervisor.usecases.relaunch_agent import Relauncher
from kronii.supervisor.usecases.trigger_parts import AgentSide, TriggerBooks

__all__ = ["Gathered", "TriggerLifecycle"]

# How often an awaited agent's own history file is read (the screen is looked at every 20 ms).
HISTORY_EVERY_SECS = 0.2

# What admission reads before it decides: the guard counters, one look at the pane, the pid alive.
Gathered = tuple[Snapshot, PaneFacts | None, bool]


class TriggerLifecycle:
    def __init__(
        self,
        *,
        agent: AgentSide,
        books: TriggerBooks,
        relauncher: Relauncher,
        params: SupervisorParams,
        kinds: KindBook,
        clock: Clock,
    ) -> None:
        self._registry, self._panes, self._acks = agent.registry, agent.panes, agent.acks
        self._agent_states, self._pid_alive = agent.agent_states, agent.pid_alive
        # The input broker's hold on the desktop the panes are on, at a given time (desktop_watch.py).
        self._desktop_hold = agent.desktop_hold
        self._histories = agent.histories
        # Where each awaited agent's own history ended before its prompt was typed (by trigger_id).
        self._history_marks: dict[str, HistoryMark] = {}
        self._state, self._trigger_log = books.state, books.trigger_log
        self._outcomes, self._metrics = books.outcomes, books.metrics
        self._relauncher = relauncher
        self._params = params
        self.kinds = kinds
        self._clock = clock
        self._side_tasks: set[asyncio.Task[Any]] = set()
        # One delivery in flight per pane: each prompt is typed, submitted and confirmed before
        # the next one for that pane starts (asyncio.Lock hands the pane over in arrival order).
        self._pane_locks: dict[str, asyncio.Lock] = {}

    def lease(self, job: Job) -> float:
        # Long enough for every delivery attempt and every start of the fallback chain.
        start = max(kind.start_timeout_secs for kind in self.kinds.kinds.values())
        return (
            job.ack_timeout_secs * (self._params.ack_retries + 1)
            + (self._params.resume_max_attempts + 1) * start
            + 30
        )

    def target(self, job: Job) -> RuntimeRecord | None:
        if job.runtime_id:
            record = self._registry.get(job.runtime_id)
            if record is not None and record.status.current:
                return record
            if record is not None and (record.agent_id, record.workspace_id) == (
                job.agent_id,
                job.workspace_id,
            ):
                return self._registry.for_agent(job.workspace_id, job.agent_id) or record
        return self._registry.for_agent(job.workspace_id, job.agent_id)

    async def gather(self, job: Job, record: RuntimeRecord | None, kind: AgentKind, now: float) -> Gathered:
        """Reads only (Redis counters, one look at the pane), so a trigger can start them while its
        trigger_id is being checked for a repeat."""
        alive = (self._pid_alive(record.pid) if record.pid else True) if record is not None else False
        look = (
            record is not None and record.status.current and alive and not (record.paused and not job.force)
        )
        snapshot_call = self._state.snapshot(
            workspace_id=job.workspace_id,
            agent_id=job.agent_id,
            thread_id=job.thread_id,
            runtime_id=record.runtime_id if record else "",
            now=now,
            rate_window=self._params.rate_window_secs,
            crash_window=self._params.crash_loop_window_secs,
        )
        if look:
            assert record is not None
            snap, seen = await asyncio.gather(
                snapshot_call, self._panes.look(record.pty_target, record.pid, kind)
            )
            pane: PaneFacts | None = seen.facts
            if not seen.facts.unanswered:  # no answer from tmux leaves the last state read
                self._agent_states.read(record.runtime_id, seen.facts.agent_state)
        else:
            snap, pane = await snapshot_call, None
        return snap, pane, alive

    async def _situation(
        self,
        job: Job,
        record: RuntimeRecord | None,
        kind: AgentKind,
        now: float,
        gathered: Gathered | None = None,
    ) -> Situation:
        snap, pane, alive = gathered or await self.gather(job, record, kind, now)
        guards = self._guards(job, snap)
        # `now` is monotonic; what tmux, the registry and the broker stamp is wall time: each is
        # moved onto the monotonic clock here, at one reading of both.
        wall = self._clock.wall()
        shift = now - wall
        hold = self._desktop_hold(wall)
        if hold is not None and hold.until is not None:
            hold = replace(hold, until=hold.until + shift)
        if pane is not None and pane.human_activity_at is not None:
            pane = replace(pane, human_activity_at=pane.human_activity_at + shift)
        if record is None:
            return Situation(
                runtime=None, pane=None, guards=guards, force_override=job.force, desktop_hold=hold
            )
        facts = _runtime_facts(record, alive=alive, shift=shift)
        return Situation(runtime=facts, pane=pane, guards=guards, force_override=job.force, desktop_hold=hold)

    def _guards(self, job: Job, snap: Snapshot) -> GuardFacts:
        """The guard counters as the table reads them. On the job's first admission its turn is
        observed on the thread (blocked, or repeating without progress) and the thread's state
        stored in the background; later admissions of the same job do not count it again."""
        blocked = loop = False
        if not job.admitted:
            verdict = observe_turn(
                ThreadState.from_dict(snap.thread) if snap.thread else ThreadState(),
                prompt_hash=hashlib.sha256(job.prompt.encode()).hexdigest()[:32],
                progress_marker=job.progress_marker,
                finding_key=job.finding_key,
                progress_epoch=snap.progress_epoch,
                params=self._params,
            )
            self._background(
                self._state.put_thread_state(job.agent_id, job.thread_id, verdict.state.to_dict())
            )
            blocked, loop = verdict.blocked, verdict.loop
            job.admitted = True
        return GuardFacts(
            recent_attempts=snap.attempts,
            recent_failures=snap.failures,
            consecutive_failures=snap.streak,
            last_failure_at=snap.last_failure_at,
            thread_blocked=blocked,
            repeats_without_progress=loop,
        )

    def _background(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.create_task(coro)
        self._side_tasks.add(task)
        task.add_done_callback(self._side_tasks.discard)

    async def advance(self, job: Job, gathered: Gathered | None = None) -> TriggerOutcome:
        while True:
            record = self.target(job)
            if record is None:
                return await self._advance_on(job, record, gathered)
            lock = self._pane_locks.setdefault(record.pty_target, asyncio.Lock())
            if lock.locked():
                gathered = None  # what was seen before waiting for the pane is stale by then
            async with lock:
                now_target = self.target(job)
                # The agent moved to another pane (a spawn) while this one waited: queue there.
                if now_target is None or now_target.pty_target == record.pty_target:
                    return await self._advance_on(job, now_target, gathered)

    def _machine(self, job: Job, record: RuntimeRecord | None, kind: AgentKind) -> TriggerMachine:
        params = replace(self._params, ack_timeout_secs=job.ack_timeout_secs)
        if job.machine:
            return TriggerMachine.from_dict(params, job.machine)
        # The session id of a Codex or Claude Code runtime may still be found in its files when
        # the resume runs (the reconcile loop looks for it meanwhile); never on the delivery path.
        findable = record is not None and (bool(record.session_id) or record.kind in SESSION_KINDS)
        return TriggerMachine(
            params, can_resume=kind.can_resume and findable, can_spawn=kind.can_spawn and record is not None
        )

    async def _advance_on(
        self, job: Job, record: RuntimeRecord | None, gathered: Gathered | None
    ) -> TriggerOutcome:
        """One step of the trigger's lifecycle, holding its pane."""
        kind = self.kinds.get(record.kind if record else "generic")
        machine = self._machine(job, record, kind)
        if machine.phase in (Phase.DELIVERING, Phase.AWAITING_ACK):
            # The record says the bytes were written before the supervisor stopped: look, never
            # type again.
            effects = deque(machine.handle(Signal.RESTARTED_AFTER_WRITE, self._clock.monotonic()))
            self._trigger_log.attempt(
                job.trigger_id, "recover", "written_before_restart", runtime_id=job.runtime_id
            )
        else:
            effects, record = await self._admit(job, machine, record, kind, gathered)
        payload = Payload(job.prompt, job.literal)
        while effects:
            effect = effects.popleft()
            signal = await self._perform(effect, job, machine, record, kind, payload)
            if isinstance(effect, Finish):
                finished_on = self.target(job) if effect.backend.value == "spawn" else record
                return await self._outcomes.finish(job, machine, effect, finished_on)
            if isinstance(effect, Defer):
                return await self._outcomes.defer(job, machine, effect, record)
            if signal is not None:
                if signal in (Signal.SPAWN_OK, Signal.RESUME_OK):
                    record = self.target(job) or record
                effects.extend(machine.handle(signal, self._clock.monotonic()))
        raise RuntimeError(f"trigger {job.trigger_id}: the lifecycle stopped in phase {machine.phase.value}")

    async def _admit(
        self,
        job: Job,
        machine: TriggerMachine,
        record: RuntimeRecord | None,
        kind: AgentKind,
        gathered: Gathered | None,
    ) -> tuple[deque[Effect], RuntimeRecord | None]:
        """Admission: what the runtime, its pane and the guard counters allow now."""
        now = self._clock.monotonic()
        situation = await self._situation(job, record, kind, now, gathered)
        verdict = assess(situation, machine.params, now, machine.busy_since)
        if job.force or verdict.collision_gate is not CollisionGate.NOT_EVALUATED:
            job.gate = verdict.collision_gate.value
        job.detail = admission_detail(verdict.signal, situation)
        effects = deque(
            machine.handle(verdict.signal, now, defer_until=verdict.defer_until, code=verdict.code)
        )
        self._trigger_log.attempt(
            job.trigger_id,
            "admit",
            verdict.signal.value,
            code=verdict.code.value if verdict.code else "",
            agent_state=situation.pane.agent_state if situation.pane else "",
            **override_audit(
                requested=job.force, reason=job.reason, gate=verdict.collision_gate, applied=job.force
            ),
        )
        if record is not None and verdict.signal is Signal.RUNTIME_READY and record.operator_busy:
            record = await self._registry.change(record.runtime_id, operator_busy=False)
        return effects, record

    async def _perform(
        self,
        effect: Effect,
        job: Job,
        machine: TriggerMachine,
        record: RuntimeRecord | None,
        kind: AgentKind,
        payload: Payload,
    ) -> Signal | None:
        match effect:
            case Deliver(attempt=attempt):
                assert record is not None
                return await self._deliver(job, machine, record, kind, payload, attempt)
            case WaitAck(deadline=deadline):
                assert record is not None
                return await self._wait_ack(job, machine, record, kind, payload, deadline)
            case LaunchResume(attempt=attempt):
                assert record is not None
                return await self._relauncher.resume(job, record, kind, attempt)
            case LaunchSpawn(reason=reason):
                assert record is not None
                return await self._relauncher.respawn(job, record, kind, reason)
            case MarkOperatorBusy():
                if record is not None and not record.operator_busy:
                    await self._registry.change(record.runtime_id, operator_busy=True)
            case EmitCollision(busy_since=busy_since):
                await self._outcomes.emit_collision(job, machine, record, busy_since)
        # Resubmit, Finish and Defer ask nothing of the pane here (the caller ends on the last two).
        return None

    async def _deliver(
        self,
        job: Job,
        machine: TriggerMachine,
        record: RuntimeRecord,
        kind: AgentKind,
        payload: Payload,
        attempt: int,
    ) -> Signal:
        self._background(
            self._state.record_attempt(
                job.agent_id,
                job.thread_id,
                job.trigger_id,
                attempt,
                self._clock.monotonic(),
                self._params.rate_window_secs,
            )
        )
        try:
            if attempt == 1:
                base = await self._panes.baseline(record.pty_target, payload, kind)
                job.echoes_before, job.was_working = base.echoes, base.working
                await self._mark_history(job, record, kind)
                job.runtime_id = record.runtime_id
                # Durable before the first byte: after a crash the record says "written", so the
                # prompt is looked for, never typed again.
                job.machine = machine.to_dict()
                await self._state.enqueue(job, self._clock.monotonic() + self.lease(job))
            written = await self._panes.write(record.pty_target, payload, kind, attempt=attempt)
        except (TerminalError, TimeoutError) as error:
            self._trigger_log.attempt(
                job.trigger_id, "deliver", "write_failed", attempt=attempt, error=str(error)[:200]
            )
            job.detail = f"writing to pane {record.pty_target} failed: {error}"
            return Signal.WRITE_FAILED
        if written.removed:
            self._trigger_log.attempt(
                job.trigger_id, "deliver", "taken_back", attempt=attempt, why=written.removed[:200]
            )
            job.detail = (
                f"{written.removed}; it was taken back key for key and nothing was submitted"
                f" (pane {record.pty_target})"
            )
            return Signal.PERSON_KEYS_WHILE_TYPING if written.person_typed else Signal.TAKEN_BACK
        self._trigger_log.attempt(
            job.trigger_id,
            "deliver",
            "nothing_to_resend" if written.nothing else "written",
            attempt=attempt,
            runtime_id=record.runtime_id,
            submit_only=written.submit_only,
            literal=payload.literal,
        )
        return Signal.WRITTEN

    async def _wait_ack(
        self,
        job: Job,
        machine: TriggerMachine,
        record: RuntimeRecord,
        kind: AgentKind,
        payload: Payload,
        deadline: float,
    ) -> Signal:
        """Taken only when the agent shows it: the prompt left the box and its echo appeared or the
        agent started working; or a hook acknowledged it."""
        event = self._acks.expect(job.trigger_id, record.runtime_id)
        before = Baseline(job.echoes_before, job.was_working)
        # Taken is looked for at once; the prompt still in the box counts as typed-not-submitted
        # only after the kind's verify delay (the agent may not have read the key yet).
        patience = self._clock.monotonic() + (0 if machine.recovered else kind.verify_delay_secs)
        # The agent's history file is read at most every HISTORY_EVERY_SECS, not on each 20 ms look.
        history_due = self._clock.monotonic()
        try:
            while True:
                if event.is_set():
                    job.acked_by = self._acks.source(job.trigger_id)
                    return Signal.ACKED
                seen = await self._panes.check(record.pty_target, payload, kind, before)
                if seen is Delivery.SUBMITTED:
                    job.acked_by = "record" if machine.recovered else "output"
                    return Signal.ACKED
                if self._clock.monotonic() >= history_due:
                    history_due = self._clock.monotonic() + HISTORY_EVERY_SECS
                    if await self._in_history(job, payload):
                        job.acked_by = "history"
                        return Signal.ACKED
                if (
                    seen is Delivery.TYPED
                    and not job.typed_not_submitted
                    and self._clock.monotonic() >= patience
                ):
                    await self._typed_not_submitted(job, machine, record, kind, payload)
                remaining = deadline - self._clock.monotonic()
                if remaining <= 0 or seen is Delivery.GONE:
                    taken_back = seen is Delivery.TYPED and await self._panes.clear_typed(
                        record.pty_target, payload, kind
                    )
                    return self._ack_missing(job, record, seen, taken_back=taken_back)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), min(0.02, remaining))
        finally:
            self._acks.stop_expecting(job.trigger_id, record.runtime_id)
            self._history_marks.pop(job.trigger_id, None)
            self._panes.done_with(record.pty_target)

    async def _mark_history(self, job: Job, record: RuntimeRecord, kind: AgentKind) -> None:
        """Where the agent's own history ends before its prompt is typed (kinds that keep one)."""
        if self._histories is None or not kind.history_files:
            return
        try:
            mark = await self._histories.mark(record, kind)
        except OSError:
            mark = None
        if mark is not None:
            self._history_marks[job.trigger_id] = mark

    async def _in_history(self, job: Job, payload: Payload) -> bool:
        """The agent recorded the prompt as taken in its own history since the mark."""
        mark = self._history_marks.get(job.trigger_id)
        if self._histories is None or mark is None:
            return False
        try:
            return await self._histories.took(mark, payload.text)
        except OSError:
            return False

    async def _typed_not_submitted(
        self, job: Job, machine: TriggerMachine, record: RuntimeRecord, kind: AgentKind, payload: Payload
    ) -> None:
        job.typed_not_submitted = True
        self._metrics.typed_not_submitted.inc()
        effects = machine.handle(Signal.TYPED_NOT_SUBMITTED, self._clock.monotonic())
        if any(isinstance(e, Resubmit) for e in effects):
            await self._panes.resubmit(record.pty_target, payload, kind)
            self._trigger_log.attempt(
                job.trigger_id, "resubmit", "typed_not_submitted", runtime_id=record.runtime_id
            )

    def _ack_missing(
        self, job: Job, record: RuntimeRecord, seen: Delivery, *, taken_back: bool = False
    ) -> Signal:
        """No ack by the deadline, or the pane went away: why, in the job's detail."""
        self._trigger_log.attempt(
            job.trigger_id, "ack", "timeout", runtime_id=record.runtime_id, seen=seen.value
        )
        if seen is Delivery.TYPED:
            job.detail = "the prompt stayed in the agent's input box: the submit key did not send it" + (
                "; it was taken back key for key" if taken_back else ""
            )
            return Signal.STUCK_IN_BOX
        job.detail = (
            "the pane went away before the agent took the prompt"
            if seen is Delivery.GONE
            else f"the prompt left the input box but the agent showed no sign of taking it within {job.ack_timeout_secs:g} s"
        )
        return Signal.ACK_TIMEOUT


def _runtime_facts(record: RuntimeRecord, *, alive: bool, shift: float) -> RuntimeFacts:
    """What the table needs of the registered runtime, its heartbeat moved onto the monotonic
    clock by `shift` (monotonic minus wall, read once)."""
    return RuntimeFacts(
        runtime_id=record.runtime_id,
        kind=record.kind,
        managed=record.managed,
        status=record.status,
        pid_alive=alive,
        paused=record.paused,
        session_id=record.session_id,
        last_heartbeat_at=None if record.last_heartbeat_at is None else record.last_heartbeat_at + shift,
    )
