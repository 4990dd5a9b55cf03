"""The seed's JSON-lines log of every control decision: one object per line, appended and flushed
as it happens, in a 0600 file the broker's user alone can read (it names agents and windows)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, TextIO

__all__ = ["JsonLinesJournal"]

log = logging.getLogger(__name__)


class JsonLinesJournal:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._handle: TextIO | None = None

    @property
    def path(self) -> Path:
        return self._path

    def open(self) -> None:
        self._path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.fchmod(descriptor, 0o600)
        self._handle = os.fdopen(descriptor, "a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        if self._handle is None:
            return
        try:
            self._handle.write(json.dumps(record, separators=(",", ":"), default=str) + "\n")
            self._handle.flush()
        except OSError as error:  # a full disk must not stop a revocation
            log.warning("broker: the control journal could not be written: %s", error.strerror)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
