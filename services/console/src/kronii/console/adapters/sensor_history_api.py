"""The sensor's delete of the activity history, for the Privacy page (ActivityEraser): DELETE
/v1/activity?since=&until= | ?app= | ?all=true over the console's service clients. The sensor removes
the spans and the raw activity events of the range or app and audits it (`sensor.activity.delete`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from kronii.console.deps import ServiceClients

__all__ = ["SensorHistoryApi"]

SERVICE = "sensor"
PATH = "/v1/activity"


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def _counts(body: Mapping[str, Any]) -> tuple[int, int]:
    return int(body.get("deleted_spans", 0)), int(body.get("deleted_events", 0))


class SensorHistoryApi:
    def __init__(self, services: ServiceClients) -> None:
        self._services = services

    async def delete_between(self, since: float, until: float) -> tuple[int, int]:
        return _counts(
            await self._services.delete_json(SERVICE, PATH, {"since": _iso(since), "until": _iso(until)})
        )

    async def delete_app(self, app: str) -> tuple[int, int]:
        return _counts(await self._services.delete_json(SERVICE, PATH, {"app": app}))

    async def delete_all(self) -> tuple[int, int]:
        return _counts(await self._services.delete_json(SERVICE, PATH, {"all": "true"}))
