"""The spool file and the hint directory in the critic's runtime dir, as the doctor shows them
(ports.RuntimePlaces)."""

from __future__ import annotations

from pathlib import Path

from kronii.critic.adapters.shell_init import SPOOL_NAME
from kronii.critic.core.doctor import PlaceState

__all__ = ["RuntimePlaces"]


def _place(path: Path, kind: str) -> PlaceState:
    ok = path.exists()
    return PlaceState(
        str(path), ok, "" if ok else f"the {kind} is missing: is the critic's runtime dir writable?"
    )


class RuntimePlaces:
    def __init__(self, runtime: Path) -> None:
        self._runtime = runtime

    def spool(self) -> PlaceState:
        return _place(self._runtime / SPOOL_NAME, "spool")

    def hints(self) -> PlaceState:
        return _place(self._runtime, "hint directory")
