"""The unit an agent's action can be overtaken at is one key event (issue 30): the injector writes
each XTEST event to the X server as it is checked, with a round trip (XSync) at least every
IN_FLIGHT_EVENTS events, and a stop between two events sends nothing more of the action (held keys
are let go). A fake display records what was written when."""

from __future__ import annotations

from typing import Any

import pytest
from kronii.broker.adapters.x_injection import IN_FLIGHT_EVENTS, Performer, Sender, run_action
from kronii.desktop.input_actions import InputAction
from Xlib import X
from Xlib.ext import xtest


class FakeDisplay:
    def __init__(self) -> None:
        self.queued: list[tuple[int, int]] = []
        self.written: list[tuple[int, int]] = []
        self.syncs: list[int] = []

    def flush(self) -> None:
        self.written += self.queued
        self.queued.clear()

    def sync(self) -> None:
        self.flush()
        self.syncs.append(len(self.written))


class FakeKeymap:
    def find(self, keysym: int) -> tuple[int, bool]:
        return 38, False


@pytest.fixture
def display(monkeypatch: pytest.MonkeyPatch) -> FakeDisplay:
    fake = FakeDisplay()

    def fake_input(display: FakeDisplay, event_type: int, detail: int, **_where: Any) -> None:
        display.queued.append((event_type, detail))

    monkeypatch.setattr(xtest, "fake_input", fake_input)
    return fake


def test_each_checked_event_is_written_at_once_and_a_round_trip_bounds_what_is_in_flight(
    display: FakeDisplay,
) -> None:
    checks: list[int] = []

    def still_valid() -> bool:
        # Every event before it is on the wire when the next one is asked for.
        assert not display.queued
        checks.append(len(display.written))
        return True

    action = InputAction(kind="type", text="a" * 500)
    assert run_action(action, Performer(display, FakeKeymap()), Sender(display, still_valid), display)  # type: ignore[arg-type]
    assert len(display.written) == 1000 and len(checks) == 1000
    gaps = [b - a for a, b in zip([0, *display.syncs], display.syncs, strict=False)]
    assert gaps and max(gaps) <= IN_FLIGHT_EVENTS


def test_a_stop_between_two_events_sends_nothing_more_of_the_action(display: FakeDisplay) -> None:
    allowed = 301  # the 151st key's press is the last event let through

    def still_valid() -> bool:
        return len(display.written) < allowed

    action = InputAction(kind="type", text="a" * 500)
    done = run_action(action, Performer(display, FakeKeymap()), Sender(display, still_valid), display)  # type: ignore[arg-type]
    presses = [event for event in display.written if event[0] == X.KeyPress]
    assert done is False
    assert len(presses) == 151 and display.written[-1][0] == X.KeyRelease  # let go of the held key
