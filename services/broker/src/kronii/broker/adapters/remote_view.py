"""Remote viewing, and whether the broker can see who watches: x11vnc, its viewer hooks, and what
the broker cannot know.

A person watching through VNC makes the session interactive, so the broker must never say "nobody
watches" when it cannot see. It cannot while its hook socket is not open, while its own x11vnc is
not running (its port held by another program, x11vnc failing), and for a while after viewers were
disconnected under it: when an earlier broker was killed, its x11vnc stayed on the port with the
person's viewer attached, and this broker stops it (see docs/broker.md, "A broker that comes back").
Each of these is a sentence (``problem``) the DesktopWitness (the Attachment) turns into the
"unknown" reason, under which the control table refuses every agent's acquire and says why.

Order at start: the hook socket first, since it is also the data dir's lock (a live broker of the
same data dir answers on it: nothing of that broker's is touched); then any x11vnc of this data dir
still running is an orphan: its viewers are counted and it is stopped; then our own x11vnc. A loop
restarts x11vnc when it exits or could not start, and ends the wait for a reconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path

from kronii.broker.adapters.viewer_record import ViewerRecord
from kronii.broker.adapters.viewer_socket import ViewerHookError, ViewerHookListener, hook_socket_path
from kronii.broker.adapters.vnc import VncServer, VncSettings
from kronii.broker.adapters.vnc_processes import port_holder, stop_process, viewers_connected, x11vncs_of
from kronii.broker.core.interactive import reconnect_wait_s
from kronii.broker.ports import DesktopWitness

__all__ = ["UNSEEN", "RemoteView"]

log = logging.getLogger(__name__)

UNSEEN = "the broker cannot see the desktop's viewers"


class RemoteView:
    def __init__(
        self,
        display: str,
        data_dir: Path,
        settings: VncSettings,
        attachment: DesktopWitness,
        *,
        reconnect_grace_s: float,
        retry_s: float = 2.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._display = display
        self._data_dir = Path(data_dir)
        self._settings = settings
        self._attachment = attachment
        self._grace_s = reconnect_grace_s
        self._retry_s = retry_s
        self._monotonic = monotonic
        self._record = ViewerRecord(self._data_dir / "vnc" / "viewers.json", monotonic)
        self._listener: ViewerHookListener | None = None
        self._vnc: VncServer | None = None
        self._serving = False
        self.failure = ""  # why x11vnc or its hooks do not work now ("" while they do)
        self._waiting_until: float | None = None
        self._waiting_why = ""
        self._said: str | None = None
        self._task: asyncio.Task[None] | None = None

    # ---- what the rest of the broker reads ---------------------------------------------------------

    @property
    def problem(self) -> str:
        """Why the broker cannot see the desktop's viewers now, a sentence; "" when it can."""
        if self.failure:
            return f"{UNSEEN}: {self.failure}"
        if self._waiting_until is not None:
            return f"{UNSEEN}: {self._waiting_why}"
        return ""

    @property
    def port(self) -> int:
        return self._vnc.port if self._vnc is not None else 0

    @property
    def viewer_count(self) -> int:
        return self._listener.viewer_count if self._listener is not None else 0

    # ---- start, watch, stop ------------------------------------------------------------------------

    async def start(self) -> None:
        earlier = await asyncio.to_thread(self._record.read)
        if earlier.viewers is None:
            self._wait(self._grace_s, "the record of the viewers the broker before this one saw is damaged")
        else:
            self._wait(
                reconnect_wait_s(earlier.viewers, earlier.ended_s_ago, self._grace_s),
                "a viewer was attached when the broker before this one ended; the person may reconnect",
            )
        if await self._open_hooks():
            await self._start_vnc()
        self._publish()
        self._task = asyncio.create_task(self._watch(), name="broker-remote-view")

    async def _open_hooks(self) -> bool:
        listener = ViewerHookListener(hook_socket_path(self._data_dir), self._on_viewer)
        try:
            await listener.start()
        except (ViewerHookError, OSError) as error:
            self.failure = f"its viewer hook socket could not be opened ({error})"
            return False
        self._listener = listener
        self._vnc = VncServer(self._display, self._data_dir, listener.path, self._settings)
        return True

    async def _start_vnc(self) -> None:
        assert self._vnc is not None and self._listener is not None
        orphans, viewers = await asyncio.to_thread(self._stop_orphans, self._vnc)
        if orphans:
            self._wait(
                reconnect_wait_s(viewers, None, self._grace_s),
                "a viewer was attached to the x11vnc an earlier broker left running, which this broker "
                "had to stop; the person may reconnect",
            )
            self._listener.clear()  # hooks the orphan ran before it was stopped
        try:
            await asyncio.to_thread(self._vnc.start)
        except Exception as error:
            self.failure = await asyncio.to_thread(self._why_not_started, error)
            return
        self.failure = ""
        self._serving = True
        self._write_record()
        log.info("broker: remote viewing on 127.0.0.1:%d (password in the data dir)", self._vnc.port)

    @staticmethod
    def _stop_orphans(vnc: VncServer) -> tuple[int, int | None]:
        """Stop every x11vnc of this data dir but ours; how many, and how many viewers they had."""
        pids = [pid for pid in x11vncs_of(vnc.directory) if pid != vnc.pid]
        viewers: int | None = 0
        for pid in pids:
            connected = viewers_connected(pid)
            viewers = None if connected is None or viewers is None else viewers + connected
            log.warning(
                "broker: x11vnc (pid %d) of an earlier broker of this data dir still serves the desktop "
                "(%s viewer(s) connected): stopping it to serve the desktop with its own",
                pid,
                "unknown" if connected is None else connected,
            )
            if not stop_process(pid, vnc.directory):
                log.error("broker: the earlier x11vnc (pid %d) did not stop", pid)
        return len(pids), viewers

    def _why_not_started(self, error: Exception) -> str:
        port = self._settings.port
        holder = port_holder(port) if port else ""
        return f"port {port} is held by {holder}" if holder else f"x11vnc did not start ({error})"

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._retry_s)
            try:
                await self._check()
            except Exception:
                log.exception("broker: the remote-view check failed")

    async def _check(self) -> None:
        if self._waiting_until is not None and self._monotonic() >= self._waiting_until:
            self._waiting_until = None
            log.info("broker: no viewer came back within %.0f s", self._grace_s)
        if self._listener is None:
            if await self._open_hooks():
                await self._start_vnc()
        elif self._vnc is not None and not self._vnc.running:
            if self._serving:
                self._serving = False
                attached = self._listener.viewer_count
                log.warning("broker: x11vnc exited (%d viewer(s) attached): starting it again", attached)
                self._wait(
                    reconnect_wait_s(attached, None, self._grace_s),
                    "x11vnc exited with a viewer attached and was started again; the person may reconnect",
                )
                await asyncio.to_thread(self._vnc.stop)  # reaps it and any hook left in its group
                self._listener.clear()
            await self._start_vnc()
        self._publish()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        # Counted first: stopping x11vnc disconnects the viewers, and their "gone" hooks may arrive.
        attached = self._viewers_for_record()
        if self._vnc is not None:
            await asyncio.to_thread(self._vnc.stop)
        if self._listener is not None:
            self._listener.clear()
            self._write_record(attached, ended=True)
            await self._listener.stop()

    # ---- viewers -----------------------------------------------------------------------------------

    def _on_viewer(self, attached: bool, client_id: str) -> None:
        if attached:
            self._waiting_until = None  # the person is seen: nothing to wait for
        self._attachment.viewers(self.viewer_count)
        self._write_record()
        self._publish()

    def _wait(self, seconds: float, why: str) -> None:
        if seconds <= 0:
            return
        until = self._monotonic() + seconds
        if self._waiting_until is None or until > self._waiting_until:
            self._waiting_until = until
            self._waiting_why = f"{why} (waiting up to {seconds:.0f} s for a viewer)"
        self._publish()  # at once: the x11vnc started next may take a while

    def _viewers_for_record(self) -> int:
        # While waiting for a reconnect, a person may be there: the broker after this one waits too.
        return self.viewer_count or (1 if self._waiting_until is not None else 0)

    def _write_record(self, viewers: int | None = None, *, ended: bool = False) -> None:
        viewers = self._viewers_for_record() if viewers is None else viewers
        try:
            self._record.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._record.write(viewers, ended=ended)
        except OSError as error:
            log.warning("broker: %s", error)

    def _publish(self) -> None:
        problem, before = self.problem, self._said
        if problem == before:
            return
        self._said = problem
        if problem:
            log.warning("broker: %s; agents' acquire is refused until it can", problem)
        elif before:
            log.info("broker: the desktop's viewers are seen again")
        self._attachment.viewers_unseen(problem)
