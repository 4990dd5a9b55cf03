"""The unit an agent's action can be overtaken at is one key event (issue 30). The injector writes
its events in batches of at most BATCH_EVENTS, each batch under a server grab that begins with a round
trip and a look at the connection's queue for a person's raw event; each event is asked for by the
guard and written at once; a person's event in the queue, or a guard saying no, ends the action with
nothing more written (held keys are let go). A fake display records what was written, and in what
grab; a fake queue plays the X server processing the person's event at a chosen moment."""

from __future__ import annotations

from typing import Any

import pytest
from kronii.broker.adapters.x_injection import (
    BATCH_EVENTS,
    OwnQueue,
    Performer,
    Sender,
    begin_action,
    run_action,
)
from kronii.broker.ports import InjectionGuard
from kronii.desktop.input_actions import InputAction
from Xlib import X
from Xlib.ext import ge, xinput, xtest


class FakeDisplay:
    def __init__(self) -> None:
        self.queued: list[tuple[int, int]] = []
        self.written: list[tuple[int, int]] = []
        self.log: list[str] = []
        self.grabbed = False
        self.written_in_grab: list[bool] = []

    def flush(self) -> None:
        self.written_in_grab += [self.grabbed] * len(self.queued)
        self.written += self.queued
        self.queued.clear()

    def sync(self) -> None:
        self.flush()
        self.log.append("sync")

    def grab_server(self) -> None:
        self.flush()
        self.grabbed = True
        self.log.append("grab")

    def ungrab_server(self) -> None:
        self.flush()
        self.grabbed = False
        self.log.append("ungrab")


class FakeQueue:
    """The X server processes the person's key once ``person_after`` agent events were written."""

    watching = True

    def __init__(self, display: FakeDisplay, person_after: int | None = None) -> None:
        self._display = display
        self._person_after = person_after
        self.looks: list[int] = []

    def read(self) -> bool:
        self.looks.append(len(self._display.written))
        return self.take_foreign()

    def take_foreign(self) -> bool:
        return self._person_after is not None and len(self._display.written) >= self._person_after


class FakeKeymap:
    def known(self, keysym: int) -> bool:
        return True

    def find(self, keysym: int) -> tuple[int, bool]:
        return 38, False


@pytest.fixture
def display(monkeypatch: pytest.MonkeyPatch) -> FakeDisplay:
    fake = FakeDisplay()

    def fake_input(display: FakeDisplay, event_type: int, detail: int, **_where: Any) -> None:
        display.queued.append((event_type, detail))

    monkeypatch.setattr(xtest, "fake_input", fake_input)
    return fake


def _type(display: FakeDisplay, queue: FakeQueue, guard: InjectionGuard, text: str) -> bool:
    sender = Sender(display, guard, queue)  # type: ignore[arg-type]
    return run_action(InputAction(kind="type", text=text), Performer(display, FakeKeymap()), sender, display)  # type: ignore[arg-type]


def test_every_agent_event_is_written_in_a_grab_that_began_with_a_look_for_the_person(
    display: FakeDisplay,
) -> None:
    checks: list[int] = []

    def still_valid() -> bool:
        assert not display.queued  # every event before it is on the wire when the next is asked for
        checks.append(len(display.written))
        return True

    queue = FakeQueue(display)
    assert _type(display, queue, InjectionGuard(1, still_valid, lambda: None), "a" * 500)
    assert len(display.written) == 1000 and len(checks) == 1000
    assert all(display.written_in_grab)
    # A look at the queue after each grab's round trip, and a grab per BATCH_EVENTS events at most.
    assert display.log.count("grab") == display.log.count("ungrab") == len(queue.looks)
    assert max(b - a for a, b in zip(queue.looks, [*queue.looks[1:], 1000], strict=True)) <= BATCH_EVENTS
    assert all(display.log[i + 1] == "sync" for i, op in enumerate(display.log) if op == "grab")


def test_a_person_event_before_a_batch_ends_the_action_with_nothing_more_written(
    display: FakeDisplay,
) -> None:
    seen: list[bool] = []
    queue = FakeQueue(display, person_after=301)
    done = _type(display, queue, InjectionGuard(1, lambda: True, lambda: seen.append(True)), "a" * 500)
    presses = [event for event in display.written if event[0] == X.KeyPress]
    assert done is False and seen == [True]
    # The batch under way when the person's key came was already the server's (it was grabbed);
    # the next batch's look saw the key: nothing after it but the release of the key held down.
    assert len(display.written) - 1 <= 301 + BATCH_EVENTS
    assert len(presses) <= 151 + BATCH_EVENTS // 2
    assert display.written[-1][0] == X.KeyRelease and not display.grabbed


def test_a_stop_between_two_events_sends_nothing_more_of_the_action(display: FakeDisplay) -> None:
    allowed = 301  # the 151st key's press is the last event let through

    def still_valid() -> bool:
        return len(display.written) < allowed

    done = _type(display, FakeQueue(display), InjectionGuard(1, still_valid, lambda: None), "a" * 500)
    presses = [event for event in display.written if event[0] == X.KeyPress]
    assert done is False and not display.grabbed
    assert len(presses) == 151 and display.written[-1][0] == X.KeyRelease  # let go of the held key


class RawEvent:
    def __init__(self, source: int) -> None:
        self.type = ge.GenericEventCode
        self.evtype = xinput.RawKeyPress
        self.data = type("Data", (), {"sourceid": source})()


class EventDisplay(FakeDisplay):
    def __init__(self) -> None:
        super().__init__()
        self.arriving: list[RawEvent] = []

    def pending_events(self) -> int:
        return len(self.arriving)

    def next_event(self) -> RawEvent:
        return self.arriving.pop(0)


def test_a_person_key_the_idle_drain_read_between_two_actions_of_a_lease_stops_the_next() -> None:
    display = EventDisplay()
    queue = OwnQueue(display, lambda source: source == 7)
    seen: list[bool] = []
    guard = InjectionGuard(3, lambda: True, lambda: seen.append(True))
    assert begin_action(display, queue, guard, last_epoch=2)  # the lease's first action
    display.arriving += [RawEvent(7), RawEvent(12)]  # the agent's own key, then the person's
    queue.read()  # the drain thread, while no action ran
    assert not begin_action(display, queue, guard, last_epoch=3) and seen == [True]


def test_input_read_before_a_lease_s_first_action_is_not_held_against_it() -> None:
    display = EventDisplay()
    queue = OwnQueue(display, lambda source: source == 7)
    display.arriving.append(RawEvent(12))  # the person's Return that asked for the grant
    queue.read()
    guard = InjectionGuard(4, lambda: True, lambda: pytest.fail("not the person's input in this lease"))
    assert begin_action(display, queue, guard, last_epoch=3)
