"""Naming a capture's target the way a person would: a window by its id in any common form or by a
piece of its title, a process by its pid, an app by its name. Pure: the windows are passed in.

Each way picks the BypassPolicy that fits what was named (seed 000, "BypassPolicy"): a window is
`strict` (that window of that process), a pid `window_relaxed` (any window of that process), an app
`app_relaxed` (that app's process, or the same app restarted). An explicit `--bypass` wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Target", "TargetError", "WindowInfo", "parse_window_id", "resolve_target"]

_SHOWN = 5


@dataclass(frozen=True, slots=True)
class WindowInfo:
    """A top-level window as the X server describes it; `pid` 0 when the client does not say."""

    window_id: int
    pid: int
    app: str  # the class part of WM_CLASS ("XTerm")
    title: str

    def describe(self) -> str:
        return f"{self.window_id:#x} {self.app or '?'} pid {self.pid or '?'} {self.title[:50]!r}"


@dataclass(frozen=True, slots=True)
class Target:
    pid: int
    window_id: int
    app: str
    bypass: str
    why: str  # one line for the person: what was picked and why that policy


class TargetError(ValueError):
    """The target cannot be told from what was given; the message says what to name instead."""


def parse_window_id(text: str) -> int | None:
    """An X window id as xwininfo and wmctrl print it (0x1a00007) or as xdotool does (27262983).
    None when `text` is neither: then it is a piece of a title."""
    cleaned = text.strip().lower()
    try:
        if cleaned.startswith("0x"):
            return int(cleaned, 16)
        if cleaned.isdigit():
            return int(cleaned)
    except ValueError:
        return None
    return None


def _listing(windows: Sequence[WindowInfo]) -> str:
    shown = "; ".join(window.describe() for window in windows[:_SHOWN])
    more = f" and {len(windows) - _SHOWN} more" if len(windows) > _SHOWN else ""
    return shown + more


def _by_window(windows: Sequence[WindowInfo], text: str) -> WindowInfo:
    number = parse_window_id(text)
    if number is not None:
        found = [window for window in windows if window.window_id == number]
        if not found:
            raise TargetError(
                f"no window {number:#x} on this display; `kronii capture targets` lists the windows"
            )
        return found[0]
    needle = text.casefold()
    found = [window for window in windows if needle in window.title.casefold()]
    if not found:
        raise TargetError(f"no window's title contains {text!r}; `kronii capture targets` lists the windows")
    if len(found) > 1:
        raise TargetError(
            f"{len(found)} windows' titles contain {text!r}: {_listing(found)}; name one by its id"
        )
    return found[0]


def resolve_target(
    windows: Sequence[WindowInfo],
    *,
    window: str = "",
    pid: int = 0,
    app: str = "",
    bypass: str | None = None,
) -> Target:
    """The request's target from what the person named. `windows` are the display's windows."""
    if window:
        return _window_target(windows, window, pid, app, bypass)
    if pid:
        return _pid_target(windows, pid, app, bypass)
    if app:
        return _app_target(windows, app, bypass)
    raise TargetError("name a target with --window, --pid or --app (or none, for the focused window)")


def _window_target(
    windows: Sequence[WindowInfo], window: str, pid: int, app: str, bypass: str | None
) -> Target:
    chosen = _by_window(windows, window)
    if pid and chosen.pid and pid != chosen.pid:
        raise TargetError(f"window {chosen.window_id:#x} belongs to pid {chosen.pid}, not {pid}")
    if not (chosen.pid or pid):
        raise TargetError(f"window {chosen.window_id:#x} does not say which process it belongs to; add --pid")
    return Target(
        chosen.pid or pid,
        chosen.window_id,
        app or chosen.app,
        bypass or "strict",
        f"the window {chosen.describe()}",
    )


def _pid_target(windows: Sequence[WindowInfo], pid: int, app: str, bypass: str | None) -> Target:
    own = [w for w in windows if w.pid == pid]
    if not own:
        raise TargetError(f"process {pid} has no window on this display; `kronii capture targets` lists them")
    policy = bypass or "window_relaxed"
    if policy == "strict" and len(own) > 1:
        raise TargetError(f"process {pid} has {len(own)} windows: {_listing(own)}; name one with --window")
    return Target(pid, own[0].window_id, app or own[0].app, policy, f"any window of pid {pid} ({own[0].app})")


def _app_target(windows: Sequence[WindowInfo], app: str, bypass: str | None) -> Target:
    own = [w for w in windows if w.app.casefold() == app.casefold()]
    if not own:
        known = sorted({w.app for w in windows if w.app})
        raise TargetError(
            f"no window of an app named {app!r}; the display shows: {', '.join(known) or 'none'}"
        )
    pids = sorted({w.pid for w in own if w.pid})
    if len(pids) != 1:
        raise TargetError(
            f"{len(pids)} processes of {app!r} have windows: {_listing(own)}; name one with --pid or --window"
            if pids
            else f"the windows of {app!r} do not say their process; name the window with --window and --pid"
        )
    first = own[0]
    return Target(
        pids[0],
        first.window_id,
        first.app,
        bypass or "app_relaxed",
        f"the app {first.app} (pid {pids[0]})",
    )
