"""The program names on the critic's PATH, for "did you mean" (listed at most once a minute)."""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["PathCommands"]

_TTL_S = 60.0


class PathCommands:
    def __init__(self, path: str | None = None) -> None:
        self._path = path
        self._names: frozenset[str] = frozenset()
        self._listed_at = float("-inf")

    def names(self) -> frozenset[str]:
        now = time.monotonic()
        if now - self._listed_at > _TTL_S:
            self._names = self._list()
            self._listed_at = now
        return self._names

    def _list(self) -> frozenset[str]:
        found: set[str] = set()
        for directory in (self._path if self._path is not None else os.environ.get("PATH", "")).split(
            os.pathsep
        ):
            try:
                entries = list(Path(directory).iterdir()) if directory else []
            except OSError:
                continue
            found.update(entry.name for entry in entries if os.access(entry, os.X_OK))
        return frozenset(found)
