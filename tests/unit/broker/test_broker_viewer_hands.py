"""A viewer's input is typed by the broker itself, after the agent's (issue 30): x11vnc hands each
event over (-pipeinput); the broker closes the fence first, then waits for the agent's injector to be
quiet, then replays it on its own master. The parser reads x11vnc's documented line format."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kronii.broker.adapters.viewer_hands import ViewerHands
from kronii.broker.core.facts import UserInputSeen
from kronii.broker.core.viewer_input import ViewerKey, ViewerPointer, buttons_changed, parse_viewer_line


def test_x11vnc_pipeinput_lines_are_read_as_keys_and_pointer_events() -> None:
    assert parse_viewer_line("Keysym 1 1 124 bar KeyPress") == ViewerKey(124, True)
    assert parse_viewer_line("Keysym 1 0 92 backslash KeyRelease\n") == ViewerKey(92, False)
    assert parse_viewer_line("Pointer 2 30 40 1 ButtonPress-1") == ViewerPointer(30, 40, 1)


def test_comments_view_only_viewers_and_malformed_lines_are_not_input() -> None:
    for line in ("# Pointer events come in the form:", "Keysym -1 1 97 a KeyPress", "Pointer -3 1 1 0 None",
                 "Keysym 1 x 97 a", "Pointer 1 2", "", "PORT=5900"):  # fmt: skip
        assert parse_viewer_line(line) is None, line


def test_buttons_that_changed_between_two_masks_releases_first() -> None:
    assert buttons_changed(0b001, 0b100) == [(1, False), (3, True)]
    assert buttons_changed(0, 0) == []


class Hands:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def replay_key(self, keysym: int, down: bool) -> None:
        self.log.append(f"key {keysym} {down}")

    def replay_pointer(self, x: int, y: int, buttons: list[tuple[int, bool]]) -> None:
        self.log.append(f"pointer {x},{y} {buttons}")


def _hands(log: list[str], tmp_path: Path) -> ViewerHands:
    @contextlib.contextmanager
    def agent_quiet() -> Iterator[None]:
        log.append("agent quiet")
        yield

    def close_fence(cause: str) -> bool:
        log.append(f"fence closed ({cause})")
        return True

    def on_person(seen: UserInputSeen) -> None:
        log.append(f"person {seen.kind}")

    hands = ViewerHands(":0", tmp_path / "fifo", agent_quiet, close_fence, on_person)
    hands._hands = Hands(log)  # type: ignore[assignment]
    return hands


def test_a_viewer_key_closes_the_fence_then_waits_for_the_agent_then_is_replayed(tmp_path: Path) -> None:
    log: list[str] = []
    _hands(log, tmp_path).handle("Keysym 1 1 124 bar KeyPress\n")
    assert log == ["fence closed (user_input)", "person key", "agent quiet", "key 124 True"]


def test_a_viewer_click_replays_the_motion_and_the_buttons_that_changed(tmp_path: Path) -> None:
    log: list[str] = []
    hands = _hands(log, tmp_path)
    for line in (
        "Pointer 1 30 40 0 None",
        "Pointer 1 30 40 1 ButtonPress-1",
        "Pointer 1 30 40 0 ButtonRelease-1",
    ):
        hands.handle(line)
    replayed: list[Any] = [entry for entry in log if entry.startswith("pointer")]
    assert replayed == ["pointer 30,40 []", "pointer 30,40 [(1, True)]", "pointer 30,40 [(1, False)]"]
