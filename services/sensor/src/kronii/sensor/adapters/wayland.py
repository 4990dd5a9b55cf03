"""Wayland adapter: the focused window and idle time from the protocols the compositor offers any client
(see kronii.desktop.wayland_toplevels), so one adapter serves sway, Hyprland, river, labwc and wayfire.

`Focus` fields as this adapter fills them:

- `window_id`: the compositor's handle of the toplevel (unique while it lives).
- `app_name` and `wm_class`: the app id (`foot`, `org.gnome.Calculator`); Wayland has no WM_CLASS.
- `title`: raw; the caller redacts it.
- `pid`, `app_start_time_ms`: the window list does not say which process a window is; where sway's IPC
  answers (SWAYSOCK), the window of that app id and title in its tree names its pid; elsewhere 0.
- `prompt`: from the app id and the pid's program, as for X11's WM_CLASS (core.prompts).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kronii.desktop.session import SessionFacts, assess
from kronii.desktop.sway_ipc import GET_TREE, SwayIpcError, request
from kronii.desktop.wayland_toplevels import Toplevel, ToplevelWatch
from kronii.desktop.wayland_wire import WaylandError
from kronii.sensor.adapters.processes import ProcessReader
from kronii.sensor.core.model import Focus
from kronii.sensor.core.prompts import WindowFacts, prompt_kind
from kronii.sensor.ports import DisplayUnavailable, IdleUnavailable

__all__ = ["WaylandDisplay", "focus_of", "sway_pid"]

log = logging.getLogger(__name__)


def focus_of(toplevel: Toplevel | None, processes: ProcessReader | None = None, pid: int = 0) -> Focus:
    if toplevel is None:
        return Focus()
    program = processes.program(pid) if processes is not None else ""
    facts = WindowFacts(toplevel.app_id, toplevel.app_id, program, ())
    return Focus(
        app_name=toplevel.app_id,
        wm_class=toplevel.app_id,
        window_id=toplevel.handle,
        title=toplevel.title,
        pid=pid,
        app_start_time_ms=processes.start_time_ms(pid) if processes is not None else 0,
        prompt=prompt_kind(facts),
    )


def _windows(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if node.get("pid") and node.get("type") in ("con", "floating_con"):
        yield node
    for child in [*node.get("nodes", []), *node.get("floating_nodes", [])]:
        yield from _windows(child)


def sway_pid(ipc: Path, toplevel: Toplevel) -> int:
    """The pid sway's tree gives the window of this app id and title (the focused one among equals); 0
    when sway does not answer or has no such window."""
    try:
        tree = request(ipc, GET_TREE)
    except SwayIpcError as error:
        log.debug("sway's tree could not be read: %s", error)
        return 0
    same = [
        n for n in _windows(tree) if n.get("app_id") == toplevel.app_id and n.get("name") == toplevel.title
    ]
    same.sort(key=lambda node: not node.get("focused"))
    return int(same[0]["pid"]) if same else 0


class WaylandDisplay:
    """A DisplaySource on a Wayland compositor's socket. Raises DisplayUnavailable when the socket does
    not answer; `problem` says what the compositor does not offer ("" when it offers all)."""

    def __init__(
        self, facts: SessionFacts, processes: ProcessReader | None = None, sway: Path | None = None
    ) -> None:
        self._processes = processes or ProcessReader()
        self._sway = sway
        if facts.wayland_socket is None:
            raise DisplayUnavailable("no Wayland socket")
        path: Path = facts.wayland_socket
        try:
            self._watch = ToplevelWatch(path)
        except WaylandError as error:
            raise DisplayUnavailable(str(error)) from error
        self.display_name = f"Wayland ({facts.name}) {path}"
        missing = [item.detail for item in assess(facts) if item.agent == "sensor" and not item.ok]
        self.problem = "; ".join(missing)

    @property
    def has_idle(self) -> bool:
        return self._watch.has_idle

    @property
    def has_focus(self) -> bool:
        return self._watch.has_focus

    @property
    def errors(self) -> int:
        return 1 if self._watch.error else 0

    def idle_ms(self) -> int:
        if self._watch.error:
            raise DisplayUnavailable(self._watch.error)
        if not self._watch.has_idle:
            raise IdleUnavailable("the compositor offers no idle notification")
        return self._watch.idle_ms()

    def watch_idle(self, on_idle: Callable[[int], None]) -> bool:
        """The idle notifier's events are kept by the watch: idle_ms() reads them without I/O.
        `on_idle` is not called (the notices come at the notifier's 1 s timeout, as a poll would)."""
        return self._watch.has_idle

    def start(self, callback: Callable[[Focus], None]) -> None:
        if self._watch.has_focus:
            self._watch.start(lambda toplevel: callback(self._focus(toplevel)))
        else:
            self._watch.start(lambda _toplevel: None)  # idle still arrives on the watcher's thread

    def _focus(self, toplevel: Toplevel | None) -> Focus:
        pid = sway_pid(self._sway, toplevel) if self._sway is not None and toplevel is not None else 0
        return focus_of(toplevel, self._processes, pid)

    def close(self) -> None:
        self._watch.close()
