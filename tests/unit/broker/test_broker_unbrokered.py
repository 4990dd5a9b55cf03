"""Automation that went around the broker (input on the core XTEST device: xdotool and the like), in
process: it takes an agent's lease back, is journaled and audited as unbrokered input naming the
program where it was found, shown to the person, and never recorded as the person (no hold). And the
choice of the likely sender among the X server's clients."""

from __future__ import annotations

import os
import subprocess
from types import SimpleNamespace
from typing import Any

import pytest
from kronii.broker.adapters.x_clients import RECENT_S, SenderFinder, process, senders_among
from kronii.broker.adapters.x_watch import RawInputWatcher
from kronii.broker.core.facts import InputSender, UnbrokeredInput, UserInputSeen
from kronii.broker.core.machine import Happening, Policy
from kronii.broker.core.model import ControlMode, ControlState, DropReason
from kronii.broker.core.table import Event
from kronii.broker.metrics import BrokerMetrics
from kronii.broker.usecases.control_session import ControlSession
from kronii.broker.usecases.track_presence import Attachment
from prometheus_client import CollectorRegistry

XDOTOOL = InputSender("xdotool", 4242)
TYPED = UserInputSeen("key", 6, "Virtual core XTEST keyboard", 0.0)


class Effects:
    def __init__(self) -> None:
        self.journal: list[dict[str, Any]] = []
        self.audit: list[dict[str, Any]] = []
        self.notices: list[str] = []
        self.cleared: list[DropReason] = []

    async def publish(self, state: ControlState, cause: str, signal: str) -> None:
        pass

    def write(self, record: dict[str, Any]) -> None:
        self.journal.append(record)

    async def record(self, **row: Any) -> None:
        self.audit.append(row)

    async def show_lease(self, state: ControlState) -> None:
        self.notices.append(f"lease {state.holder}")

    async def show_notice(self, title: str, sentence: str) -> None:
        self.notices.append(sentence)

    async def close(self) -> None:
        self.notices.append("close")


class Clock:
    ms = 1_000_000

    def wall(self) -> float:
        return self.ms / 1000

    def monotonic(self) -> float:
        return self.ms / 1000

    def wall_ms(self) -> int:
        return self.ms

    def monotonic_ms(self) -> int:
        return self.ms


@pytest.fixture
def metrics() -> BrokerMetrics:
    return BrokerMetrics(CollectorRegistry())


def _desk(effects: Effects, metrics: BrokerMetrics) -> tuple[ControlSession, Attachment]:
    desk = ControlSession(
        session_id="s1",
        policy=Policy(hold_ms=10_000),
        metrics=metrics,
        publisher=effects,
        journal=effects,
        audit=effects.record,
        notifier=effects,
        clock=Clock(),
        interactive_reason="flag",
    )
    desk.on_clear(effects.cleared.append)
    return desk, Attachment(desk, metrics, flag=True, devices_make_interactive=True)


async def test_xdotool_typing_while_an_agent_holds_a_lease_takes_it_back_as_unbrokered_input_not_the_person(
    metrics: BrokerMetrics,
) -> None:
    effects = Effects()
    desk, attachment = _desk(effects, metrics)
    desk.handle(Happening(Event.GRANT, agent="agent-x", lease_ms=30_000), actor="person:uid:1000")

    attachment.unbrokered_input(UnbrokeredInput(TYPED, (XDOTOOL,)))
    await desk.settle()

    state = desk.state
    assert state.control_mode is ControlMode.USER and state.holder == ""
    assert state.user_holds_until_ms is None, "unbrokered input is not the person: no hold"
    assert effects.cleared[-1] is DropReason.STOPPED
    last = effects.journal[-1]
    assert last["event"] == "unbrokered_input" and last["row"] == "B1"
    assert last["actor"] == "unbrokered:xdotool (pid 4242)" and last["signal"] == "unbrokered_input"
    assert not any(row["actor"] == "person" for row in effects.journal)
    audited = [row for row in effects.audit if row["action"] == "broker.unbrokered_input"]
    assert len(audited) == 1 and audited[0]["actor"] == "unbrokered:xdotool (pid 4242)"
    assert audited[0]["agent"] == "agent-x" and audited[0]["outcome"] == "overridden_unbrokered"
    assert not [row for row in effects.audit if row["action"] == "broker.override"]
    assert effects.notices[-1] == (
        "xdotool (pid 4242) typed on the desktop around the broker while agent agent-x held control:"
        " control taken back."
    )
    assert metrics.taken_back.labels("unbrokered_input")._value.get() == 1
    assert metrics.taken_back.labels("user_input_override")._value.get() == 0


async def test_unbrokered_input_with_no_sender_found_is_recorded_as_unbrokered_and_said_so(
    metrics: BrokerMetrics,
) -> None:
    effects = Effects()
    desk, attachment = _desk(effects, metrics)
    desk.handle(Happening(Event.GRANT, agent="agent-x", lease_ms=30_000), actor="person:uid:1000")

    attachment.unbrokered_input(
        UnbrokeredInput(UserInputSeen("button", 7, "Virtual core XTEST pointer", 0.0))
    )
    await desk.settle()

    assert effects.journal[-1]["actor"] == "unbrokered"
    assert effects.notices[-1].startswith("a program (not found) clicked on the desktop around the broker")


