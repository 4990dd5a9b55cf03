"""How `kronii agents` reaches the supervisor: its address, the token it sends, and refusals as
CommandErrors with the exit codes of every kronii command. A token minted here from the local secret
goes only to a server that proves it holds the same secret (GET /v1/identity). The settings load when a
command connects, not when `kronii agents` is only asked for help or completion; the calls themselves use
the standard library (kronii.launcher.local_http), so a command answers without importing an HTTP client."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError

if TYPE_CHECKING:
    from kronii.launcher.local_http import JsonClient

__all__ = ["SCOPES", "Client", "Connection", "mint", "user_subject"]

SCOPES = ("trigger", "operate", "read")
# The identity check is one small request; a server that does not answer it soon is not trusted.
IDENTITY_TIMEOUT_SECS = 10.0
# How each source of the address (kronii.runtime.rendezvous.service_http_url) reads in a message.
_SOURCES = {
    "flag": "--url",
    "env url": "KRONII_SUPERVISOR_URL",
    "kronii up": "the running `kronii up`",
    "settings": "KRONII_SUPERVISOR_HOST and KRONII_SUPERVISOR_HTTP_PORT",
}


@dataclass(frozen=True)
class Connection:
    """What the group's options say about reaching the supervisor; each command connects itself."""

    url: str | None
    token: str | None

    def given_token(self) -> str | None:
        """A token the caller chose: --token, $KRONII_SUPERVISOR_TOKEN or $KRONII_RUNTIME_TOKEN."""
        given = (
            self.token or os.environ.get("KRONII_SUPERVISOR_TOKEN") or os.environ.get("KRONII_RUNTIME_TOKEN")
        )
        return str(given) if given else None


def _local_secret() -> bytes:
    from kronii.foundation.settings import load_settings
    from kronii.supervisor.settings import SupervisorSettings

    settings = load_settings(SupervisorSettings)
    if settings.token_secret is not None:
        return settings.token_secret.get_secret_value().encode()
    path = settings.token_key_file
    if not path.exists():
        raise CommandError(
            f"kronii: the supervisor has not run here yet ({path} does not exist): start it with `kronii up`, "
            "or set KRONII_SUPERVISOR_TOKEN to reach one elsewhere",
            exits.UNREACHABLE,
        )
    return path.read_bytes().strip()


def mint(
    subject: str, scopes: set[str], workspaces: set[str], ttl: float, secret: bytes | None = None
) -> str:
    from kronii.supervisor.core.tokens import issue_token

    return issue_token(
        secret if secret is not None else _local_secret(),
        subject=subject, scopes=scopes, workspaces=workspaces, now=time.time(), ttl_secs=ttl,
    )  # fmt: skip


def user_subject() -> str:
    import getpass

    return f"cli:{getpass.getuser()}"


class Client:
    """The supervisor's HTTP API with a token; refusals become CommandErrors with their exit codes."""

    def __init__(self, connection: Connection, timeout: float = 120.0) -> None:
        from kronii.launcher.local_http import JsonClient
        from kronii.runtime.rendezvous import service_http_url
        from kronii.supervisor.settings import SupervisorSettings

        address = service_http_url("supervisor", SupervisorSettings, flag=connection.url)
        self.url = address.url
        self.source = address.source
        self.http: JsonClient = JsonClient(self.url, timeout)
        token = connection.given_token()
        if token is None:
            # Minted from this host's secret: only for a server that proves it holds that secret.
            secret = _local_secret()
            self._check_identity(secret, min(timeout, IDENTITY_TIMEOUT_SECS))
            token = mint(user_subject(), set(SCOPES), {"*"}, 600, secret)
        self.http.headers["authorization"] = f"Bearer {token}"

    def _unreachable(self, error: Exception) -> CommandError:
        return CommandError(
            f"kronii: the supervisor is not reachable at {self.url} (address from "
            f"{_SOURCES.get(self.source, self.source)}; {error}): start it with `kronii up`",
            exits.UNREACHABLE,
        )

    def _check_identity(self, secret: bytes, timeout: float) -> None:
        from kronii.supervisor.core.identity import new_nonce, proof_matches

        nonce = new_nonce()
        try:
            response = self.http.get("/v1/identity", params={"nonce": nonce}, timeout=timeout)
        except OSError as error:
            raise self._unreachable(error) from None
        body = response.body if response.status == 200 else None
        if not (
            isinstance(body, dict)
            and body.get("service") == "supervisor"
            and proof_matches(secret, nonce, body.get("proof"), _dialled_port(self.url))
        ):
            raise CommandError(
                f"kronii: the server at {self.url} is not this host's supervisor (its identity proof "
                "does not match the local secret); refusing to send it a token. "
                "Set KRONII_SUPERVISOR_URL or --url",
                exits.REFUSED,
            )

    def call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = self.http.request(method, path, **kwargs)
        except OSError as error:
            raise self._unreachable(error) from None
        body = response.body if response.body is not None else {"detail": response.text}
        if response.status >= 400:
            detail = body.get("detail") if isinstance(body, dict) else body
            raise CommandError(
                f"kronii: the supervisor refused: {detail} (HTTP {response.status})",
                exits.exit_for_error(response.status, body),
            )
        out: dict[str, Any] = body
        return out


def _dialled_port(url: str) -> int:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.port or (443 if parts.scheme == "https" else 80)
