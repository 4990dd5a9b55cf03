"""How `kronii vision` reaches the engine: its HTTP address (--url, KRONII_VISION_URL, the running
`kronii up`'s, else its settings) for most calls, and its local socket with the terminal's TTY binding
for an approval (only a person approves, and the engine checks it is one). Refusals become CommandErrors
with the exit codes of every kronii command."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError

__all__ = ["Options", "Vision", "vision_socket", "vision_url"]

URL_ENV = "KRONII_VISION_URL"
_START_IT = "start it with `kronii up`"


@dataclass(frozen=True)
class Options:
    url: str | None
    timeout: float


def vision_url(flag: str | None = None) -> str:
    if flag:
        return flag.rstrip("/")
    configured = os.environ.get(URL_ENV, "").strip()
    if configured:
        return configured.rstrip("/")
    from kronii.runtime.rendezvous import service_http_url
    from kronii.vision.settings import VisionSettings

    return service_http_url("vision", VisionSettings).url


def vision_socket() -> Path:
    from kronii.foundation.settings import load_settings
    from kronii.runtime.rendezvous import local_socket_path
    from kronii.vision.settings import VisionSettings

    return local_socket_path("vision.sock", Path(load_settings(VisionSettings).data_dir))


class Vision:
    def __init__(self, options: Options, action: str) -> None:
        self.options = options
        self.action = action

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        from kronii.launcher.local_http import JsonClient

        url = vision_url(self.options.url)
        try:
            response = JsonClient(url, self.options.timeout).request(method, path, json=body)
        except OSError as error:
            reason = error.strerror or str(error) or type(error).__name__
            raise CommandError(
                f"kronii: the vision engine is not reachable at {url} ({reason}): {_START_IT}",
                exits.UNREACHABLE,
            ) from None
        return self._answer(response.status, response.body, response.text)

    def as_person(self, method: str, path: str) -> dict[str, Any]:
        """A call through the local socket with this terminal's TTY binding (a person's proof)."""
        from kronii.edge.presence_rules import SESSION_HEADER, TTY_HEADER
        from kronii.launcher.local_http import JsonClient

        socket = vision_socket()
        headers = {SESSION_HEADER: str(os.getsid(0))}
        try:
            headers[TTY_HEADER] = os.ttyname(0)
        except OSError:
            pass  # no terminal: polkit may still say yes, else the engine refuses with a sentence
        client = JsonClient(
            "http://localhost", self.options.timeout, unix_socket=str(socket), headers=headers
        )
        try:
            response = client.request(method, path, json={})
        except OSError as error:
            raise CommandError(
                f"kronii: the vision engine's socket {socket} does not answer "
                f"({error.strerror or error}): {_START_IT}",
                exits.UNREACHABLE,
            ) from None
        return self._answer(response.status, response.body, response.text)

    def _answer(self, status: int, body: Any, text: str) -> dict[str, Any]:
        if status >= 400:
            detail = body.get("detail") if isinstance(body, dict) else None
            if not isinstance(detail, str) or not detail:
                detail = text.strip()[:200] or f"HTTP {status}"
            raise CommandError(
                f"kronii: vision {self.action} refused: {detail}", exits.exit_for_error(status, body)
            )
        if not isinstance(body, dict):
            raise CommandError(f"kronii: vision {self.action}: the answer is not a JSON object", exits.FAILED)
        return body
