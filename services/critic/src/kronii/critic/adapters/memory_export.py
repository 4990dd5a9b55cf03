"""The journal's records for sharing (`kronii critic export`, ports.RecordExport): the day files'
records and those still waiting for room in them, oldest first; redacted, every path becomes a
placeholder (the same path the same one), the texts go through the redaction engine once more and
the embeddings are left out."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from typing import Any

from kronii.critic.adapters.daily_files import DailyFiles
from kronii.critic.adapters.journal import Journal
from kronii.critic.core.model import InvocationRecord
from kronii.critic.core.share import PathMasker

__all__ = ["MemoryExport"]

_EXPORT_TEXT_FIELDS = ("command_line", "cwd", "error_type", "error_message", "summary")


def _redact_for_sharing() -> Callable[[str], str]:
    from kronii.redaction import WITHHELD_TEXT, Level, shared_engine

    engine = shared_engine()

    def redact(text: str) -> str:
        result = engine.redact(text)
        return WITHHELD_TEXT if result.level is Level.RED else result.text

    return redact


class MemoryExport:
    def __init__(
        self, files: DailyFiles, journal: Journal, redact: Callable[[str], str] | None = None
    ) -> None:
        self._files = files
        self._journal = journal
        self._redact = redact

    def export_records(self, since_ms: int, redact: bool = True) -> Iterator[InvocationRecord]:
        """The journal's records from `since_ms`, oldest first. Redacted for sharing: every path
        becomes a placeholder, the same path the same one (core.share.PathMasker), then the texts go
        through the redaction engine once more (addresses, whatever the first pass let through)
        and the embeddings are left out."""
        if redact and self._redact is None:
            self._redact = _redact_for_sharing()
        paths = PathMasker()
        for record in self._journaled_since(since_ms):
            if redact and self._redact is not None:
                masked: dict[str, Any] = {"cwd": paths.mask_path(record.cwd)}  # numbered first
                for name in _EXPORT_TEXT_FIELDS:
                    masked.setdefault(name, self._redact(paths.mask(getattr(record, name))))
                record = dataclasses.replace(record, embedding=(), **masked)
            yield record

    def _journaled_since(self, since_ms: int) -> list[InvocationRecord]:
        """The day files' records from `since_ms` and those still waiting for room in them, oldest
        first, each id once (the newest version)."""
        records = {record.record_id: record for record in self._files.read_records(since_ms)}
        for record in self._journal.pending():
            if record.timestamp_ms >= since_ms:
                records[record.record_id] = record
        return sorted(records.values(), key=lambda record: record.timestamp_ms)

    def export(self, since_ms: int, redact: bool = True) -> Iterator[str]:
        """JSON lines (without newlines) of export_records."""
        for record in self.export_records(since_ms, redact):
            data = dataclasses.asdict(record)
            data["trigger"] = record.trigger.value
            if redact:
                del data["embedding"]
            else:
                data["embedding"] = list(record.embedding)
            yield json.dumps(data, ensure_ascii=False, separators=(",", ":"))
