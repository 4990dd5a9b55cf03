"""X11Display against a real Xvfb + openbox with xterm windows driven by xdotool."""

from __future__ import annotations

import contextlib
import queue
import time
from collections.abc import Callable, Iterator

import pytest
from kronii.sensor.adapters.x11 import DisplayUnavailable, IdleUnavailable, X11Display
from kronii.sensor.core.model import Focus
from Xlib import Xatom
from Xlib import display as xdisplay

from tests.desktop import (
    WindowHandle,
    focus_window,
    open_window,
    send_input,
    set_window_title,
    start_xvfb,
    wait_until,
)

# No X server listens here: no socket under /tmp/.X11-unix and TCP is refused.
NOWHERE = ":4093"


@contextlib.contextmanager
def opened(display: str) -> Iterator[X11Display]:
    x11 = X11Display(display)
    try:
        yield x11
    finally:
        x11.close()


def assert_focus_is(focus: Focus, window: WindowHandle, title: str | None = None) -> None:
    assert focus.window_id == window.window_id
    assert focus.pid == window.pid
    assert focus.app_name == window.wm_class
    assert focus.wm_class == f"{window.instance}.{window.wm_class}"
    assert focus.title == (title if title is not None else window.title)
    # btime is whole seconds and truncated, so the computed start is up to 1 s early.
    assert window.started_after * 1000 - 1000 <= focus.app_start_time_ms <= window.started_before * 1000 + 50


class FocusInbox:
    """Collects watcher callbacks (made on the watcher thread) for the test thread to wait on."""

    def __init__(self) -> None:
        self.items: queue.Queue[Focus] = queue.Queue()

    def __call__(self, focus: Focus) -> None:
        self.items.put(focus)

    def next(self, timeout_s: float = 3.0) -> Focus:
        return self.items.get(timeout=timeout_s)

    def wait_for(self, predicate: Callable[[Focus], bool], timeout_s: float = 3.0) -> Focus:
        deadline = time.monotonic() + timeout_s
        seen: list[Focus] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching focus within {timeout_s}s; saw {seen}")
            try:
                focus = self.items.get(timeout=left)
            except queue.Empty:
                continue
            if predicate(focus):
                return focus
            seen.append(focus)

    def assert_quiet(self, for_s: float = 0.4) -> None:
        with contextlib.suppress(queue.Empty):
            focus = self.items.get(timeout=for_s)
            raise AssertionError(f"unexpected focus report {focus}")


# ---- focused() ----------------------------------------------------------------------------------


def test_focused_reports_pid_class_title_and_start_time_of_the_window_xdotool_activated(
    x_display: str,
) -> None:
    with (
        open_window(x_display, "alpha window", "KroniiAlpha") as alpha,
        open_window(x_display, "beta window", "KroniiBeta", instance="beta-inst") as beta,
        opened(x_display) as x11,
    ):
        focus_window(x_display, alpha.window_id)
        assert_focus_is(x11.focused(), alpha)

        focus_window(x_display, beta.window_id)
        assert_focus_is(x11.focused(), beta)

        focus_window(x_display, alpha.window_id)
        assert_focus_is(x11.focused(), alpha)
        assert x11.errors == 0


def test_focused_decodes_latin1_wm_name_and_utf8_net_wm_name(x_display: str) -> None:
    # xterm stores a Latin-1-representable title only in WM_NAME (type STRING, Latin-1 bytes);
    # xdotool then writes UTF-8 into _NET_WM_NAME, which must win over WM_NAME.
    with open_window(x_display, "café", "KroniiTitles") as window, opened(x_display) as x11:
        focus_window(x_display, window.window_id)
        assert x11.focused().title == "café"

        # Clients that put UTF-8 into a STRING-typed WM_NAME despite ICCCM are common.
        raw = xdisplay.Display(x_display)
        try:
            win = raw.create_resource_object("window", window.window_id)
            win.change_property(Xatom.WM_NAME, Xatom.STRING, 8, "日本語 ok".encode())
            raw.sync()
        finally:
            raw.close()
        assert x11.focused().title == "日本語 ok"

        set_window_title(x_display, window.window_id, "naïve ✓ build")
        assert x11.focused().title == "naïve ✓ build"


def test_focused_is_empty_and_counts_an_error_when_the_active_window_does_not_exist(x_display: str) -> None:
    with opened(x_display) as x11:
        assert x11.errors == 0
        # What a window manager leaves behind for an instant when the active window dies.
        raw = xdisplay.Display(x_display)
        try:
            root = raw.screen().root
            root.change_property(raw.intern_atom("_NET_ACTIVE_WINDOW"), Xatom.WINDOW, 32, [0x3FFFFF])
            raw.sync()
        finally:
            raw.close()

        assert x11.focused() == Focus()
        assert x11.errors == 1


def test_focused_is_empty_without_error_when_no_window_is_active(x_display: str) -> None:
    with opened(x_display) as x11:
        assert x11.focused() == Focus()
        assert x11.errors == 0


# ---- the watcher thread -------------------------------------------------------------------------


