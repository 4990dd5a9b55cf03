"""Threads in PostgreSQL (tables.py: supervisor_threads, _thread_messages, _thread_cursors). A post
is one transaction that locks its thread's row, so two authors posting at once get seq n and n+1 and
the guard sees both; it returns only once committed (nothing is acknowledged before it is durable).
A repeated dedupe_key answers the message it first made."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kronii.foundation.errors import Unavailable
from kronii.supervisor.adapters.tables import thread_cursors, thread_messages, threads
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
from sqlalchemy import and_, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

__all__ = ["ThreadStore"]


def _dt(at: float) -> datetime:
    return datetime.fromtimestamp(at, UTC)


def _ts(at: datetime | None) -> float | None:
    return None if at is None else at.timestamp()


def _message(row: Any) -> ThreadMessage:
    c = row._mapping
    return ThreadMessage(
        workspace_id=c["workspace_id"], thread_id=c["thread_id"], seq=int(c["seq"]), author=c["author"],
        kind=MessageKind(c["kind"]), body=c["body"], at=c["at"].timestamp(), to=tuple(c["recipients"] or ()),
        finding_key=c["finding_key"], dedupe_key=c["dedupe_key"],
    )  # fmt: skip


def _guard(c: Any) -> ThreadGuard:
    return ThreadGuard(
        turns_without_progress=c["turns_without_progress"], finding_key=c["finding_key"],
        finding_repeats=c["finding_repeats"], blocked=c["blocked"], blocked_reason=c["blocked_reason"],
    )  # fmt: skip


def _key(workspace_id: str, thread_id: str) -> Any:
    return and_(threads.c.workspace_id == workspace_id, threads.c.thread_id == thread_id)


class ThreadStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def post(self, new: NewMessage, at: float, limits: GuardLimits) -> Posted:
        try:
            async with self._engine.begin() as conn:
                return await self._post(conn, new, at, limits)
        except (OperationalError, OSError):
            raise Unavailable("PostgreSQL is not reachable; nothing was posted, try again shortly") from None

    async def _post(self, conn: AsyncConnection, new: NewMessage, at: float, limits: GuardLimits) -> Posted:
        ws, tid = new.workspace_id, new.thread_id
        await conn.execute(
            insert(threads)
            .values(
                workspace_id=ws,
                thread_id=tid,
                last_seq=0,
                created_at=_dt(at),
                updated_at=_dt(at),
                turns_without_progress=0,
                finding_key="",
                finding_repeats=0,
                blocked=False,
                blocked_reason="",
            )
            .on_conflict_do_nothing()
        )
        row = (await conn.execute(select(threads).where(_key(ws, tid)).with_for_update())).one()._mapping
        if new.dedupe_key:
            earlier = await self._earlier(conn, new)
            if earlier is not None:
                return Posted(earlier, await self._thread(conn, ws, tid), duplicate=True)
        message = ThreadMessage(
            workspace_id=ws, thread_id=tid, seq=int(row["last_seq"]) + 1, author=new.author, kind=new.kind,
            body=new.body, at=at, to=new.to, finding_key=new.finding_key, dedupe_key=new.dedupe_key,
        )  # fmt: skip
        guard = after_message(_guard(row), message, limits)
        await conn.execute(
            insert(thread_messages).values(
                workspace_id=ws,
                thread_id=tid,
                seq=message.seq,
                author=message.author,
                recipients=list(message.to),
                kind=message.kind.value,
                body=message.body,
                finding_key=message.finding_key,
                dedupe_key=message.dedupe_key,
                at=_dt(at),
            )
        )
        await conn.execute(
            update(threads)
            .where(_key(ws, tid))
            .values(
                last_seq=message.seq,
                updated_at=_dt(at),
                turns_without_progress=guard.turns_without_progress,
                finding_key=guard.finding_key,
                finding_repeats=guard.finding_repeats,
                blocked=guard.blocked,
                blocked_reason=guard.blocked_reason,
            )
        )
        await self._join(conn, message)
        blocked_now = guard.blocked and not bool(row["blocked"])
        return Posted(message, await self._thread(conn, ws, tid), blocked_now=blocked_now)

    async def _thread(self, conn: AsyncConnection, workspace_id: str, thread_id: str) -> ThreadView:
        view = await self._view(conn, workspace_id, thread_id)
        assert view is not None, "the thread was written in this transaction"
        return view

    async def _earlier(self, conn: AsyncConnection, new: NewMessage) -> ThreadMessage | None:
        """The message posted before under the same dedupe_key."""
        found = (
            await conn.execute(
                select(thread_messages).where(
                    thread_messages.c.workspace_id == new.workspace_id,
                    thread_messages.c.thread_id == new.thread_id,
                    thread_messages.c.dedupe_key == new.dedupe_key,
                )
            )
        ).first()
        return _message(found) if found is not None else None

    async def _join(self, conn: AsyncConnection, message: ThreadMessage) -> None:
        """The author and the named recipients are participants; one who joins now starts its cursor
        just before this message (what came before is context, not work left for it)."""
        names = [n for n in dict.fromkeys((message.author, *message.to)) if n]
        if message.kind in (MessageKind.OUTCOME, MessageKind.BLOCKED):
            names = [n for n in message.to if n]
        for name in names:
            seen = _dt(message.at) if name == message.author else None
            stmt = insert(thread_cursors).values(
                workspace_id=message.workspace_id, thread_id=message.thread_id, participant=name,
                cursor=message.seq - 1, seen_at=seen,
            )  # fmt: skip
            if seen is not None:
                stmt = stmt.on_conflict_do_update(
                    index_elements=["workspace_id", "thread_id", "participant"], set_={"seen_at": seen}
                )
            else:
                stmt = stmt.on_conflict_do_nothing()
            await conn.execute(stmt)

    async def view(self, workspace_id: str, thread_id: str) -> ThreadView | None:
        async with self._engine.connect() as conn:
            return await self._view(conn, workspace_id, thread_id)

    async def _view(self, conn: AsyncConnection, workspace_id: str, thread_id: str) -> ThreadView | None:
        row = (await conn.execute(select(threads).where(_key(workspace_id, thread_id)))).first()
        if row is None:
            return None
        cursors = (
            await conn.execute(
                select(thread_cursors)
                .where(thread_cursors.c.workspace_id == workspace_id, thread_cursors.c.thread_id == thread_id)
                .order_by(thread_cursors.c.participant)
            )
        ).all()
        return _view(row._mapping, [c._mapping for c in cursors])

    async def messages(
        self, workspace_id: str, thread_id: str, after: int, limit: int
    ) -> list[ThreadMessage]:
        async with self._engine.connect() as conn:
            rows = (
                await conn.execute(
                    select(thread_messages)
                    .where(
                        thread_messages.c.workspace_id == workspace_id,
                        thread_messages.c.thread_id == thread_id,
                        thread_messages.c.seq > after,
                    )
                    .order_by(thread_messages.c.seq)
                    .limit(limit)
                )
            ).all()
        return [_message(row) for row in rows]

    async def move_cursor(self, workspace_id: str, thread_id: str, name: str, cursor: int, at: float) -> int:
        """Move `name`'s cursor forward to `cursor` (never back) and note it was seen; the cursor after."""
        async with self._engine.begin() as conn:
            stmt = insert(thread_cursors).values(
                workspace_id=workspace_id,
                thread_id=thread_id,
                participant=name,
                cursor=cursor,
                seen_at=_dt(at),
            )
            upsert = stmt.on_conflict_do_update(
                index_elements=["workspace_id", "thread_id", "participant"],
                set_={
                    "cursor": func.greatest(thread_cursors.c.cursor, stmt.excluded.cursor),
                    "seen_at": _dt(at),
                },
            ).returning(thread_cursors.c.cursor)
            return int((await conn.execute(upsert)).scalar_one())

    async def list_threads(
        self, workspace_id: str, *, blocked_only: bool = False, since: float | None = None
    ) -> list[ThreadView]:
        """Threads of a workspace ("" : every workspace), the most recently active first."""
        query = select(threads).order_by(threads.c.updated_at.desc())
        if workspace_id:
            query = query.where(threads.c.workspace_id == workspace_id)
        if blocked_only:
            query = query.where(threads.c.blocked.is_(True))
        if since is not None:
            query = query.where(threads.c.updated_at >= _dt(since))
        async with self._engine.connect() as conn:
            rows = [row._mapping for row in (await conn.execute(query)).all()]
            if not rows:
                return []
            cursors = (
                await conn.execute(
                    select(thread_cursors).where(
                        thread_cursors.c.workspace_id.in_({r["workspace_id"] for r in rows})
                    )
                )
            ).all()
        by_thread: dict[tuple[str, str], list[Any]] = {}
        for cursor in cursors:
            c = cursor._mapping
            by_thread.setdefault((c["workspace_id"], c["thread_id"]), []).append(c)
        return [_view(r, by_thread.get((r["workspace_id"], r["thread_id"]), [])) for r in rows]

    async def set_blocked(
        self, workspace_id: str, thread_id: str, blocked: bool, reason: str, at: float
    ) -> bool:
        """Block or unblock; whether the thread was blocked before. Unblocking starts the counts anew."""
        async with self._engine.begin() as conn:
            row = (
                await conn.execute(
                    select(threads.c.blocked).where(_key(workspace_id, thread_id)).with_for_update()
                )
            ).first()
            if row is None:
                return False
            values: dict[str, Any] = {"blocked": blocked, "blocked_reason": reason, "updated_at": _dt(at)}
            if not blocked:
                values.update(turns_without_progress=0, finding_key="", finding_repeats=0)
            await conn.execute(update(threads).where(_key(workspace_id, thread_id)).values(**values))
            return bool(row[0])


def _view(row: Any, cursors: list[Any]) -> ThreadView:
    return ThreadView(
        workspace_id=row["workspace_id"],
        thread_id=row["thread_id"],
        last_seq=int(row["last_seq"]),
        created_at=row["created_at"].timestamp(),
        updated_at=row["updated_at"].timestamp(),
        guard=_guard(row),
        participants=tuple(
            Participant(name=c["participant"], cursor=int(c["cursor"]), seen_at=_ts(c["seen_at"]))
            for c in cursors
        ),
    )
