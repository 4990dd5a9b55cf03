"""Section 18: the registry kept true in the background. A runtime whose process or pane is gone
goes offline (a superseded one stays superseded while it runs), a silent one turns idle, each live
agent's state is read off its screen (its session id looked for, its environment recorded), and the
gauges say how many are where."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from kronii.supervisor.core.agent_kinds import KindBook
from kronii.supervisor.core.agent_state import AgentState
from kronii.supervisor.core.agent_states import AgentStates
from kronii.supervisor.core.model import RuntimeRecord, RuntimeStatus
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.ports import AuditTrail, Clock, Panes, Runtimes, Terminal, TerminalError, TriggerState
from kronii.supervisor.usecases.relaunch_agent import AgentWorlds, SessionFinder, discover_session

__all__ = ["Reconciler"]

log = logging.getLogger(__name__)

# A new runtime's pane is looked at this often until its screen is read, for at most this long.
LEARN_STEP_SECS = 0.15
LEARN_SECS = 60.0


class Reconciler:
    def __init__(
        self,
        *,
        registry: Runtimes,
        state: TriggerState,
        panes: Panes,
        terminal: Terminal,
        audit: AuditTrail,
        metrics: SupervisorMetrics,
        params: SupervisorParams,
        kinds: KindBook,
        heartbeat_ttl_secs: float,
        agent_states: AgentStates,
        pid_alive: Callable[[int], bool],
        find_session: SessionFinder,
        clock: Clock,
        worlds: AgentWorlds | None = None,
    ) -> None:
        self._registry = registry
        self._worlds = worlds
        self._state = state
        self._panes = panes
        self._terminal = terminal
        self._audit = audit
        self._metrics = metrics
        self._params = params
        self._kinds = kinds
        self._heartbeat_ttl_secs = heartbeat_ttl_secs
        self._agent_states = agent_states
        self._pid_alive = pid_alive
        self._find_session = find_session
        self._clock = clock
        # Why tmux could not be asked, for the readiness report (empty while it answers).
        self.tmux_problem = ""
        self._learning: set[asyncio.Task[None]] = set()

    def learn(self, record: RuntimeRecord) -> None:
        """A runtime just started or registered: look at its pane at once and often until its
        screen is read (its idle screen known), so that screen is the agent's own, seen before a
        person could type into it, not whatever sits there at the first trigger."""
        task = asyncio.create_task(self._learn(record), name=f"learn-{record.runtime_id}")
        self._learning.add(task)
        task.add_done_callback(self._learning.discard)

    async def _learn(self, record: RuntimeRecord) -> None:
        deadline = self._clock.monotonic() + LEARN_SECS
        while self._clock.monotonic() < deadline:
            try:
                if await self._look_at(record) not in ("", "starting"):
                    return
            except Exception:
                log.exception("looking at the new runtime %s failed", record.runtime_id)
                return
            await asyncio.sleep(LEARN_STEP_SECS)

    async def reconcile_forever(self, every: float) -> None:
        while True:
            try:
                await self.reconcile(self._clock.wall())
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("reconciling the runtime registry failed")
            await asyncio.sleep(every)

    async def reconcile(self, now: float) -> None:
        """Section 18: heartbeat expiry and PID/PTY validation."""
        stale = 0
        self.tmux_problem = ""  # what this pass meets
        counts = dict.fromkeys(RuntimeStatus, 0)
        states = dict.fromkeys((state.value for state in AgentState), 0)
        for record in self._registry.all():
            if record.status is not RuntimeStatus.OFFLINE:
                reason = await self._gone(record)
                if reason:
                    record = await self._take_offline(record, reason, now)
                else:
                    state = await self._look_at(record)
                    if state in states:
                        states[state] += 1
                if (
                    not reason
                    and record.last_heartbeat_at is not None
                    and now - record.last_heartbeat_at > self._heartbeat_ttl_secs
                ):
                    stale += 1
                    if record.status is RuntimeStatus.ACTIVE:
                        record = await self._registry.change(record.runtime_id, status=RuntimeStatus.IDLE)
            counts[record.status] += 1
        for status, count in counts.items():
            self._metrics.runtimes.labels(status.value).set(count)
        for name, count in states.items():
            self._metrics.agent_states.labels(name).set(count)
        self._metrics.stale.set(stale)

    async def _gone(self, record: RuntimeRecord) -> str:
        """Why the runtime is gone (its process, its pane), or "" while it is there."""
        if record.pid and not self._pid_alive(record.pid):
            return f"pid {record.pid} is gone"
        if record.pty_backend == "tmux" and not await self._pane_alive(record.pty_target):
            return f"pane {record.pty_target} is gone"
        return ""

    async def _take_offline(self, record: RuntimeRecord, reason: str, now: float) -> RuntimeRecord:
        replaced = record.status is RuntimeStatus.SUPERSEDED
        if replaced:
            # Its process ended after a fresh session took its place: not a crash of the agent.
            reason = f"{reason} ({record.offline_reason})" if record.offline_reason else reason
        record = await self._registry.change(
            record.runtime_id, status=RuntimeStatus.OFFLINE, offline_reason=reason, operator_busy=False
        )
        if not replaced:
            await self._state.record_failure(
                record.workspace_id,
                record.agent_id,
                "offline",
                self._clock.monotonic(),
                self._params.crash_loop_window_secs,
            )
        await self._audit(
            actor="supervisor",
            action="supervisor.offline",
            subject=record.runtime_id,
            outcome="offline",
            reason=reason,
        )
        return record

    async def _look_at(self, record: RuntimeRecord) -> str:
        """Read the agent's state off its screen (for the list, the API and the gauge), and find its
        session id once the agent has written one. Without an answer from tmux the last state read
        stands ("" when none was)."""
        look = await self._panes.look(record.pty_target, record.pid, self._kinds.get(record.kind))
        if look.facts.unanswered:
            self.tmux_problem = look.facts.unanswered
            return self._agent_states.last(record.runtime_id)
        state = (
            look.facts.agent_state if look.facts.agent_in_foreground or not look.facts.exists else "exited"
        )
        self._agent_states.read(record.runtime_id, state)
        if not record.session_id:
            await discover_session(self._registry, self._find_session, record)
        if self._worlds is not None and record.status.current and state not in ("", "starting", "exited"):
            # Its environment as it runs, for a resume or fresh session after it is gone.
            await self._worlds.note(record)
        return state

    async def _pane_alive(self, target: str) -> bool:
        try:
            return await self._terminal.pane_exists(target)
        except (TerminalError, TimeoutError, OSError) as error:
            # pane_exists says False itself when tmux says the pane is gone; anything else is no
            # verdict: never mark a runtime offline on a failure to ask.
            self.tmux_problem = f"tmux unavailable: {error}"
            return True
