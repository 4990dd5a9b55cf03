"""Notifications: built with their snooze/disable entry points, kept in PostgreSQL (so those entry
points can find the source later) and delivered on every channel: NATS `kronii.notify.<channel>`,
the SSE stream, and the desktop through D-Bus when there is one."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from google.protobuf.json_format import MessageToDict, ParseDict
from kronii.pipeline.adapters.tables import as_datetime, notifications
from kronii.pipeline.core.notices import Button
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.stores import subjects
from kronii.stores.subjects import Topic
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = [
    "ACTION_ACCEPT",
    "ACTION_DISABLE",
    "ACTION_SNOOZE",
    "NotificationStore",
    "deliver",
    "new_notification",
]

log = logging.getLogger(__name__)

ACTION_ACCEPT = Button.ACCEPT.value
ACTION_SNOOZE = Button.SNOOZE.value
ACTION_DISABLE = Button.DISABLE.value


def new_notification(
    *,
    channel: str,
    title: str,
    body: str,
    source_summary: str,
    source_key: str,
    run_id: str,
    now: float,
    notification_id: str | None = None,
    accept_label: str = "",
) -> pb.Notification:
    """A notification with the snooze and disable entry points the seed asks for (Acting), and with
    ``accept_label`` first a button that says yes to the offer the notification makes."""
    subjects.NOTIFY.subject(channel)  # a channel must be a valid subject token; fail here, not on publish
    notification_id = notification_id or uuid.uuid4().hex
    message = pb.Notification(
        id=notification_id,
        channel=channel,
        title=title,
        body=body,
        source_summary=source_summary,
        source_key=source_key,
        run_id=run_id,
    )
    message.created_at.FromNanoseconds(round(now * 1e9))
    if accept_label:
        message.actions.append(
            pb.NotificationAction(
                key=ACTION_ACCEPT, label=accept_label, href=f"/v1/notifications/{notification_id}/accept"
            )
        )
    if source_key:
        message.actions.extend(
            [
                pb.NotificationAction(
                    key=ACTION_SNOOZE, label="Snooze", href=f"/v1/notifications/{notification_id}/snooze"
                ),
                pb.NotificationAction(
                    key=ACTION_DISABLE,
                    label="Don't show again",
                    href=f"/v1/notifications/{notification_id}/disable",
                ),
            ]
        )
    return message


class NotificationStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def save(self, message: pb.Notification) -> None:
        row = {
            "id": message.id,
            "channel": message.channel,
            "title": message.title,
            "body": message.body,
            "source_summary": message.source_summary,
            "source_key": message.source_key,
            "actions": [MessageToDict(a, preserving_proto_field_name=True) for a in message.actions],
            "run_id": message.run_id,
            "created_at": as_datetime(message.created_at.ToNanoseconds() / 1e9),
        }
        async with self._engine.begin() as conn:
            await conn.execute(notifications.insert().values(**row))

    async def get(self, notification_id: str) -> pb.Notification | None:
        async with self._engine.connect() as conn:
            statement = select(notifications).where(notifications.c.id == notification_id)
            row = (await conn.execute(statement)).one_or_none()
        return None if row is None else _from_row(row)

    async def source_key(self, notification_id: str) -> str | None:
        """The source a notification's snooze and disable act on ("" when it has none); None when
        there is no such notification."""
        message = await self.get(notification_id)
        return None if message is None else message.source_key

    async def recent(self, limit: int = 50) -> Sequence[pb.Notification]:
        async with self._engine.connect() as conn:
            statement = select(notifications).order_by(notifications.c.created_at.desc()).limit(limit)
            rows = (await conn.execute(statement)).all()
        return [_from_row(row) for row in rows]


def _from_row(row: Any) -> pb.Notification:
    m = row._mapping
    message = pb.Notification(
        id=m["id"],
        channel=m["channel"],
        title=m["title"],
        body=m["body"],
        source_summary=m["source_summary"],
        source_key=m["source_key"],
        run_id=m["run_id"],
    )
    for action in m["actions"] or ():
        ParseDict(action, message.actions.add())
    message.created_at.FromDatetime(m["created_at"])
    return message


class _Publisher(Protocol):
    async def publish(
        self, topic: Topic[pb.Notification], message: pb.Notification, *tokens: str
    ) -> None: ...


class _Desktop(Protocol):
    async def notify(self, message: pb.Notification) -> int | None: ...


class _Stream(Protocol):
    def publish(self, message: pb.Notification) -> int: ...


async def deliver(
    message: pb.Notification,
    *,
    store: NotificationStore | None = None,
    bus: _Publisher | None = None,
    stream: _Stream | None = None,
    desktop: _Desktop | None = None,
) -> list[str]:
    """Store, then send on each channel given; returns the channels it went out on. Storing comes
    first: a notification whose snooze entry point cannot be resolved must not be shown."""
    sent: list[str] = []
    if store is not None:
        await store.save(message)
        sent.append("store")
    if bus is not None:
        try:
            await bus.publish(subjects.NOTIFY, message, message.channel)
            sent.append("nats")
        except Exception as error:  # one channel failing must not hide the notification on the others
            log.warning("notification %s not published on NATS: %s", message.id, error)
    if stream is not None:
        stream.publish(message)
        sent.append("sse")
    if desktop is not None and await desktop.notify(message) is not None:
        sent.append("dbus")
    return sent