async def test_unbrokered_input_while_no_agent_holds_control_changes_nothing_and_tells_nobody(
    metrics: BrokerMetrics,
) -> None:
    effects = Effects()
    desk, attachment = _desk(effects, metrics)
    before = desk.state

    attachment.unbrokered_input(UnbrokeredInput(TYPED, (XDOTOOL,)))
    await desk.settle()

    assert desk.state == before
    assert effects.audit == [] and effects.notices == [] and effects.journal == []


def test_the_likely_sender_is_a_new_client_not_the_broker_nor_x11vnc_nor_a_long_standing_one() -> None:
    now = 100.0
    # pid -> (program, process start time in ticks)
    processes = {
        1: ("openbox", 10),
        2: ("x11vnc", 20),
        3: ("python3", 30),
        4: ("xdotool", 90),
        5: ("xterm", 80),
    }
    clients = {0x200000: 1, 0x400000: 2, 0x600000: 3, 0x800000: 4, 0xA00000: 5, 0xC00000: 5}
    first_seen = {0x200000: now - 60, 0x400000: now - 1, 0x600000: now - 1}

    found = senders_among(clients, first_seen, now, own_pid=3, describe=processes.get)

    # openbox has been there a minute; x11vnc brings the person's viewers; pid 3 is the broker;
    # neither xdotool nor the xterm was there at the last snapshot: the process started last comes
    # first; the xterm's second connection is one sender.
    assert found == (InputSender("xdotool", 4), InputSender("xterm", 5))


def test_a_client_seen_at_the_last_snapshot_comes_after_one_never_seen() -> None:
    processes = {7: ("xterm", 500), 8: ("xdotool", 100)}
    found = senders_among(
        {0x200000: 7, 0x400000: 8}, {0x200000: 99.0}, 100.0, own_pid=1, describe=processes.get
    )
    assert [sender.program for sender in found] == ["xdotool", "xterm"]


def test_a_client_older_than_the_recent_window_or_gone_is_not_named() -> None:
    processes = {9: ("pyautogui", 1)}
    clients = {0x200000: 9, 0x400000: 10}
    found = senders_among(clients, {0x200000: 0.0}, RECENT_S + 0.1, own_pid=1, describe=processes.get)
    assert found == ()


def test_a_process_name_and_start_time_come_from_proc() -> None:
    described = process(os.getpid())
    assert described is not None and described[0] and described[1] > 0
    assert process(2**22 + 1) is None


class Fence:
    """close_fence as the watcher calls it: True once per lease (the call that closed it)."""

    def __init__(self) -> None:
        self.open = True

    def close(self, cause: str) -> bool:
        was, self.open = self.open, False
        return was


def _watcher(fence: Fence, handed: list[UserInputSeen]) -> RawInputWatcher:
    return RawInputWatcher(
        ":0", lambda seen: None, lambda: None, close_fence=fence.close, on_unbrokered_input=handed.append
    )


def _at(at: float) -> UserInputSeen:
    return UserInputSeen("key", 6, "Virtual core XTEST keyboard", at)


def test_a_flood_of_unbrokered_input_is_handed_over_once_per_debounce_interval() -> None:
    fence, handed = Fence(), list[UserInputSeen]()
    watcher = _watcher(fence, handed)
    for index in range(100):
        watcher._unbrokered(_at(10.0 + index * 0.001))  # 100 keys in 0.1 s, the debounce is 50 ms
    assert len(handed) == 2 and handed[0].at == 10.0


def test_unbrokered_input_under_a_new_lease_is_handed_over_though_the_injector_closed_the_fence_first() -> (
    None
):
    fence, handed = Fence(), list[UserInputSeen]()
    watcher = _watcher(fence, handed)
    watcher._unbrokered(_at(10.0))  # lease 1: it closes the fence
    fence.open = False  # lease 2 granted, then the injector saw the same program's key first
    watcher._unbrokered(_at(10.2))
    assert [seen.at for seen in handed] == [10.0, 10.2]


class FakeX:
    def __init__(self, clients: dict[int, int]) -> None:
        self.clients = clients
        self.asked = 0

    def res_query_client_ids(self, specs: Any) -> Any:
        self.asked += 1
        ids = [
            SimpleNamespace(spec=SimpleNamespace(client=base), value=[pid])
            for base, pid in self.clients.items()
        ]
        return SimpleNamespace(ids=ids)


def test_the_finder_looks_at_most_once_a_second_while_what_it_found_still_runs() -> None:
    clock = [100.0]
    finder = SenderFinder(":0", lambda found: None, monotonic=lambda: clock[0])
    x = FakeX({0x200000: os.getpid(), 0x400000: os.getppid()})
    finder._display = x
    first = finder._senders()
    clock[0] += 0.5
    again = finder._senders()
    clock[0] += 1.0
    finder._senders()
    assert first == again and first and first[0].pid == os.getppid()
    assert x.asked == 2


def test_the_finder_looks_again_at_once_when_the_program_it_named_has_gone() -> None:
    clock = [100.0]
    finder = SenderFinder(":0", lambda found: None, monotonic=lambda: clock[0])
    gone = subprocess.Popen(["true"])
    gone.wait()
    finder._last_found, finder._last_look = (InputSender("xdotool", gone.pid),), clock[0]
    x = FakeX({0x400000: os.getppid()})
    finder._display = x
    assert finder._senders()[0].pid == os.getppid() and x.asked == 1
