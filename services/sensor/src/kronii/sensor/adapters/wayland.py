"""Wayland adapter: the focused window and idle time from the protocols the compositor offers any client
(see kronii.desktop.wayland_toplevels), so one adapter serves sway, Hyprland, river, labwc and wayfire.

`Focus` fields as this adapter fills them:

- `window_id`: the compositor's handle of the toplevel (unique while it lives).
- `app_name` and `wm_class`: the app id (`foot`, `org.gnome.Calculator`); Wayland has no WM_CLASS.
- `title`: raw; the caller redacts it.
- `pid`, `app_start_time_ms`: 0: the window list does not say which process a window is.
- `prompt`: from the app id, as for X11's WM_CLASS (core.prompts).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from kronii.desktop.session import SessionFacts, assess
from kronii.desktop.wayland_toplevels import Toplevel, ToplevelWatch
from kronii.desktop.wayland_wire import WaylandError
from kronii.sensor.core.model import Focus
from kronii.sensor.core.prompts import WindowFacts, prompt_kind
from kronii.sensor.ports import DisplayUnavailable, IdleUnavailable

__all__ = ["WaylandDisplay", "focus_of"]

log = logging.getLogger(__name__)


def focus_of(toplevel: Toplevel | None) -> Focus:
    if toplevel is None:
        return Focus()
    facts = WindowFacts(toplevel.app_id, toplevel.app_id, "", ())
    return Focus(
        app_name=toplevel.app_id,
        wm_class=toplevel.app_id,
        window_id=toplevel.handle,
        title=toplevel.title,
        prompt=prompt_kind(facts),
    )


class WaylandDisplay:
    """A DisplaySource on a Wayland compositor's socket. Raises DisplayUnavailable when the socket does
    not answer; `problem` says what the compositor does not offer ("" when it offers all)."""

    def __init__(self, facts: SessionFacts) -> None:
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

    def start(self, callback: Callable[[Focus], None]) -> None:
        if self._watch.has_focus:
            self._watch.start(lambda toplevel: callback(focus_of(toplevel)))
        else:
            self._watch.start(lambda _toplevel: None)  # idle still arrives on the watcher's thread

    def close(self) -> None:
        self._watch.close()
