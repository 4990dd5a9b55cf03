"""Naming a capture's target as a person would (core/targets.py): a window by id in any common form
or by a piece of its title, a pid, an app; each picks the policy that fits, an explicit one wins."""

from __future__ import annotations

import pytest
from kronii.capture.core.targets import TargetError, WindowInfo, parse_window_id, resolve_target

WINDOWS = [
    WindowInfo(0x1A00007, 4242, "XTerm", "vim notes.txt"),
    WindowInfo(0x1A0000F, 4242, "XTerm", "htop"),
    WindowInfo(0x2C00003, 5151, "firefox", "Pull request #12 - Mozilla Firefox"),
    WindowInfo(0x3000001, 6161, "XTerm", "bash"),
]


@pytest.mark.parametrize(("text", "expected"), [("0x1a00007", 0x1A00007), ("0X1A00007", 0x1A00007),
                                                 ("27262983", 27262983), (" 42 ", 42), ("zzz", None),
                                                 ("0xzz", None), ("Pull", None)])  # fmt: skip
def test_window_ids_parse_in_hex_and_decimal_and_anything_else_is_a_title(
    text: str, expected: int | None
) -> None:
    assert parse_window_id(text) == expected


def test_a_window_named_by_hex_or_decimal_id_is_strict_with_its_process() -> None:
    for text in ("0x2c00003", str(0x2C00003)):
        target = resolve_target(WINDOWS, window=text)
        assert (target.pid, target.window_id, target.app, target.bypass) == (
            5151,
            0x2C00003,
            "firefox",
            "strict",
        )


def test_a_window_named_by_a_piece_of_its_title() -> None:
    target = resolve_target(WINDOWS, window="pull REQUEST")
    assert target.window_id == 0x2C00003 and target.bypass == "strict"


def test_a_title_that_matches_several_windows_lists_them() -> None:
    with pytest.raises(TargetError, match=r"3 windows' titles contain 't'.*name one by its id"):
        resolve_target(WINDOWS, window="t")


def test_an_unknown_window_says_where_to_look() -> None:
    with pytest.raises(TargetError, match=r"no window 0x99 on this display; `kronii capture targets`"):
        resolve_target(WINDOWS, window="0x99")
    with pytest.raises(TargetError, match="no window's title contains 'zzz'"):
        resolve_target(WINDOWS, window="zzz")


def test_a_pid_alone_is_any_window_of_that_process() -> None:
    target = resolve_target(WINDOWS, pid=4242)
    assert (target.pid, target.bypass, target.app) == (4242, "window_relaxed", "XTerm")


def test_a_pid_with_strict_and_several_windows_asks_for_the_window() -> None:
    with pytest.raises(TargetError, match="process 4242 has 2 windows"):
        resolve_target(WINDOWS, pid=4242, bypass="strict")


def test_an_app_with_one_process_is_app_relaxed_and_with_several_asks_which() -> None:
    target = resolve_target(WINDOWS, app="FIREFOX")
    assert (target.pid, target.app, target.bypass) == (5151, "firefox", "app_relaxed")
    with pytest.raises(TargetError, match=r"2 processes of 'xterm' have windows"):
        resolve_target(WINDOWS, app="xterm")
    with pytest.raises(
        TargetError, match=r"no window of an app named 'slack'; the display shows: XTerm, firefox"
    ):
        resolve_target(WINDOWS, app="slack")


def test_a_window_of_another_pid_than_named_is_refused() -> None:
    with pytest.raises(TargetError, match="belongs to pid 5151, not 4242"):
        resolve_target(WINDOWS, window="0x2c00003", pid=4242)


def test_an_explicit_bypass_wins() -> None:
    assert resolve_target(WINDOWS, window="htop", bypass="window_relaxed").bypass == "window_relaxed"


ANONYMOUS = [WindowInfo(0x4000001, 0, "Zenity", "question"), WindowInfo(0x4000002, 0, "Zenity", "info")]


def test_a_window_that_does_not_say_its_process_needs_the_pid_named() -> None:
    with pytest.raises(
        TargetError, match=r"window 0x4000001 does not say which process it belongs to; add --pid"
    ):
        resolve_target(ANONYMOUS, window="0x4000001")
    target = resolve_target(ANONYMOUS, window="0x4000001", pid=7070)
    assert (target.pid, target.window_id, target.app, target.bypass) == (7070, 0x4000001, "Zenity", "strict")


def test_a_named_app_replaces_the_windows_own_for_a_window_or_a_pid() -> None:
    assert resolve_target(WINDOWS, window="htop", app="Terminal").app == "Terminal"
    assert resolve_target(WINDOWS, pid=5151, app="browser").app == "browser"


def test_a_pid_without_a_window_says_where_to_look() -> None:
    with pytest.raises(
        TargetError, match=r"process 9999 has no window on this display; `kronii capture targets`"
    ):
        resolve_target(WINDOWS, pid=9999)


def test_a_pid_with_strict_and_one_window_is_that_window() -> None:
    target = resolve_target(WINDOWS, pid=5151, bypass="strict")
    assert (target.window_id, target.bypass, target.why) == (
        0x2C00003,
        "strict",
        "any window of pid 5151 (firefox)",
    )


def test_an_app_whose_windows_do_not_say_their_process_asks_for_window_and_pid() -> None:
    with pytest.raises(TargetError, match=r"the windows of 'zenity' do not say their process"):
        resolve_target(ANONYMOUS, app="zenity")


def test_an_app_on_an_empty_display_says_none_is_shown() -> None:
    with pytest.raises(TargetError, match=r"the display shows: none"):
        resolve_target([], app="slack")


def test_naming_no_target_says_how_to_name_one() -> None:
    with pytest.raises(TargetError, match=r"name a target with --window, --pid or --app"):
        resolve_target(WINDOWS)
