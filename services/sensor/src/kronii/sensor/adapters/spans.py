"""The activity history in PostgreSQL (created by migration 0012_activity_spans): one row per span,
focus or state, with the raw envelopes of `activity_events` deleted beside them by retention and by
a person's delete. Every call is one transaction; a driver error becomes StoreFailed."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from kronii.sensor.adapters.events import activity_events
from kronii.sensor.core.activity_query import Cursor, DeleteSelector, ImportedSpan, SpanRecord, TimeRange
from kronii.sensor.core.spans import Span, SummaryRow
from kronii.sensor.ports import StoreFailed
from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    Index,
    MetaData,
    Table,
    Text,
    and_,
    bindparam,
    delete,
    func,
    insert,
    literal,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

__all__ = ["SpanTable", "activity_spans"]

activity_spans = Table(
    "activity_spans",
    MetaData(),
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("kind", Text, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("ended_at", DateTime(timezone=True), nullable=False),
    Column("app", Text, nullable=True),
    Column("title", Text, nullable=True),
    Column("window_id", BigInteger, nullable=True),
    Column("wm_class", Text, nullable=True),
    Column("state", Text, nullable=True),
    # Set on spans brought in by an import (ActivityWatch): the same span imported again is skipped.
    Column("import_key", Text, nullable=True),
    CheckConstraint("kind IN ('focus', 'state')", name="activity_spans_kind_known"),
    Index("ix_activity_spans_started_at", "started_at"),
    Index("ix_activity_spans_app_started_at", "app", "started_at"),
    Index(
        "ux_activity_spans_import_key",
        "import_key",
        unique=True,
        postgresql_where=text("import_key IS NOT NULL"),
    ),
)

_T = activity_spans.c


def _stamp(at: float) -> datetime:
    return datetime.fromtimestamp(at, UTC)


def _record(row: Any) -> SpanRecord:
    return SpanRecord(
        span_id=row.id,
        kind=row.kind,
        started_at=row.started_at.timestamp(),
        ended_at=row.ended_at.timestamp(),
        app=row.app or "",
        title=row.title or "",
        window_id=row.window_id or 0,
        wm_class=row.wm_class or "",
        state=row.state or "",
    )


def _span_row(span: Span) -> dict[str, Any]:
    data, focus = span.data, span.kind.value == "focus"
    return {
        "kind": span.kind.value,
        "started_at": _stamp(span.started_at),
        "ended_at": _stamp(span.ended_at),
        "app": data.app if focus else None,
        "title": data.title if focus else None,
        "window_id": data.window_id if focus else None,
        "wm_class": data.wm_class if focus else None,
        "state": None if focus else data.state,
    }


class SpanTable:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def insert(self, span: Span) -> int:
        try:
            async with self._engine.begin() as conn:
                return int(
                    (
                        await conn.execute(insert(activity_spans).returning(_T.id), [_span_row(span)])
                    ).scalar_one()
                )
        except Exception as error:
            raise StoreFailed(str(error)) from error

    async def update_end(self, span_id: int, ended_at: float) -> None:
        try:
            async with self._engine.begin() as conn:
                await conn.execute(
                    update(activity_spans).where(_T.id == span_id).values(ended_at=_stamp(ended_at))
                )
        except Exception as error:
            raise StoreFailed(str(error)) from error

    async def write_closed(self, spans: Sequence[tuple[Span, int | None]]) -> None:
        new = [_span_row(span) for span, row_id in spans if row_id is None]
        ends = [
            {"row_id": row_id, "end": _stamp(span.ended_at)} for span, row_id in spans if row_id is not None
        ]
        try:
            async with self._engine.begin() as conn:
                if new:
                    await conn.execute(insert(activity_spans), new)
                if ends:
                    await conn.execute(
                        update(activity_spans)
                        .where(_T.id == bindparam("row_id"))
                        .values(ended_at=bindparam("end")),
                        ends,
                    )
        except Exception as error:
            raise StoreFailed(str(error)) from error

    async def page(
        self, window: TimeRange, *, app: str | None, kind: str | None, limit: int, after: Cursor | None
    ) -> list[SpanRecord]:
        """Spans overlapping the range, by start then id, after the cursor."""
        query = select(activity_spans).where(
            _T.started_at < _stamp(window.until), _T.ended_at > _stamp(window.since)
        )
        if app is not None:
            query = query.where(_T.app == app)
        if kind is not None:
            query = query.where(_T.kind == kind)
        if after is not None:
            query = query.where(
                tuple_(_T.started_at, _T.id)
                > tuple_(literal(_stamp(after.started_at)), literal(after.span_id))
            )
        query = query.order_by(_T.started_at, _T.id).limit(limit)
        try:
            async with self._engine.connect() as conn:
                return [_record(row) for row in await conn.execute(query)]
        except Exception as error:
            raise StoreFailed(str(error)) from error

    async def totals(self, window: TimeRange, by: str, *, leave_out: Sequence[int]) -> list[SummaryRow]:
        """Seconds per app, (title, app) or state inside the range, each span clipped to it; the rows
        in `leave_out` (the open spans, whose stored end is behind) are not counted."""
        since, until = _stamp(window.since), _stamp(window.until)
        seconds = func.sum(
            func.extract("epoch", func.least(_T.ended_at, until) - func.greatest(_T.started_at, since))
        ).label("seconds")
        key = {"app": _T.app, "title": _T.title, "state": _T.state}[by]
        app = _T.app if by != "state" else literal("")
        query = (
            select(func.coalesce(key, "").label("key"), func.coalesce(app, "").label("app"), seconds)
            .where(
                _T.started_at < until, _T.ended_at > since, _T.kind == ("state" if by == "state" else "focus")
            )
            .group_by(key, app)
        )
        if leave_out:
            query = query.where(_T.id.not_in(list(leave_out)))
        try:
            async with self._engine.connect() as conn:
                rows = (await conn.execute(query)).all()
        except Exception as error:
            raise StoreFailed(str(error)) from error
        return [SummaryRow(row.key, row.app, float(row.seconds)) for row in rows if row.seconds]

    async def delete(self, selector: DeleteSelector) -> tuple[int, int]:
        """Delete what the selector names: (spans deleted or cut, envelopes deleted)."""
        try:
            async with self._engine.begin() as conn:
                if selector.range is not None:
                    return await _delete_range(conn, selector.range)
                if selector.app is not None:
                    spans = await conn.execute(delete(activity_spans).where(_T.app == selector.app))
                    events = await conn.execute(
                        delete(activity_events).where(activity_events.c.detail["app"].astext == selector.app)
                    )
                    return spans.rowcount, events.rowcount
                spans = await conn.execute(delete(activity_spans))
                events = await conn.execute(delete(activity_events))
                return spans.rowcount, events.rowcount
        except Exception as error:
            raise StoreFailed(str(error)) from error

    async def prune(self, before: float) -> tuple[int, int]:
        """Retention: spans that ended and envelopes written before `before`."""
        cutoff = _stamp(before)
        try:
            async with self._engine.begin() as conn:
                spans = await conn.execute(delete(activity_spans).where(_T.ended_at < cutoff))
                events = await conn.execute(delete(activity_events).where(activity_events.c.at < cutoff))
                return spans.rowcount, events.rowcount
        except Exception as error:
            raise StoreFailed(str(error)) from error

    async def add_imported(self, spans: Sequence[ImportedSpan]) -> int:
        """Insert the spans not imported before (by key); how many were new."""
        if not spans:
            return 0
        rows = [
            {
                "kind": span.kind,
                "started_at": _stamp(span.started_at),
                "ended_at": _stamp(span.ended_at),
                "app": span.app if span.kind == "focus" else None,
                "title": span.title if span.kind == "focus" else None,
                "window_id": None,
                "wm_class": (span.wm_class or None) if span.kind == "focus" else None,
                "state": span.state if span.kind == "state" else None,
                "import_key": span.key,
            }
            for span in spans
        ]
        statement = (
            pg_insert(activity_spans)
            .values(rows)
            .on_conflict_do_nothing(index_elements=["import_key"], index_where=text("import_key IS NOT NULL"))
            .returning(_T.id)
        )
        try:
            async with self._engine.begin() as conn:
                return len((await conn.execute(statement)).all())
        except Exception as error:
            raise StoreFailed(str(error)) from error


async def _delete_range(conn: AsyncConnection, window: TimeRange) -> tuple[int, int]:
    """Everything of [since, until) goes: spans inside it are deleted, spans reaching into it are cut
    at its edges, a span across the whole range keeps its two outer parts (split in two rows)."""
    since, until = _stamp(window.since), _stamp(window.until)
    inside = await conn.execute(delete(activity_spans).where(_T.started_at >= since, _T.ended_at <= until))
    across = (
        await conn.execute(select(activity_spans).where(_T.started_at < since, _T.ended_at > until))
    ).all()
    for row in across:
        tail = {column.name: getattr(row, column.name) for column in activity_spans.c}
        del tail["id"], tail["import_key"]
        tail["started_at"] = until
        await conn.execute(insert(activity_spans), [tail])
    ends = await conn.execute(
        update(activity_spans).where(_T.started_at < since, _T.ended_at > since).values(ended_at=since)
    )
    starts = await conn.execute(
        update(activity_spans)
        .where(and_(_T.started_at >= since, _T.started_at < until), _T.ended_at > until)
        .values(started_at=until)
    )
    events = await conn.execute(
        delete(activity_events).where(activity_events.c.at >= since, activity_events.c.at < until)
    )
    return inside.rowcount + ends.rowcount + starts.rowcount, events.rowcount
