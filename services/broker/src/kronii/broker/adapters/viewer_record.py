"""How many viewers were attached, kept on disk for the broker that starts after this one.

A broker killed with SIGKILL says nothing on its way out, and whoever stops the x11vnc it left
running disconnects the person watching through it. So the broker writes the number of attached
viewers to ``<data dir>/broker/vnc/viewers.json`` at every change, and at a clean stop when it
stopped: the next broker reads it and knows a person was watching a moment ago. Times are the
system's monotonic clock (one per boot, shared by every process) with the boot's id, so a wall-clock
step cannot stretch or shorten the wait, and a record from before a reboot is ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["EarlierViewers", "ViewerRecord"]

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


@dataclass(frozen=True)
class EarlierViewers:
    """What the record says: ``viewers`` None when it is damaged (not known), ``ended_s_ago`` None when
    the broker that wrote it did not stop cleanly (killed or crashed: no end was written)."""

    viewers: int | None
    ended_s_ago: float | None


def _boot_id() -> str:
    try:
        return _BOOT_ID.read_text().strip()
    except OSError:
        return ""


class ViewerRecord:
    def __init__(self, path: Path, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._path = Path(path)
        self._monotonic = monotonic
        self._boot = _boot_id()

    @property
    def path(self) -> Path:
        return self._path

    def read(self) -> EarlierViewers:
        """The earlier broker's last word; no record (a first start) or one from an earlier boot: 0."""
        try:
            body = json.loads(self._path.read_text())
        except FileNotFoundError:
            return EarlierViewers(0, None)
        except (OSError, ValueError):
            return EarlierViewers(None, None)
        if not isinstance(body, dict):
            return EarlierViewers(None, None)
        if body.get("boot_id") != self._boot or not self._boot:
            return EarlierViewers(0, None)
        viewers, ended = body.get("viewers"), body.get("ended")
        if isinstance(viewers, bool) or not isinstance(viewers, int) or viewers < 0:
            return EarlierViewers(None, None)
        if ended is None:
            return EarlierViewers(viewers, None)
        if isinstance(ended, bool) or not isinstance(ended, int | float):
            return EarlierViewers(None, None)
        return EarlierViewers(viewers, max(0.0, self._monotonic() - float(ended)))

    def write(self, viewers: int, *, ended: bool = False) -> None:
        """The number of viewers now; ``ended``: this broker is stopping cleanly."""
        body = {"boot_id": self._boot, "viewers": viewers, "ended": self._monotonic() if ended else None}
        partial = self._path.with_name(self._path.name + ".new")
        try:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(json.dumps(body))
            os.replace(partial, self._path)
        except OSError as error:
            # The next broker then finds an older count: it may wait for a reconnect it need not,
            # or not wait, exactly as without this record. Never a reason to stop the broker.
            with contextlib.suppress(OSError):
                partial.unlink()
            raise OSError(f"the viewer record could not be written: {error.strerror}") from None
