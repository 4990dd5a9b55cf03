"""The person's input from the broker's VNC viewers, typed by the broker itself, after the agent's.

x11vnc makes its own X connection impervious to server grabs (XTestGrabControl), so a viewer's key it
injected itself could be processed in the middle of an agent's batch. With -pipeinput x11vnc injects
nothing: it writes each viewer event to a FIFO the broker reads (core.viewer_input parses the lines).
For each event the broker (1) closes the input fence, so the agent's action stops at its next event;
(2) waits until the agent's injector is quiet: an action that stopped has ended with a round trip, so
all its events have been processed; (3) replays the event on its own "kronii-viewer" master, synced;
and hands the event to the loop, where the table revokes the lease. A viewer's key is therefore
processed after every agent event written before it, and no agent event of that lease is written
after it. The viewer's keys go where the core keyboard's focus is, as x11vnc's would.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Literal

from kronii.broker.adapters.x_master import XMasterInjector
from kronii.broker.core.facts import UserInputSeen
from kronii.broker.core.viewer_input import ViewerKey, ViewerPointer, buttons_changed, parse_viewer_line

__all__ = ["VIEWER_MASTER_NAME", "ViewerHands"]

log = logging.getLogger(__name__)

VIEWER_MASTER_NAME = "kronii-viewer"
_HAND_OVER_EVERY_S = 0.05  # as the watcher's debounce: a viewer's motion storm is one loop call per 50 ms


class ViewerHands:
    def __init__(
        self,
        display_name: str,
        fifo: Path,
        agent_quiet: Callable[[], AbstractContextManager[None]],
        close_fence: Callable[[str], bool],
        on_person: Callable[[UserInputSeen], None],
    ) -> None:
        self._display_name = display_name
        self.fifo = fifo
        self._agent_quiet = agent_quiet
        self._close_fence = close_fence
        self._on_person = on_person
        self._hands: XMasterInjector | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._mask = 0
        self._last_hand_over = float("-inf")

    def start(self) -> None:
        """Blocking: the master, then the FIFO (0600, in the broker's private directory), then the reader."""
        hands = XMasterInjector(self._display_name, VIEWER_MASTER_NAME)
        hands.start()
        self._hands = hands
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISFIFO(os.lstat(self.fifo).st_mode):
                raise OSError(f"{self.fifo} exists and is not a FIFO")
            self.fifo.unlink()
        os.mkfifo(self.fifo, 0o600)
        # Read and write: the FIFO never reads end-of-file while x11vnc reopens its end.
        descriptor = os.open(self.fifo, os.O_RDWR)
        self._thread = threading.Thread(
            target=self._read, args=(descriptor,), name="broker-viewer-input", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            with contextlib.suppress(OSError):
                writer = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
                os.write(writer, b"\n")
                os.close(writer)
            self._thread.join(2.0)
            self._thread = None
        with contextlib.suppress(FileNotFoundError):
            self.fifo.unlink()
        if self._hands is not None:
            self._hands.stop()
            self._hands = None

    def _read(self, descriptor: int) -> None:
        with os.fdopen(descriptor, "r", buffering=1, errors="replace") as lines:
            for line in lines:
                if self._stopping.is_set():
                    return
                try:
                    self.handle(line)
                except Exception:  # the display went away; the next event tries again
                    log.exception("broker: a viewer's input could not be replayed")

    def handle(self, line: str) -> None:
        event = parse_viewer_line(line)
        if event is None or self._hands is None:
            return
        at = time.monotonic()
        closed = self._close_fence("user_input")
        if closed or at - self._last_hand_over >= _HAND_OVER_EVERY_S:
            self._last_hand_over = at
            self._on_person(UserInputSeen(_kind(event, self._mask), 0, VIEWER_MASTER_NAME, at))
        with self._agent_quiet():
            waited = time.monotonic() - at
            if waited > 0.02:
                log.warning("broker: a viewer's input waited %.0f ms for the agent to stop", waited * 1000)
            if isinstance(event, ViewerKey):
                self._hands.replay_key(event.keysym, event.down)
            else:
                self._hands.replay_pointer(event.x, event.y, buttons_changed(self._mask, event.mask))
                self._mask = event.mask


def _kind(event: ViewerKey | ViewerPointer, mask: int) -> Literal["key", "button", "motion"]:
    if isinstance(event, ViewerKey):
        return "key"
    return "button" if event.mask != mask else "motion"
