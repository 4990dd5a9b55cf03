"""`kronii vision setup`'s registration of the engine's key with capture and the broker.

The vision engine may not import another service, so it asks them as a person would: through their
own `clients` commands (`kronii capture clients ...`, `kronii broker clients ...`), run as child
processes of the same interpreter."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from kronii.launcher.cli import exits
from kronii.launcher.cli.agent_clients import read_public_key
from kronii.launcher.cli.exits import CommandError

__all__ = ["SERVICES", "Registration"]

SERVICES = ("capture", "broker")
_TIMEOUT_S = 60


@dataclass(frozen=True)
class Registration:
    client_id: str
    public_key_file: Path

    def command(self, service: str) -> list[str]:
        """The command a person would type to register the key with `service`."""
        return [
            "kronii",
            service,
            "clients",
            "add",
            self.client_id,
            "--public-key",
            str(self.public_key_file),
        ]

    def missing(self) -> list[str]:
        """The services whose registry has no active client of this id with this key."""
        key = base64.b64encode(read_public_key(str(self.public_key_file))).decode()
        return [service for service in SERVICES if not self._knows(service, key)]

    def register(self, service: str) -> None:
        self._run(self.command(service)[1:])

    def _knows(self, service: str, key: str) -> bool:
        listed = json.loads(self._run([service, "clients", "list", "--json"]) or "[]")
        return any(
            item["client_id"] == self.client_id and item["public_key"] == key and not item["revoked_at"]
            for item in listed
        )

    def _run(self, args: list[str]) -> str:
        ran = subprocess.run(
            [sys.executable, "-m", "kronii.launcher.cli.main", *args],
            capture_output=True, text=True, timeout=_TIMEOUT_S, check=False,
        )  # fmt: skip
        if ran.returncode != exits.OK:
            said = ran.stderr.strip() or f"`kronii {' '.join(args)}` exited {ran.returncode}"
            known = (exits.FAILED, exits.USAGE, exits.NOT_FOUND, exits.REFUSED, exits.UNREACHABLE)
            raise CommandError(said, ran.returncode if ran.returncode in known else exits.FAILED)
        return ran.stdout
