"""How `kronii critic` and `kronii run` reach the critic: its HTTP address (--url, KRONII_CRITIC_URL,
the running `kronii up`'s, else its settings), its refusals as CommandErrors with the exit codes of
every kronii command, and the export's lines as they stream.

Standard library only (kronii.launcher.local_http, http.client); the settings load only when no
address was given, so `kronii run` pays for pydantic only when it must."""

from __future__ import annotations

import http.client
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError

if TYPE_CHECKING:
    from kronii.launcher.local_http import JsonResponse

__all__ = ["SESSION_ENV", "URL_ENV", "Critic", "Options", "critic_url"]

# The shell hooks export their session key here, so `kronii critic similar` and `kronii run` name
# the same session as the spool lines of that shell.
SESSION_ENV = "KRONII_CRITIC_SESSION"
URL_ENV = "KRONII_CRITIC_URL"
_START_IT = "start it with `kronii up`"


@dataclass(frozen=True)
class Options:
    """The group's options: where the critic listens (None: find it) and how long each call may take."""

    url: str | None
    timeout: float


def critic_url(flag: str | None = None) -> str:
    """The critic's HTTP base URL, no trailing slash. Raises SettingsError (a SystemExit with a
    sentence) when the settings it must read are invalid."""
    if flag:
        return flag.rstrip("/")
    configured = os.environ.get(URL_ENV, "").strip()
    if configured:
        return configured.rstrip("/")
    from kronii.critic.settings import CriticSettings
    from kronii.runtime.rendezvous import service_http_url

    return service_http_url("critic", CriticSettings).url


class Critic:
    """The critic's HTTP API for one command (``action`` names it in sentences: "search")."""

    def __init__(self, options: Options, action: str) -> None:
        self.options = options
        self.action = action
        self._url: str | None = None

    @property
    def url(self) -> str:
        if self._url is None:
            self._url = critic_url(self.options.url)
        return self._url

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        from kronii.launcher.local_http import JsonClient

        try:
            response = JsonClient(self.url, self.options.timeout).request(method, path, json=body)
        except OSError as error:
            raise self._unreachable(error) from None
        return self._answer(response)

    def stream_lines(self, path: str, params: dict[str, str]) -> Iterator[bytes]:
        """The lines of a streamed answer (JSON lines), each as it arrives."""
        parts = urlsplit(self.url)
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        connection = kind(parts.hostname or "127.0.0.1", parts.port, timeout=self.options.timeout)
        target = (parts.path.rstrip("/") + path) + (f"?{urlencode(params)}" if params else "")
        try:
            try:
                connection.request("GET", target, headers={"accept": "application/x-ndjson"})
                response = connection.getresponse()
            except (OSError, http.client.HTTPException) as error:
                raise self._unreachable(error) from None
            if response.status >= 400:
                self._refused(response.status, response.read().decode("utf-8", errors="replace"))
            try:
                yield from response
            except (OSError, http.client.HTTPException) as error:
                raise CommandError(
                    f"kronii: critic {self.action}: the critic's answer broke off ({error or type(error).__name__})",
                    exits.FAILED,
                ) from None
        finally:
            connection.close()

    def _unreachable(self, error: Exception) -> CommandError:
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        return CommandError(
            f"kronii: the critic is not reachable at {self.url} ({reason}): {_START_IT}", exits.UNREACHABLE
        )

    def _refused(self, status: int, text: str) -> None:
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        detail = body.get("detail") if isinstance(body, dict) else None
        if not isinstance(detail, str) or not detail:
            detail = text.strip()[:200] or f"HTTP {status}"
        raise CommandError(
            f"kronii: critic {self.action} refused: {detail}", exits.exit_for_error(status, body)
        )

    def _answer(self, response: JsonResponse) -> dict[str, Any]:
        if response.status >= 400:
            self._refused(response.status, response.text)
        if not isinstance(response.body, dict):
            raise CommandError(
                f"kronii: critic {self.action}: the critic's answer is not a JSON object", exits.FAILED
            )
        return response.body
