"""ActivityWatch's own JSON export (`/api/0/export`: {"buckets": {id: {"type", "events": [...]}}})
read as kronii spans. Pure: the caller reads the file.

- a `currentwindow` bucket (aw-watcher-window): each event {timestamp, duration, data: {app, title}}
  is a focus span of that app and title (ActivityWatch has already merged its heartbeats);
- an `afkstatus` bucket (aw-watcher-afk): `not-afk` is an active state span, `afk` an inactive one;
- other buckets (web, editor, ...) are counted and left out; so are events with no duration.

Each span's key is the bucket and the event's id (its start time when the export has no id), so
importing the same file again adds nothing. Titles are sent as they are: the sensor redacts them on
the way in."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["AwSpan", "AwSummary", "read_aw_export"]

_STATES = {"not-afk": "active", "afk": "inactive"}


@dataclass(frozen=True, slots=True)
class AwSpan:
    """A span as the import route takes it (times as ISO-8601 text, as the export has them)."""

    key: str
    kind: str
    start: str
    end: str
    app: str = ""
    title: str = ""
    state: str = ""

    def as_json(self) -> dict[str, str]:
        body = {"key": self.key, "kind": self.kind, "start": self.start, "end": self.end}
        if self.kind == "focus":
            body.update(app=self.app, title=self.title)
        else:
            body["state"] = self.state
        return body


@dataclass
class AwSummary:
    """What the export held: buckets read and left out, events with no duration or no app."""

    buckets_read: list[str] = field(default_factory=list)
    buckets_skipped: list[str] = field(default_factory=list)
    events_skipped: int = 0


def _instant(text: Any) -> datetime:
    at = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    if at.tzinfo is None:
        raise ValueError(f"the time {text!r} has no offset")
    return at


def _span(bucket_id: str, kind: str, event: Mapping[str, Any]) -> AwSpan | None:
    start = _instant(event["timestamp"])
    duration = float(event.get("duration") or 0.0)
    data = event.get("data") or {}
    if duration <= 0:
        return None
    key = f"aw:{bucket_id}:{event.get('id') or start.isoformat()}"
    end = datetime.fromtimestamp(start.timestamp() + duration, start.tzinfo)
    if kind == "currentwindow":
        app = str(data.get("app") or "")
        if not app:
            return None
        return AwSpan(
            key, "focus", start.isoformat(), end.isoformat(), app=app, title=str(data.get("title") or "")
        )
    state = _STATES.get(str(data.get("status") or ""))
    if state is None:
        return None
    return AwSpan(key, "state", start.isoformat(), end.isoformat(), state=state)


def read_aw_export(export: Any, summary: AwSummary | None = None) -> Iterator[AwSpan]:
    """The spans of an export, bucket by bucket. Raises ValueError with a sentence when it is not
    an ActivityWatch export."""
    summary = summary if summary is not None else AwSummary()
    buckets = export.get("buckets") if isinstance(export, dict) else None
    if not isinstance(buckets, dict):
        raise ValueError('not an ActivityWatch export: it has no "buckets" object')
    for bucket_id, bucket in buckets.items():
        kind = bucket.get("type") if isinstance(bucket, dict) else None
        if kind not in ("currentwindow", "afkstatus"):
            summary.buckets_skipped.append(str(bucket_id))
            continue
        summary.buckets_read.append(str(bucket_id))
        for index, event in enumerate(bucket.get("events") or []):
            try:
                span = _span(str(bucket_id), kind, event)
            except (KeyError, TypeError, ValueError) as error:
                raise ValueError(
                    f"bucket {bucket_id} event {index} is not an ActivityWatch event: {error}"
                ) from None
            if span is None:
                summary.events_skipped += 1
            else:
                yield span
