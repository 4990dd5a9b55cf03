"""Threads without PostgreSQL, for the orchestrator's in-process tests: the Threads port in memory,
with the store's rules (seq in order, a repeated dedupe_key answers the first, newcomers start
just before the message that names them, cursors never move back, the guard after each message).
The real store is checked against PostgreSQL in tests/integration/supervisor/test_threads_store.py."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace

from kronii.supervisor.core.threads import (
    GuardLimits,
    MessageKind,
    NewMessage,
    Participant,
    Posted,
    ThreadGuard,
    ThreadMessage,
    ThreadView,
    after_message,
)
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.usecases.orchestrate import Orchestrator
from kronii.supervisor.usecases.threads import ThreadDesk

from tests.unit.supervisor.trigger_fakes import FakeAudit, TriggerWorld

__all__ = ["FakeThreads", "OrchestratedWorld", "orchestrated"]


@dataclass
class _Thread:
    view: ThreadView
    messages: list[ThreadMessage] = field(default_factory=list)


class FakeThreads:
    def __init__(self) -> None:
        self.threads: dict[tuple[str, str], _Thread] = {}
        self._lock = asyncio.Lock()

    async def post(self, new: NewMessage, at: float, limits: GuardLimits) -> Posted:
        async with self._lock:
            key = (new.workspace_id, new.thread_id)
            thread = self.threads.setdefault(
                key, _Thread(ThreadView(new.workspace_id, new.thread_id, 0, at, at, ThreadGuard()))
            )
            if new.dedupe_key:
                for earlier in thread.messages:
                    if earlier.dedupe_key == new.dedupe_key:
                        return Posted(earlier, thread.view, duplicate=True)
            message = ThreadMessage(
                new.workspace_id, new.thread_id, thread.view.last_seq + 1, new.author, new.kind, new.body, at,
                new.to, new.finding_key, new.dedupe_key,
            )  # fmt: skip
            guard = after_message(thread.view.guard, message, limits)
            names = [n for n in dict.fromkeys((message.author, *message.to)) if n]
            if message.kind in (MessageKind.OUTCOME, MessageKind.BLOCKED):
                names = list(message.to)
            people = {p.name: p for p in thread.view.participants}
            for name in names:
                if name not in people:
                    people[name] = Participant(name, message.seq - 1, None)
                if name == message.author:
                    people[name] = replace(people[name], seen_at=at)
            thread.messages.append(message)
            blocked_now = guard.blocked and not thread.view.guard.blocked
            thread.view = replace(thread.view, last_seq=message.seq, updated_at=at, guard=guard,
                                  participants=tuple(sorted(people.values(), key=lambda p: p.name)))  # fmt: skip
            return Posted(message, thread.view, blocked_now=blocked_now)

    async def view(self, workspace_id: str, thread_id: str) -> ThreadView | None:
        thread = self.threads.get((workspace_id, thread_id))
        return thread.view if thread else None

    async def messages(
        self, workspace_id: str, thread_id: str, after: int, limit: int
    ) -> list[ThreadMessage]:
        thread = self.threads.get((workspace_id, thread_id))
        return [m for m in thread.messages if m.seq > after][:limit] if thread else []

    async def move_cursor(self, workspace_id: str, thread_id: str, name: str, cursor: int, at: float) -> int:
        thread = self.threads[(workspace_id, thread_id)]
        people = {p.name: p for p in thread.view.participants}
        old = people.get(name, Participant(name))
        people[name] = Participant(name, max(old.cursor, cursor), at)
        thread.view = replace(thread.view, participants=tuple(sorted(people.values(), key=lambda p: p.name)))
        return people[name].cursor

    async def list_threads(
        self, workspace_id: str, *, blocked_only: bool = False, since: float | None = None
    ) -> list[ThreadView]:
        views = [t.view for t in self.threads.values()]
        return [
            v for v in views
            if (not workspace_id or v.workspace_id == workspace_id)
            and (not blocked_only or v.guard.blocked)
            and (since is None or v.updated_at >= since)
        ]  # fmt: skip

    async def set_blocked(
        self, workspace_id: str, thread_id: str, blocked: bool, reason: str, at: float
    ) -> bool:
        thread = self.threads.get((workspace_id, thread_id))
        if thread is None:
            return False
        was = thread.view.guard.blocked
        guard = ThreadGuard(blocked=True, blocked_reason=reason) if blocked else ThreadGuard()
        thread.view = replace(thread.view, guard=guard, updated_at=at)
        return was

    def bodies(self, workspace_id: str, thread_id: str, kind: MessageKind) -> list[str]:
        return [m.body for m in self.threads[(workspace_id, thread_id)].messages if m.kind is kind]


@dataclass
class OrchestratedWorld:
    world: TriggerWorld
    store: FakeThreads
    desk: ThreadDesk
    orchestrator: Orchestrator
    audit: FakeAudit

    def restart(self) -> Orchestrator:
        """A new orchestrator over the same threads and supervisor state (its memory is gone)."""
        self.orchestrator = _orchestrator(self.world, self.desk, self.audit)
        return self.orchestrator


def _orchestrator(world: TriggerWorld, desk: ThreadDesk, audit: FakeAudit) -> Orchestrator:
    from kronii.supervisor.core.wake_policy import WakeLimits
    from prometheus_client import CollectorRegistry

    orchestrator = Orchestrator(
        desk=desk, triggers=world.desk.triggers, registry=world.registry, audit=audit,
        metrics=SupervisorMetrics(CollectorRegistry()), clock=world.clock,
        limits=WakeLimits(lag_messages=10, dormancy_secs=300), prompt_chars=1000,
    )  # fmt: skip
    world.bus.listeners.append(orchestrator.final)
    return orchestrator


def orchestrated(world: TriggerWorld) -> OrchestratedWorld:
    from prometheus_client import CollectorRegistry

    store, audit = FakeThreads(), FakeAudit()
    desk = ThreadDesk(
        store=store, registry=world.registry, acks=world.acks.board, state=world.state, audit=audit,
        metrics=SupervisorMetrics(CollectorRegistry()), clock=world.clock, limits=GuardLimits(),
    )  # fmt: skip
    return OrchestratedWorld(world, store, desk, _orchestrator(world, desk, audit), audit)
