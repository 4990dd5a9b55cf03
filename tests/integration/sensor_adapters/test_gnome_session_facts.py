"""What the sensor can do on GNOME, from the session's facts (kronii.desktop.session.assess, pure): focus
once kronii's Shell extension owns its bus name, else the sentence that says how to install it; idle from
mutter's IdleMonitor either way."""

from __future__ import annotations

from pathlib import Path

from kronii.desktop.session import GNOME_EXTENSION_MISSING, SessionFacts, capability

MUTTER_GLOBALS = frozenset({"wl_seat", "gtk_shell1", "xdg_wm_base", "zwp_virtual_keyboard_manager_v1"})


def _gnome(extension: bool) -> SessionFacts:
    socket = Path("/run/user/1000/wayland-0")
    return SessionFacts(
        "wayland", "gnome", "GNOME (mutter)", socket, "", MUTTER_GLOBALS, gnome_extension=extension
    )


def test_gnome_focus_works_from_the_extension_once_it_owns_its_bus_name() -> None:
    focus = capability(_gnome(True), "sensor", "focus")
    assert focus.ok and "org.kronii.Shell1" in focus.detail


def test_gnome_focus_without_the_extension_says_how_to_install_it() -> None:
    focus = capability(_gnome(False), "sensor", "focus")
    assert not focus.ok
    assert focus.detail == f"Wayland (GNOME (mutter)): {GNOME_EXTENSION_MISSING}"


def test_gnome_idle_comes_from_mutters_idle_monitor_with_or_without_the_extension() -> None:
    for extension in (True, False):
        idle = capability(_gnome(extension), "sensor", "idle")
        assert idle.ok and "org.gnome.Mutter.IdleMonitor" in idle.detail