def test_watcher_reports_current_focus_then_each_switch_and_title_change_of_the_active_window(
    x_display: str,
) -> None:
    with (
        open_window(x_display, "alpha", "KroniiWatchA") as alpha,
        open_window(x_display, "beta", "KroniiWatchB") as beta,
        opened(x_display) as x11,
    ):
        focus_window(x_display, alpha.window_id)
        inbox = FocusInbox()
        x11.start(inbox)
        try:
            assert x11.watching
            assert_focus_is(inbox.next(), alpha)

            focus_window(x_display, beta.window_id)
            assert_focus_is(inbox.wait_for(lambda f: f.window_id == beta.window_id), beta)

            # The watcher must have moved its title subscription to the newly active window.
            set_window_title(x_display, beta.window_id, "beta renamed")
            assert_focus_is(inbox.next(), beta, title="beta renamed")

            # A background window's title is none of the watcher's business...
            set_window_title(x_display, alpha.window_id, "alpha renamed")
            inbox.assert_quiet()

            # ...until it is active again, and then it is tracked once more.
            focus_window(x_display, alpha.window_id)
            assert_focus_is(
                inbox.wait_for(lambda f: f.window_id == alpha.window_id), alpha, title="alpha renamed"
            )
            set_window_title(x_display, alpha.window_id, "alpha again")
            assert_focus_is(inbox.next(), alpha, title="alpha again")
        finally:
            x11.stop()
        assert not x11.watching


def test_watcher_reports_no_focus_when_the_focused_window_is_destroyed_and_nothing_takes_it(
    x_display: str,
) -> None:
    # openbox leaves _NET_ACTIVE_WINDOW naming the destroyed window: no property changes, so only
    # the window's destruction tells the watcher (else its span would run on after it closed).
    with opened(x_display) as x11:
        inbox = FocusInbox()
        with open_window(x_display, "closing", "KroniiClosing") as closing:
            focus_window(x_display, closing.window_id)
            x11.start(inbox)
            try:
                assert_focus_is(inbox.wait_for(lambda f: f.window_id == closing.window_id), closing)
            except BaseException:
                x11.stop()
                raise
        try:
            assert inbox.wait_for(lambda f: f.window_id != closing.window_id) == Focus()
        finally:
            x11.stop()


def test_watcher_does_not_repeat_an_unchanged_focus(x_display: str) -> None:
    with open_window(x_display, "same", "KroniiSame") as window, opened(x_display) as x11:
        focus_window(x_display, window.window_id)
        inbox = FocusInbox()
        x11.start(inbox)
        try:
            assert inbox.next().window_id == window.window_id
            # Sets WM_NAME and _NET_WM_NAME to the title they already hold: two events, no change.
            set_window_title(x_display, window.window_id, "same")
            focus_window(x_display, window.window_id)
            inbox.assert_quiet()
        finally:
            x11.stop()


def test_watcher_stop_returns_within_one_second_and_start_works_again(x_display: str) -> None:
    with open_window(x_display, "w", "KroniiStop") as window, opened(x_display) as x11:
        focus_window(x_display, window.window_id)
        for _ in range(2):
            inbox = FocusInbox()
            x11.start(inbox)
            assert inbox.next().window_id == window.window_id
            began = time.monotonic()
            x11.stop()
            assert time.monotonic() - began < 1.0
            assert not x11.watching


def test_watcher_ends_and_queries_raise_display_unavailable_when_the_x_server_dies() -> None:
    with contextlib.ExitStack() as stack:
        display = stack.enter_context(start_xvfb())
        x11 = X11Display(display)
        inbox = FocusInbox()
        x11.start(inbox)
        assert inbox.next() == Focus()

        stack.close()  # kills openbox and Xvfb

        wait_until(lambda: not x11.watching, timeout_s=3.0, what="watcher thread ending")
        assert x11.errors >= 1
        with pytest.raises(DisplayUnavailable):
            x11.idle_ms()
        began = time.monotonic()
        x11.close()
        assert time.monotonic() - began < 1.0


def test_start_after_close_is_refused(x_display: str) -> None:
    x11 = X11Display(x_display)
    x11.close()
    with pytest.raises(RuntimeError):
        x11.start(FocusInbox())


# ---- idle ---------------------------------------------------------------------------------------


def test_idle_ms_grows_without_input_and_drops_after_xdotool_input(x_display: str) -> None:
    with opened(x_display) as x11:
        assert x11.has_idle
        send_input(x_display)
        before = x11.idle_ms()
        time.sleep(0.6)
        quiet = x11.idle_ms()
        assert quiet >= before + 500

        send_input(x_display)
        after = x11.idle_ms()
        assert after < quiet
        assert after < 400


def test_idle_ms_raises_idle_unavailable_when_the_server_lacks_mit_screen_saver() -> None:
    with start_xvfb(extra_args=["-extension", "MIT-SCREEN-SAVER"]) as display, opened(display) as x11:
        assert not x11.has_idle
        with pytest.raises(IdleUnavailable, match="MIT-SCREEN-SAVER"):
            x11.idle_ms()
        # The rest of the adapter still works without the extension.
        assert x11.focused() == Focus()


# ---- no display ---------------------------------------------------------------------------------


def test_open_gives_none_and_constructor_says_why_when_display_points_nowhere() -> None:
    assert X11Display.open(NOWHERE) is None
    with pytest.raises(DisplayUnavailable, match=NOWHERE):
        X11Display(NOWHERE)


def test_open_gives_none_when_display_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    assert X11Display.open() is None
    with pytest.raises(DisplayUnavailable, match="DISPLAY is not set"):
        X11Display()


def test_open_uses_display_from_the_environment(x_display: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", x_display)
    x11 = X11Display.open()
    assert x11 is not None
    try:
        assert x11.display_name == x_display
        assert x11.idle_ms() >= 0
    finally:
        x11.close()
