"""The sensor's activity history over its HTTP API (GET /v1/activity/spans, pages followed by cursor;
GET /v1/activity/summary). Times cross as RFC 3339 UTC; the console works in Unix seconds."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kronii.console.core.timeline import Span, SummaryRow
from kronii.console.deps import ServiceClients
from kronii.console.ports import ActivitySummary, ServiceNotAnswering, SpanPage

__all__ = ["SensorHistory", "iso_utc"]

# The largest page the sensor serves: a busy day is one or two pages.
PAGE_LIMIT = 5000


def iso_utc(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _seconds(value: Any) -> float:
    return datetime.fromisoformat(value).timestamp()  # RFC 3339 with its Z, as the sensor writes it


def _span(item: dict[str, Any]) -> Span:
    return Span(
        kind=str(item.get("kind") or "focus"),
        start=_seconds(item["start"]),
        end=_seconds(item["end"]),
        app=item.get("app"),
        title=item.get("title"),
        state=item.get("state"),
    )


class SensorHistory:
    def __init__(self, services: ServiceClients) -> None:
        self._services = services

    async def spans(self, since: float, until: float, *, kind: str, cursor: str | None) -> SpanPage:
        params = {"since": iso_utc(since), "until": iso_utc(until), "kind": kind or None,
                  "limit": PAGE_LIMIT, "cursor": cursor}  # fmt: skip
        body = await self._services.get_json("sensor", "/v1/activity/spans", params)
        try:
            spans = [_span(item) for item in body["spans"]]
        except (KeyError, TypeError, ValueError):
            raise ServiceNotAnswering("sensor", "its activity spans are not in the expected form") from None
        next_cursor = body.get("next_cursor")
        return SpanPage(spans, str(next_cursor) if next_cursor else None)

    async def summary(self, since: float, until: float, *, by: str) -> ActivitySummary:
        params = {"since": iso_utc(since), "until": iso_utc(until), "by": by}
        body = await self._services.get_json("sensor", "/v1/activity/summary", params)
        try:
            rows = [
                SummaryRow(str(row["key"]), row.get("app"), float(row["seconds"])) for row in body["rows"]
            ]
            return ActivitySummary(str(body.get("by", by)), float(body["total_seconds"]), rows)
        except (KeyError, TypeError, ValueError):
            raise ServiceNotAnswering("sensor", "its activity summary is not in the expected form") from None
