"""What each host agent can do in a session, from the facts found (kronii.desktop.session.assess), and the
Wayland wire format the facts are read with (kronii.desktop.wayland_wire)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from kronii.desktop.session import (
    SessionFacts,
    _display_name,
    _family,
    assess,
    capability,
    screencast_problem,
)
from kronii.desktop.wayland_wire import _decode, _encode, socket_path

SWAY_GLOBALS = frozenset(
    {
        "wl_seat",
        "zwlr_foreign_toplevel_manager_v1",
        "org_kde_kwin_idle",
        "zwlr_screencopy_manager_v1",
        "zwp_virtual_keyboard_manager_v1",
        "zwlr_layer_shell_v1",
    }
)
MUTTER_GLOBALS = frozenset({"wl_seat", "gtk_shell1", "xdg_wm_base", "zwp_virtual_keyboard_manager_v1"})
KWIN_GLOBALS = frozenset({"wl_seat", "org_kde_plasma_shell", "org_kde_kwin_idle", "xdg_wm_base"})
WESTON_GLOBALS = frozenset({"wl_seat", "weston_desktop_shell", "xdg_wm_base"})


def _wayland(name: str, family: str, offered: frozenset[str]) -> SessionFacts:
    return SessionFacts("wayland", family, name, Path("/run/user/1000/wayland-0"), "", offered)


def test_on_x11_every_capability_works_and_names_the_x_mechanism() -> None:
    facts = SessionFacts("x11", "x11", "X11", None, ":0")
    rows = assess(facts)
    assert all(row.ok for row in rows)
    assert "EWMH" in capability(facts, "sensor", "focus").detail
    assert "XTEST" in capability(facts, "broker", "input").detail


def test_on_a_wlroots_compositor_the_sensor_and_capture_work_from_its_protocols() -> None:
    facts = _wayland("sway", "wlroots", SWAY_GLOBALS)
    assert capability(facts, "sensor", "focus").ok
    assert "org_kde_kwin_idle" in capability(facts, "sensor", "idle").detail
    assert capability(facts, "capture", "frames").ok


def test_the_broker_works_on_sway_which_makes_its_seat_and_says_what_another_compositor_needs() -> None:
    sway = capability(
        _wayland("sway", "wlroots", SWAY_GLOBALS | {"zwlr_virtual_pointer_manager_v1"}), "broker", "input"
    )
    assert sway.ok and "kronii-agent" in sway.detail
    other = capability(
        _wayland("Hyprland", "wlroots", SWAY_GLOBALS | {"zwlr_virtual_pointer_manager_v1"}), "broker", "input"
    )
    assert not other.ok and "declare a seat named kronii-agent" in other.detail
    no_pointer = capability(_wayland("sway", "wlroots", SWAY_GLOBALS), "broker", "input")
    assert not no_pointer.ok and "zwlr_virtual_pointer_manager_v1" in no_pointer.detail


def test_gnome_says_it_does_not_let_programs_read_the_focused_window() -> None:
    facts = _wayland("GNOME (mutter)", "gnome", MUTTER_GLOBALS)
    focus = capability(facts, "sensor", "focus")
    assert not focus.ok and focus.detail.startswith(
        "Wayland (GNOME (mutter)): GNOME does not let other programs"
    )
    # without the extension nothing says which window is focused, so no request could be checked
    frames = capability(facts, "capture", "frames")
    assert not frames.ok and frames.detail.endswith(
        "so capture cannot check that its frames show the window asked for and takes none"
    )
    assert "kronii gnome-extension install" in frames.detail
    with_extension = capability(replace(facts, gnome_extension=True), "capture", "frames")
    assert with_extension.ok
    assert "mutter's screen cast (org.gnome.Mutter.ScreenCast) and PipeWire" in with_extension.detail
    act = capability(facts, "vision", "act")
    assert not act.ok and "vision on GNOME is not built yet" in act.detail
    typing = capability(facts, "broker", "input")
    assert not typing.ok and "could not tell your input from an agent's" in typing.detail


def test_gnome_frames_say_what_the_screen_cast_lacks_in_one_sentence() -> None:
    facts = replace(
        _wayland("GNOME (mutter)", "gnome", MUTTER_GLOBALS),
        screencast_problem="PipeWire is not running in this session (GNOME's screen cast sends its frames through it)",
    )  # fmt: skip
    frames = capability(facts, "capture", "frames")
    assert not frames.ok
    assert frames.detail == (
        "Wayland (GNOME (mutter)): GNOME gives other programs frames only through its screen cast, and "
        "PipeWire is not running in this session (GNOME's screen cast sends its frames through it)"
    )


def test_the_screen_cast_problem_names_the_missing_bus_name_pipewire_and_gstreamer(tmp_path: Path) -> None:
    env = {"XDG_RUNTIME_DIR": str(tmp_path), "PATH": str(tmp_path)}
    assert "is not on the session bus" in screencast_problem(env, on_bus=False)
    assert screencast_problem(env, on_bus=True).startswith("PipeWire is not running")
    (tmp_path / "pipewire-0").touch()
    assert screencast_problem(env, on_bus=True) == (
        "gst-launch-1.0 is missing: install gstreamer1.0-tools and gstreamer1.0-pipewire"
    )
    tool = tmp_path / "gst-launch-1.0"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert screencast_problem(env, on_bus=True) == ""


def test_kde_without_kwins_scripting_on_the_bus_says_so_and_idle_still_works() -> None:
    facts = _wayland("KDE Plasma (KWin)", "kde", KWIN_GLOBALS)
    focus = capability(facts, "sensor", "focus")
    assert not focus.ok and "its scripting (org.kde.KWin on the session bus)" in focus.detail
    assert capability(facts, "sensor", "idle").ok
    typing = capability(facts, "broker", "input")
    assert (
        not typing.ok
        and "org_kde_kwin_fake_input" in typing.detail
        and "agents do not type on KDE" in typing.detail
    )


def test_kde_with_kwins_scripting_follows_the_focus_through_kronii_s_kwin_script() -> None:
    facts = replace(_wayland("KDE Plasma (KWin)", "kde", KWIN_GLOBALS), kwin_scripting=True)
    focus = capability(facts, "sensor", "focus")
    assert focus.ok and "kronii's KWin script" in focus.detail
    refused = replace(facts, kwin_screenshot_problem="you have not authorised kronii's capture: run ...")
    frames = capability(refused, "capture", "frames")
    assert not frames.ok and frames.detail.endswith("you have not authorised kronii's capture: run ...")
    granted = capability(facts, "capture", "frames")
    assert granted.ok and "KWin's ScreenShot2, taken by kronii's interpreter copy" in granted.detail


def test_kwin_is_kde_though_it_offers_some_wlroots_protocols_and_sway_is_wlroots_with_kdes_idle() -> None:
    # KWin 5.27's globals include zwlr_layer_shell_v1 and zwlr_data_control_manager_v1 (seen); sway's
    # include org_kde_kwin_idle and org_kde_kwin_server_decoration_manager.
    kwin = KWIN_GLOBALS | {"zwlr_layer_shell_v1", "zwlr_data_control_manager_v1"}
    sway = SWAY_GLOBALS | {"org_kde_kwin_idle", "org_kde_kwin_server_decoration_manager"}
    assert _family(kwin) == "kde" and _family(sway) == "wlroots"


def test_a_wlroots_or_unknown_compositor_is_named_by_the_program_on_its_socket_before_any_variable(
    tmp_path: Path,
) -> None:
    stale = {"XDG_CURRENT_DESKTOP": "sway", "HYPRLAND_INSTANCE_SIGNATURE": "left over"}
    assert _display_name("wlroots", stale, "labwc") == "labwc"
    assert _display_name("other", {}, "niri") == "niri"
    assert _display_name("wlroots", stale, "") == "Hyprland"  # no program known: the variables
    assert _display_name("other", {}, "") == "an unknown compositor"
    # GNOME and KDE keep their family's name, whatever process answers
    assert _display_name("kde", {}, "kwin_wayland") == "KDE Plasma (KWin)"
    assert _display_name("gnome", {}, "gnome-shell") == "GNOME (mutter)"
    ipc = tmp_path / "sway-ipc.sock"
    ipc.touch()
    assert _display_name("wlroots", {"SWAYSOCK": str(ipc)}, "sway") == "sway"


def test_screen_copy_without_a_window_list_takes_no_frames_as_no_request_could_be_checked() -> None:
    # cage offers screen copy and idle but no window list (seen on cage 0.1.4)
    cage = _wayland(
        "cage", "wlroots", frozenset({"wl_seat", "org_kde_kwin_idle", "zwlr_screencopy_manager_v1"})
    )
    frames = capability(cage, "capture", "frames")
    assert not frames.ok
    assert frames.detail == (
        "Wayland (cage): cage offers no window list (zwlr_foreign_toplevel_manager_v1): the sensor cannot "
        "tell which window is focused, so capture cannot check that its frames show the window asked for "
        "and takes none"
    )
    river = capability(_wayland("river", "wlroots", SWAY_GLOBALS), "capture", "frames")
    assert river.ok and "the whole output: river tells no other program" in river.detail


def test_a_compositor_without_any_supported_protocol_says_what_each_agent_misses() -> None:
    facts = _wayland("weston", "weston", WESTON_GLOBALS)
    rows = {(row.agent, row.name): row for row in assess(facts)}
    assert not any(row.ok for row in rows.values())
    assert "weston offers no window list (zwlr_foreign_toplevel_manager_v1)" in rows["sensor", "focus"].detail
    assert "no idle notification" in rows["sensor", "idle"].detail
    assert "no screen copy" in rows["capture", "frames"].detail
    assert "no virtual keyboard" in rows["broker", "input"].detail


def test_no_session_gives_its_reason_for_every_capability() -> None:
    facts = SessionFacts("none", problem="no desktop session: neither WAYLAND_DISPLAY nor DISPLAY is set")
    assert {row.detail for row in assess(facts)} == {facts.problem}


@pytest.mark.parametrize(
    ("display", "runtime", "expected"),
    [
        ("wayland-1", "/run/user/1000", "/run/user/1000/wayland-1"),
        ("/tmp/w/wayland-0", None, "/tmp/w/wayland-0"),
    ],
)
def test_wayland_display_is_a_name_in_the_runtime_dir_or_a_path(
    display: str, runtime: str | None, expected: str
) -> None:
    assert socket_path(display, runtime) == Path(expected)


def test_without_a_runtime_dir_a_socket_name_finds_nothing() -> None:
    assert socket_path("wayland-0", None) is None
    assert socket_path(None, "/run/user/1000") is None


def test_wire_arguments_are_padded_to_words_and_read_back() -> None:
    body, fds = _encode("usia", [7, "app.id", -3, b"\x02\x00\x00\x00"])
    assert len(body) % 4 == 0 and fds == []
    assert body[4:8] == (7).to_bytes(4, "little")  # the string's length counts its NUL
    assert _decode("usia", body, []) == [7, "app.id", -3, b"\x02\x00\x00\x00"]


def test_a_signature_with_the_wrong_number_of_arguments_is_refused() -> None:
    with pytest.raises(ValueError, match="takes 2 arguments"):
        _encode("uu", [1])
