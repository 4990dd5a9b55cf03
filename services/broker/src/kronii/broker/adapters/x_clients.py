"""Which program sent input around the broker: the X clients connected when it arrived.

An XTEST event carries no client, only the device it came out of; the core XTEST devices are shared
by every plain XTEST client. What the X server can say is who is connected: the X-Resource extension
(QueryClientIds with LocalClientPIDMask) gives each local client's pid. A program like xdotool
connects, types and leaves, so the one to name is a client that is connected now and was not a
moment ago. `SenderFinder` keeps the time it first saw each client (a snapshot every couple of
seconds), and when unbrokered input arrives it names the clients connected now that are recent (not
seen before `RECENT_S`), not the broker itself and not x11vnc, newest first (the time the finder first
saw the client, then the process's own start time from /proc/PID/stat: a window opened a second ago
is older than the xdotool started just now), each with its program name. It can miss (the program had already gone, a client from another machine has no pid)
and it can name a bystander that connected at the same moment: it says "found", not "proven".

It runs on its own thread with its own X connection, so neither the event loop nor the raw-input
watcher waits for the X server's answer; it answers through a callback on that thread. Under a flood
it looks at most once a second (`LOOK_EVERY_S`): in between it answers with the senders it found last,
while they are still running.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kronii.broker.core.facts import InputSender, UnbrokeredInput, UserInputSeen
from Xlib import display as xdisplay
from Xlib import error as xerror
from Xlib.ext import res

__all__ = ["RECENT_S", "SenderFinder", "process", "senders_among"]

log = logging.getLogger(__name__)

RECENT_S = 5.0
SNAPSHOT_EVERY_S = 2.0
LOOK_EVERY_S = 1.0
MAX_NAMED = 3
# Programs that inject the person's own input or are the desktop itself, never an unbrokered sender.
NOT_SENDERS = frozenset({"x11vnc", "Xvfb", "Xorg", "Xwayland"})
_PROC = Path("/proc")


def process(pid: int) -> tuple[str, int] | None:
    """A process's name and start time (clock ticks after boot), from /proc/PID/stat; None if gone."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    name, _, rest = stat.partition("(")[2].rpartition(")")
    fields = rest.split()
    try:
        return name, int(fields[19])  # field 22, starttime, counted after the name
    except (IndexError, ValueError):
        return None


def _alive(senders: tuple[InputSender, ...]) -> bool:
    return all((_PROC / str(sender.pid)).exists() for sender in senders)


def senders_among(
    clients: dict[int, int],
    first_seen: dict[int, float],
    now: float,
    *,
    own_pid: int,
    describe: Callable[[int], tuple[str, int] | None] = process,
) -> tuple[InputSender, ...]:
    """The likely senders among ``clients`` (client id base -> pid): connected since ``now -
    RECENT_S`` or unseen before, not ``own_pid``, not a program in NOT_SENDERS; newest first (first
    seen, then the process's start time)."""
    found: list[tuple[float, int, InputSender]] = []
    seen_pids: set[int] = set()
    for base, pid in clients.items():
        since = first_seen.get(base, now)
        if pid in seen_pids or pid == own_pid or now - since > RECENT_S:
            continue
        described = describe(pid)
        if described is None or not described[0] or described[0] in NOT_SENDERS:
            continue
        seen_pids.add(pid)
        found.append((since, described[1], InputSender(described[0], pid)))
    found.sort(key=lambda item: (-item[0], -item[1]))
    return tuple(sender for _, _, sender in found[:MAX_NAMED])


class SenderFinder:
    """Names the programs behind unbrokered input, off the event loop (see the module docstring)."""

    def __init__(
        self,
        display_name: str,
        deliver: Callable[[UnbrokeredInput], None],
        *,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._display_name = display_name
        self._deliver = deliver
        self._monotonic = monotonic
        self._display: Any = None
        self._first_seen: dict[int, float] = {}
        self._last_look = float("-inf")
        self._last_found: tuple[InputSender, ...] = ()
        self._jobs: queue.SimpleQueue[UserInputSeen | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Opens its connection and takes the first snapshot; without X-Resource it still answers,
        naming nobody."""
        display = xdisplay.Display(self._display_name)
        if display.has_extension(res.extname):
            self._display = display
            with contextlib.suppress(xerror.XError):
                self._snapshot(self._monotonic())
        else:
            display.close()
            log.info("broker: the X server has no X-Resource extension: unbrokered input is not traced")
        self._thread = threading.Thread(target=self._run, name="broker-sender-finder", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._jobs.put(None)
        self._thread.join(2.0)
        self._thread = None
        if self._display is not None:
            self._display.close()
            self._display = None

    def find(self, seen: UserInputSeen) -> None:
        """Called from any thread: the answer comes to ``deliver`` on the finder's thread."""
        self._jobs.put(seen)

    def _clients(self) -> dict[int, int]:
        reply = self._display.res_query_client_ids([{"client": 0, "mask": res.LocalClientPIDMask}])
        return {int(entry.spec.client): int(entry.value[0]) for entry in reply.ids if entry.value}

    def _snapshot(self, now: float) -> dict[int, int]:
        clients = self._clients()
        self._first_seen = {base: self._first_seen.get(base, now) for base in clients}
        return clients

    def _senders(self) -> tuple[InputSender, ...]:
        if self._display is None:
            return ()
        now = self._monotonic()
        if now - self._last_look < LOOK_EVERY_S and self._last_found and _alive(self._last_found):
            return self._last_found
        self._last_look = now
        try:
            clients = self._clients()
        except (xerror.XError, OSError) as error:
            log.debug("broker: the X clients could not be listed: %s", error)
            return ()
        self._last_found = senders_among(clients, self._first_seen, now, own_pid=os.getpid())
        return self._last_found

    def _run(self) -> None:
        refreshed = self._monotonic()
        while True:
            try:
                seen = self._jobs.get(timeout=max(0.0, refreshed + SNAPSHOT_EVERY_S - self._monotonic()))
            except queue.Empty:
                self._refresh()
                refreshed = self._monotonic()
                continue
            if seen is None:
                return
            try:
                found = UnbrokeredInput(seen, self._senders())
            except Exception:  # a finder that fails still reports the input, naming nobody
                log.exception("broker: finding the sender of unbrokered input failed")
                found = UnbrokeredInput(seen, ())
            self._deliver(found)

    def _refresh(self) -> None:
        if self._display is None:
            return
        try:
            self._snapshot(self._monotonic())
        except (xerror.XError, OSError, xerror.ConnectionClosedError) as error:
            log.debug("broker: the X clients could not be listed: %s", error)
