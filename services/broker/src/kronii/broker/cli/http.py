"""How `kronii control` reaches the input broker: its local Unix socket, or its loopback HTTP port,
and its refusals as CommandErrors with the exit codes of every kronii command.

The person's own calls (grant, and WAIT, which lifts an interrupt) go through the socket only: the
kernel tells the broker who is on the other end, and a call over TCP is never the person, whatever it
carries. They carry the TTY binding (the terminal on standard input and this process's session),
which the broker checks against /proc when polkit does not ask the person. Calls anyone may make
(stop, interrupt, reading the state) use the socket when it is there, else TCP.

Standard library only (kronii.launcher.local_http); the settings load when a command connects."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError

if TYPE_CHECKING:
    from kronii.broker.settings import BrokerSettings
    from kronii.launcher.local_http import JsonClient, JsonResponse

__all__ = ["Broker", "Options", "presence_headers"]

_START_IT = "start it with `kronii up`"


@dataclass(frozen=True)
class Options:
    """The group's options: where the broker listens and how long each call may take."""

    socket: str | None
    url: str | None
    timeout: float


def presence_headers() -> dict[str, str]:
    """The TTY binding the broker cross-checks with /proc: the terminal on standard input ("" when it
    is not a terminal) and this process's session."""
    from kronii.edge.presence_rules import SESSION_HEADER, TTY_HEADER

    try:
        tty = os.ttyname(0) if os.isatty(0) else ""
    except OSError:
        tty = ""
    return {TTY_HEADER: tty, SESSION_HEADER: str(os.getsid(0))}


class Broker:
    """The broker's HTTP API for one command (``action`` names it in sentences: "grant")."""

    def __init__(self, options: Options, action: str) -> None:
        self.options = options
        self.action = action
        self._settings: BrokerSettings | None = None

    def settings(self) -> BrokerSettings:
        if self._settings is None:
            from kronii.broker.settings import BrokerSettings
            from kronii.foundation.settings import load_settings

            self._settings = load_settings(BrokerSettings)
        return self._settings

    def socket_path(self) -> Path:
        if self.options.socket:
            return Path(self.options.socket)
        from kronii.runtime.rendezvous import broker_socket_path

        return broker_socket_path(self.settings().data_dir)

    def as_person(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """A call only the desktop user may make: through the local socket, with the TTY binding."""
        where = self.socket_path()
        if not where.exists():
            raise CommandError(
                f"kronii: the broker is not reachable (no socket at {where}): {_START_IT}; the desktop "
                f"user's {self.action} goes only through that socket",
                exits.UNREACHABLE,
            )
        client = self._socket_client(where, presence_headers())
        return self._answer(self._send(client, method, path, body, f"its socket {where}"))

    def as_anyone(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """A call any local process may make: through the socket when it is there, else over TCP."""
        where = self.socket_path()
        if where.exists():
            try:
                return self._answer(self._socket_client(where, {}).request(method, path, json=body))
            except (ConnectionRefusedError, FileNotFoundError):
                pass  # a socket a stopped broker left behind: its TCP port may still answer
            except OSError as error:
                raise self._unreachable(f"its socket {where}", error) from None
        from kronii.broker.settings import BrokerSettings
        from kronii.launcher.local_http import JsonClient
        from kronii.runtime.rendezvous import service_http_url

        url = service_http_url("broker", BrokerSettings, flag=self.options.url).url
        return self._answer(self._send(JsonClient(url, self.options.timeout), method, path, body, url))

    def _socket_client(self, where: Path, headers: dict[str, str]) -> JsonClient:
        from kronii.launcher.local_http import JsonClient

        return JsonClient("http://localhost", self.options.timeout, headers, unix_socket=str(where))

    def _send(
        self, client: JsonClient, method: str, path: str, body: dict[str, Any] | None, where: str
    ) -> JsonResponse:
        try:
            return client.request(method, path, json=body)
        except OSError as error:
            raise self._unreachable(where, error) from None

    def _unreachable(self, where: str, error: OSError) -> CommandError:
        reason = error.strerror or str(error) or type(error).__name__
        return CommandError(
            f"kronii: the broker is not reachable at {where} ({reason}): {_START_IT}", exits.UNREACHABLE
        )

    def _answer(self, response: JsonResponse) -> dict[str, Any]:
        body = response.body
        if response.status >= 400:
            detail = body.get("detail") if isinstance(body, dict) else None
            if not isinstance(detail, str) or not detail:
                detail = response.text.strip()[:200] or f"HTTP {response.status}"
            raise CommandError(
                f"kronii: control {self.action} refused: {detail}",
                exits.exit_for_error(response.status, body),
            )
        if not isinstance(body, dict):
            raise CommandError(
                f"kronii: control {self.action}: the broker's answer is not a JSON object", exits.FAILED
            )
        return body
