"""The X11 adapter tells prompt windows from apps on a real Xvfb + openbox: by WM_CLASS, by the
program that owns the window, and by _NET_WM_WINDOW_TYPE for a real zenity dialog."""

from __future__ import annotations

import os
import subprocess

from kronii.sensor.adapters.x11 import X11Display

from tests.desktop import focus_window, open_window, stop_process, wait_until


def test_a_window_of_the_keyring_prompter_class_is_a_keyring_prompt_and_an_xterm_an_app(
    x_display: str,
) -> None:
    x11 = X11Display(x_display)
    try:
        with (
            open_window(
                x_display, "Choose password for new keyring", "Gcr-prompter", instance="gcr-prompter"
            ) as p,
            open_window(x_display, "notes", "KroniiNotes") as app,
        ):
            focus_window(x_display, p.window_id)
            wait_until(lambda: x11.focused().window_id == p.window_id, timeout_s=5.0, what="prompt focused")
            assert x11.focused().prompt == "keyring"
            focus_window(x_display, app.window_id)
            wait_until(lambda: x11.focused().window_id == app.window_id, timeout_s=5.0, what="app focused")
            assert x11.focused().prompt == ""
    finally:
        x11.close()


def test_a_real_zenity_password_dialog_is_a_dialog_prompt(x_display: str) -> None:
    env = {**os.environ, "DISPLAY": x_display}
    dialog = subprocess.Popen(
        ["zenity", "--password", "--title", "sudo"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    x11 = X11Display(x_display)
    try:

        def zenity_window() -> int:
            found = subprocess.run(
                ["xdotool", "search", "--onlyvisible", "--pid", str(dialog.pid)],
                env=env, capture_output=True, text=True, check=False,
            )  # fmt: skip
            return int(found.stdout.split()[0]) if found.stdout.split() else 0

        wait_until(lambda: zenity_window() != 0, timeout_s=15.0, what="the zenity dialog mapped")
        focus_window(x_display, zenity_window())
        wait_until(lambda: x11.focused().pid == dialog.pid, timeout_s=5.0, what="the dialog focused")
        focused = x11.focused()
        assert focused.prompt == "dialog", focused
    finally:
        x11.close()
        stop_process(dialog)
