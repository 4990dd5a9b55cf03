"""The seed's append-only day files in `<data dir>/critic/` (a 0700 directory, 0600 files), the
journal of every record: whatever else is away, a record written here is not lost.

- `critic-YYYYMMDD.tsv`: the records (the seed's feedback log), one line each, the fields of
  RECORD_FIELDS in that order after a `#` header line naming them. Text fields escape `\\`, tab,
  newline and carriage return as `\\\\`, `\\t`, `\\n`, `\\r`; the embedding is base64 of 384
  little-endian float32 (empty without one). A record written again (its embedding came later) is a
  new line with the same id: readers keep the last line of each id.
- `events-YYYYMMDD.jsonl`: system events, one JSON object a line.
- `diagnostics-YYYYMMDD.log`: diagnostics, one line each.
- `clusters-YYYYMMDD.json`: the nightly groups of near-duplicate errors.
- `archive/`: the files of days older than RetentionDays, gzipped.

A record goes to the file of its own day (its timestamp in local time, or `tz` when given).

An append is one write of whole lines; when the file system refuses part of it (ENOSPC, EDQUOT) the
file is cut back to where it was, so a full disk leaves no torn line for the next append to run
into, and the caller keeps the record to write again (memory.TieredMemory does).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import logging
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from kronii.critic.core.model import EMBEDDING_DIM, InvocationRecord, Trigger
from kronii.critic.core.retention import day_of_file_name, day_stamp

__all__ = ["RECORD_FIELDS", "DailyFiles", "decode_record", "encode_record"]

log = logging.getLogger(__name__)

RECORD_FIELDS = (
    "record_id", "timestamp_ms", "trigger", "command_name", "command_line", "cwd", "exit_status",
    "duration_ms", "shell", "session", "error_type", "error_message", "summary", "redactions", "embedding",
)  # fmt: skip
_HEADER = "#" + "\t".join(RECORD_FIELDS) + "\n"
_INT_FIELDS = frozenset({"timestamp_ms", "exit_status", "duration_ms", "redactions"})
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


def _escape(text: str) -> str:
    if not any(ch in text for ch in _ESCAPES):
        return text
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    chars = iter(text)
    for ch in chars:
        if ch != "\\":
            out.append(ch)
            continue
        escaped = next(chars, "")
        out.append(_UNESCAPES.get(escaped, "\\" + escaped))
    return "".join(out)


def _pack_embedding(embedding: Sequence[float]) -> str:
    if not embedding:
        return ""
    return base64.b64encode(np.asarray(embedding, dtype="<f4").tobytes()).decode("ascii")


def _unpack_embedding(text: str) -> tuple[float, ...]:
    if not text:
        return ()
    values = np.frombuffer(base64.b64decode(text, validate=True), dtype="<f4")
    if values.shape != (EMBEDDING_DIM,):
        raise ValueError("an embedding of the wrong size")
    return tuple(float(value) for value in values)


def encode_record(record: InvocationRecord) -> str:
    """One TSV line (with its newline) for `record`."""
    cells = []
    for name in RECORD_FIELDS:
        value = getattr(record, name)
        if name == "embedding":
            cells.append(_pack_embedding(value))
        elif name in _INT_FIELDS:
            cells.append(str(int(value)))
        else:
            cells.append(_escape(str(value)))
    return "\t".join(cells) + "\n"


def decode_record(line: str) -> InvocationRecord:
    """The record of one TSV line; ValueError when the line is not one."""
    cells = line.rstrip("\n").split("\t")
    if len(cells) != len(RECORD_FIELDS):
        raise ValueError(f"a record line has {len(RECORD_FIELDS)} fields, not {len(cells)}")
    raw = dict(zip(RECORD_FIELDS, cells, strict=True))
    values: dict[str, Any] = {}
    for name, cell in raw.items():
        if name == "embedding":
            values[name] = _unpack_embedding(cell)
        elif name in _INT_FIELDS:
            values[name] = int(cell)
        else:
            values[name] = _unescape(cell)
    values["trigger"] = Trigger(values["trigger"])
    return InvocationRecord(**values)


def _open_private(path: Path) -> TextIO:
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.fchmod(descriptor, 0o600)
    return open(descriptor, "a", encoding="utf-8")


def _open_append(path: Path) -> int:
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    os.fchmod(descriptor, 0o600)
    return descriptor


def _write_whole(descriptor: int, data: bytes) -> None:
    """All of ``data`` at the end of the file, or none of it (the file cut back, the error raised)."""
    size = os.fstat(descriptor).st_size
    written = 0
    try:
        while written < len(data):
            written += os.write(descriptor, data[written:])
    except OSError:
        if written:
            with contextlib.suppress(OSError):
                os.ftruncate(descriptor, size)
        raise


class DailyFiles:
    def __init__(self, root: Path, tz: tzinfo | None = None) -> None:
        self._root = root
        self._tz = tz
        self._handles: dict[str, tuple[Path, int]] = {}

    @property
    def root(self) -> Path:
        return self._root

    def day_of(self, timestamp_ms: int) -> date:
        moment = datetime.fromtimestamp(timestamp_ms / 1000, self._tz)
        return moment.date()

    def path_for(self, kind: str, day: date) -> Path:
        suffix = {"critic": "tsv", "events": "jsonl", "diagnostics": "log", "clusters": "json"}[kind]
        return self._root / f"{kind}-{day_stamp(day)}.{suffix}"

    # ---- writing ---------------------------------------------------------------------------

    def append_record(self, record: InvocationRecord) -> None:
        self._append("critic", self.day_of(record.timestamp_ms), encode_record(record))

    def append_event(self, event: Mapping[str, Any], at_ms: int) -> None:
        line = json.dumps({"at_ms": at_ms, **event}, separators=(",", ":"), default=str)
        self._append("events", self.day_of(at_ms), line + "\n")

    def append_diagnostic(self, message: str, at_ms: int) -> None:
        stamp = datetime.fromtimestamp(at_ms / 1000, self._tz).isoformat(timespec="milliseconds")
        self._append("diagnostics", self.day_of(at_ms), f"{stamp} {_escape(message)}\n")

    def write_clusters(self, day: date, content: Mapping[str, Any]) -> Path:
        self._ensure_root()
        path = self.path_for("clusters", day)
        partial = path.with_name(path.name + ".partial")
        with _open_private(partial) as handle:
            handle.truncate(0)
            handle.write(json.dumps(content, indent=1) + "\n")
        partial.replace(path)
        return path

    def close(self) -> None:
        for _, descriptor in self._handles.values():
            os.close(descriptor)
        self._handles.clear()

    def _ensure_root(self) -> None:
        self._root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._root.chmod(0o700)

    def _append(self, kind: str, day: date, text: str) -> None:
        path = self.path_for(kind, day)
        current = self._handles.get(kind)
        if current is None or current[0] != path or not path.exists():
            if current is not None:
                os.close(current[1])
                del self._handles[kind]
            self._ensure_root()
            current = (path, _open_append(path))
            self._handles[kind] = current
        data = text.encode("utf-8")
        if kind == "critic" and os.fstat(current[1]).st_size == 0:
            data = _HEADER.encode("utf-8") + data
        # Written at once, unbuffered: the file is the journal the other tiers are rebuilt from.
        _write_whole(current[1], data)

    # ---- reading ---------------------------------------------------------------------------

    def file_days(self) -> list[date]:
        """The days that have files outside archive/, oldest first."""
        if not self._root.is_dir():
            return []
        days = {day_of_file_name(entry.name) for entry in self._root.iterdir() if entry.is_file()}
        return sorted(day for day in days if day is not None)

    def read_day(self, day: date) -> list[InvocationRecord]:
        """The records of one day, the last line of each id, in the order first written."""
        path = self.path_for("critic", day)
        latest: dict[str, InvocationRecord] = {}
        try:
            with path.open(encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    if line.startswith("#") or not line.strip():
                        continue
                    try:
                        record = decode_record(line)
                    except ValueError as error:  # a torn last line after a crash, or a hand edit
                        log.warning("critic: %s line %d skipped: %s", path.name, number, error)
                        continue
                    latest[record.record_id] = record
        except FileNotFoundError:
            return []
        return list(latest.values())

    def read_records(
        self, since_ms: int | None = None, newest_first: bool = False
    ) -> Iterator[InvocationRecord]:
        """Every record in the live files at or after `since_ms`, a day at a time."""
        days = [day for day in self.file_days() if since_ms is None or day >= self.day_of(since_ms)]
        for day in reversed(days) if newest_first else days:
            records = [r for r in self.read_day(day) if since_ms is None or r.timestamp_ms >= since_ms]
            records.sort(key=lambda record: record.timestamp_ms, reverse=newest_first)
            yield from records

    def read_clusters(self, day: date) -> dict[str, Any] | None:
        try:
            content: dict[str, Any] = json.loads(self.path_for("clusters", day).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except ValueError as error:
            log.warning("critic: the clusters of %s are unreadable: %s", day, error)
            return None
        return content

    # ---- retention -------------------------------------------------------------------------

    def archive(self, days: Sequence[date]) -> list[Path]:
        """Gzip every live file of `days` into archive/ and remove the original; returns the archives."""
        wanted = set(days)
        if not wanted or not self._root.is_dir():
            return []
        archive_dir = self._root / "archive"
        archive_dir.mkdir(mode=0o700, exist_ok=True)
        archive_dir.chmod(0o700)
        made = []
        for entry in sorted(self._root.iterdir()):
            if entry.is_file() and day_of_file_name(entry.name) in wanted:
                made.append(self._archive_file(entry, archive_dir))
        return made

    def _archive_file(self, source: Path, archive_dir: Path) -> Path:
        for kind, (path, descriptor) in list(self._handles.items()):
            if path == source:
                os.close(descriptor)
                del self._handles[kind]
        target = archive_dir / (source.name + ".gz")
        partial = archive_dir / (source.name + ".gz.partial")
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(descriptor, 0o600)
        with (
            os.fdopen(descriptor, "wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb") as packed,
            source.open("rb") as plain,
        ):
            shutil.copyfileobj(plain, packed)
        if target.exists():  # archived before and written again since: keep both
            target = archive_dir / f"{source.name}.{os.getpid()}-{datetime.now().timestamp():.0f}.gz"
        partial.replace(target)
        source.unlink()
        return target
