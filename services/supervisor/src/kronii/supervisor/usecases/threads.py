"""Threads as agents and the person use them (seed 002, sections 8.4 and 12): post a message (its
body redacted before it is stored, durable before the answer), read what is new (which moves the
reader's cursor: an acknowledgement of a trigger awaiting that agent), wait for a message addressed
to the reader, list threads, unblock one. Who posts is who the token says: a runtime's own token is
its agent, a person's local token is "person", another service its subject."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from kronii.foundation.errors import InvalidArgument, NotFound, PermissionDenied
from kronii.supervisor.core.job import require_id
from kronii.supervisor.core.model import RuntimeRecord
from kronii.supervisor.core.threads import (
    KRONII,
    PERSON,
    POSTABLE,
    GuardLimits,
    MessageKind,
    NewMessage,
    Posted,
    ThreadMessage,
    ThreadView,
    unread_for,
)
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.ports import AuditTrail, Clock, Runtimes, Threads, TriggerState
from kronii.supervisor.usecases.access import need
from kronii.supervisor.usecases.acknowledge import AckBoard
from kronii.supervisor.usecases.redact_text import redact_text

__all__ = ["ReadQuery", "ThreadDesk", "ThreadRead"]

MAX_BODY_CHARS = 16_000
MAX_RECIPIENTS = 32
MAX_READ = 500
MAX_WAIT_SECS = 120.0


@dataclass(frozen=True, slots=True)
class ReadQuery:
    workspace_id: str
    thread_id: str
    after: int = 0
    limit: int = 100
    peek: bool = False
    wait_secs: float = 0.0
    # Everything from the first message, not only what is new to the reader.
    all: bool = False


@dataclass(frozen=True, slots=True)
class ThreadRead:
    messages: tuple[ThreadMessage, ...]
    thread: ThreadView
    cursor: int


class ThreadDesk:
    def __init__(
        self,
        *,
        store: Threads,
        registry: Runtimes,
        acks: AckBoard,
        state: TriggerState,
        audit: AuditTrail,
        metrics: SupervisorMetrics,
        clock: Clock,
        limits: GuardLimits,
    ) -> None:
        self._store = store
        self._registry = registry
        self._acks = acks
        self._state = state
        self._audit = audit
        self._metrics = metrics
        self._clock = clock
        self._limits = limits
        self._bells: dict[tuple[str, str], asyncio.Event] = {}
        self._listeners: list[Callable[[str, str], None]] = []
        self._blocked_listeners: list[Callable[[ThreadView, str], Awaitable[None]]] = []

    def on_change(self, listener: Callable[[str, str], None]) -> None:
        """`listener(workspace_id, thread_id)` after every post and every cursor that moved."""
        self._listeners.append(listener)

    def on_blocked(self, listener: Callable[[ThreadView, str], Awaitable[None]]) -> None:
        """`listener(thread, reason)` once when a thread's guard blocks it (the person is told)."""
        self._blocked_listeners.append(listener)

    # ---- who is asking -----------------------------------------------------------------------------

    def _own_runtime(self, claims: Claims) -> RuntimeRecord | None:
        runtime_id = _runtime_of(claims)
        return self._registry.get(runtime_id) if runtime_id else None

    def author_of(self, claims: Claims, workspace_id: str, scope: str = "trigger") -> str:
        """The participant a caller is: a runtime's token is its agent (in its own workspace only);
        any other caller needs `scope` there."""
        runtime_id = _runtime_of(claims)
        if runtime_id:
            record = self._registry.get(runtime_id)
            if record is None:
                raise PermissionDenied(
                    f"the runtime {runtime_id!r} this token was issued to is not registered"
                )
            if record.workspace_id != workspace_id:
                raise PermissionDenied(
                    f"agent {record.agent_id!r} is in workspace {record.workspace_id!r}, not {workspace_id!r}"
                )
            return record.agent_id
        need(claims, scope, workspace_id)
        return PERSON if claims.subject.startswith("cli:") else claims.subject

    # ---- post --------------------------------------------------------------------------------------

    async def post(self, new: NewMessage, claims: Claims) -> Posted:
        _check_ids(new.workspace_id, new.thread_id)
        author = self.author_of(claims, new.workspace_id)
        if new.kind not in POSTABLE:
            raise InvalidArgument(
                f"kind {new.kind.value!r} is kronii's own; post one of {', '.join(sorted(k.value for k in POSTABLE))}"
            )
        return await self.note(replace(new, author=author))

    async def note(self, new: NewMessage) -> Posted:
        """Post as given (kronii's own notes and the person's accepted offers come here directly)."""
        _check_ids(new.workspace_id, new.thread_id)
        to = tuple(dict.fromkeys(name.strip() for name in new.to if name.strip()))
        for name in to:
            require_id("to", name)
        if len(to) > MAX_RECIPIENTS:
            raise InvalidArgument(f"at most {MAX_RECIPIENTS} recipients (got {len(to)})")
        if not new.body.strip():
            raise InvalidArgument("the message is empty")
        if len(new.body) > MAX_BODY_CHARS:
            raise InvalidArgument(f"the message is {len(new.body)} characters; at most {MAX_BODY_CHARS}")
        body = redact_text(new.body)
        if body is None:
            raise InvalidArgument(
                "the message could not be made safe to store (redaction refused it); nothing was posted"
            )
        if new.dedupe_key:
            require_id("dedupe_key", new.dedupe_key)
        posted = await self._store.post(
            replace(new, to=to, body=body, finding_key=new.finding_key.strip()),
            self._clock.wall(),
            self._limits,
        )
        if posted.duplicate:
            return posted
        self._metrics.thread_messages.labels(kind=posted.message.kind.value).inc()
        if posted.blocked_now:
            await self._blocked(posted)
        self._ring(posted.message.workspace_id, posted.message.thread_id)
        return posted

    async def _blocked(self, posted: Posted) -> None:
        """Section 14: the guard tripped. The thread says so (to the person), the audit trail too."""
        view = posted.thread
        reason = view.guard.blocked_reason
        await self._audit(
            actor=KRONII, action="supervisor.thread_blocked", subject=f"{view.workspace_id}/{view.thread_id}",
            outcome="THREAD_AUTO_BLOCKED", reason=reason, seq=posted.message.seq,
        )  # fmt: skip
        await self._store.post(
            NewMessage(
                workspace_id=view.workspace_id,
                thread_id=view.thread_id,
                author=KRONII,
                kind=MessageKind.BLOCKED,
                to=(PERSON,),
                dedupe_key=f"blocked-{posted.message.seq}",
                body=f"THREAD_AUTO_BLOCKED: {reason}. No agent is woken on this thread until a person runs "
                f"`kronii thread unblock {view.thread_id} --workspace {view.workspace_id}`.",
            ),
            self._clock.wall(),
            self._limits,
        )
        for listener in self._blocked_listeners:
            await listener(view, reason)

    # ---- read --------------------------------------------------------------------------------------

    async def read(self, query: ReadQuery, claims: Claims) -> ThreadRead:
        _check_ids(query.workspace_id, query.thread_id)
        reader = self.author_of(claims, query.workspace_id, "read")
        if not 1 <= query.limit <= MAX_READ:
            raise InvalidArgument(f"limit must be 1 to {MAX_READ}")
        if not 0 <= query.wait_secs <= MAX_WAIT_SECS:
            raise InvalidArgument(f"wait must be 0 to {MAX_WAIT_SECS:.0f} seconds")
        view = await self._store.view(query.workspace_id, query.thread_id)
        if view is None and query.wait_secs <= 0:
            raise NotFound(f"no thread {query.thread_id!r} in workspace {query.workspace_id!r}")
        if query.wait_secs > 0:
            view = await self._wait_for_mail(query, reader, view)
            if view is None:
                raise NotFound(
                    f"no thread {query.thread_id!r} in workspace {query.workspace_id!r} (waited {query.wait_secs:.0f} s)"
                )
        assert view is not None
        cursor = view.cursor(reader)
        after = 0 if query.all else (query.after or cursor)
        messages = await self._store.messages(query.workspace_id, query.thread_id, after, query.limit)
        if messages and not query.peek and messages[-1].seq > cursor:
            cursor = await self._moved(query.workspace_id, query.thread_id, reader, messages[-1].seq, claims)
        return ThreadRead(tuple(messages), view, cursor)

    async def _wait_for_mail(
        self, query: ReadQuery, reader: str, view: ThreadView | None
    ) -> ThreadView | None:
        deadline = self._clock.monotonic() + query.wait_secs
        while True:
            if view is not None:
                newer = await self._store.messages(
                    query.workspace_id, query.thread_id, view.cursor(reader), MAX_READ
                )
                if unread_for(newer, reader, view.cursor(reader)):
                    return view
            left = deadline - self._clock.monotonic()
            if left <= 0:
                return view
            bell = self._bells.setdefault((query.workspace_id, query.thread_id), asyncio.Event())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(bell.wait(), timeout=min(left, 5.0))
            view = await self._store.view(query.workspace_id, query.thread_id)

    async def _moved(self, workspace_id: str, thread_id: str, reader: str, seq: int, claims: Claims) -> int:
        cursor = await self._store.move_cursor(workspace_id, thread_id, reader, seq, self._clock.wall())
        # Section 12: a reader's cursor moving on its thread acknowledges the trigger that woke it.
        record = self._registry.for_agent(workspace_id, reader) if reader not in (PERSON, KRONII) else None
        if record is not None:
            await self._state.bump_progress(record.runtime_id)
            self._acks.acknowledge_runtime(record.runtime_id, "cursor")
        self._ring(workspace_id, thread_id)
        return cursor

    def _ring(self, workspace_id: str, thread_id: str) -> None:
        bell = self._bells.pop((workspace_id, thread_id), None)
        if bell is not None:
            bell.set()
        for listener in self._listeners:
            listener(workspace_id, thread_id)

    # ---- list, view, unblock -----------------------------------------------------------------------

    async def list_threads(self, workspace_id: str, blocked_only: bool, claims: Claims) -> list[ThreadView]:
        """The threads the caller may see: a runtime's own token, those of its workspace."""
        record = self._own_runtime(claims)
        if record is not None:
            workspace_id = workspace_id or record.workspace_id
        if workspace_id:
            require_id("workspace_id", workspace_id)
        if record is not None:
            self.author_of(claims, workspace_id)
        else:
            need(claims, "read", workspace_id or None)
        views = await self._store.list_threads(workspace_id, blocked_only=blocked_only)
        return [v for v in views if claims.allows_workspace(v.workspace_id)]

    async def newer(self, view: ThreadView, after: int) -> list[ThreadMessage]:
        return await self._store.messages(view.workspace_id, view.thread_id, after, MAX_READ)

    async def thread(self, workspace_id: str, thread_id: str) -> ThreadView | None:
        return await self._store.view(workspace_id, thread_id)

    async def recent_threads(self, since: float) -> list[ThreadView]:
        """Every workspace's threads touched since `since` (epoch seconds)."""
        return await self._store.list_threads("", since=since)

    async def unblock(self, workspace_id: str, thread_id: str, reason: str, claims: Claims) -> bool:
        _check_ids(workspace_id, thread_id)
        if not claims.has("operate"):
            raise PermissionDenied("unblocking a thread needs the 'operate' scope")
        view = await self._store.view(workspace_id, thread_id)
        if view is None:
            raise NotFound(f"no thread {thread_id!r} in workspace {workspace_id!r}")
        was = await self._store.set_blocked(workspace_id, thread_id, False, "", self._clock.wall())
        await self._audit(
            actor=claims.subject, action="supervisor.thread_unblock", subject=f"{workspace_id}/{thread_id}",
            outcome="unblocked", reason=reason, was_blocked=was,
        )  # fmt: skip
        self._ring(workspace_id, thread_id)
        return was


def _runtime_of(claims: Claims) -> str:
    """The runtime a runtime's own token was issued to ("" for any other caller's)."""
    return next((s.removeprefix("runtime:") for s in claims.scopes if s.startswith("runtime:")), "")


def _check_ids(workspace_id: str, thread_id: str) -> None:
    require_id("workspace_id", workspace_id)
    require_id("thread_id", thread_id)
