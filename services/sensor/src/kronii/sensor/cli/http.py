"""How `kronii activity` reaches the sensor: its HTTP address (--url, KRONII_SENSOR_URL, the running
`kronii up`'s, else its settings), and its refusals as CommandErrors with the exit codes of every
kronii command. Standard library only; the settings load only when no address was given."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError

__all__ = ["Options", "Sensor"]


@dataclass(frozen=True)
class Options:
    url: str | None
    timeout: float


class Sensor:
    """The sensor's HTTP API for one command (``action`` names it in sentences: "report")."""

    def __init__(self, options: Options, action: str) -> None:
        self.options = options
        self.action = action
        self._url: str | None = None

    @property
    def url(self) -> str:
        if self._url is None:
            from kronii.runtime.rendezvous import service_http_url
            from kronii.sensor.settings import SensorSettings

            self._url = service_http_url("sensor", SensorSettings, flag=self.options.url).url
        return self._url

    def call(
        self, method: str, path: str, *, params: dict[str, Any] | None = None, body: Any = None
    ) -> dict[str, Any]:
        from kronii.launcher.local_http import JsonClient

        try:
            response = JsonClient(self.url, self.options.timeout).request(
                method, path, json=body, params=params
            )
        except OSError as error:
            reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
            raise CommandError(
                f"kronii: the sensor is not reachable at {self.url} ({reason}): start it with `kronii up`",
                exits.UNREACHABLE,
            ) from None
        if response.status >= 400:
            body_seen = response.body if isinstance(response.body, dict) else None
            detail = body_seen.get("detail") if body_seen else None
            if not isinstance(detail, str) or not detail:
                detail = response.text.strip()[:200] or f"HTTP {response.status}"
            raise CommandError(
                f"kronii: activity {self.action} refused: {detail}",
                exits.exit_for_error(response.status, body_seen),
            )
        if not isinstance(response.body, dict):
            raise CommandError(
                f"kronii: activity {self.action}: the sensor's answer is not a JSON object", exits.FAILED
            )
        return response.body
