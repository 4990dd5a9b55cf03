"""The broker's stop socket (adapters/stop_socket.py) in process, on a real Unix socket: its one-line
protocol, who it lets in, its file's mode, and that a STOP closes the agents' input fence and answers
while the event loop is blocked (the test's own synchronous call holds the loop), the table and the
queue following once the loop runs."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kronii.broker.adapters.stop_socket import StopSocket, StopSocketError
from kronii.broker.core.machine import Happening, Policy
from kronii.broker.core.model import ControlMode
from kronii.broker.core.table import Event
from kronii.broker.metrics import BrokerMetrics
from kronii.broker.usecases.control_session import ControlSession
from kronii.broker.usecases.submit_input import InputLane
from kronii.broker.usecases.track_presence import Attachment
from kronii.desktop.input_actions import InputAction
from prometheus_client import CollectorRegistry


def ask(path: Path, line: bytes, timeout_s: float = 5.0) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(timeout_s)
        client.connect(str(path))
        try:
            client.sendall(line)
        except BrokenPipeError:
            pass  # refused before it read: its answer is still there to read
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = client.recv(256)
            if not chunk:
                break
            answer += chunk
    return answer.decode()


class Calls:
    def __init__(self) -> None:
        self.stops: list[str] = []
        self.handed: list[str] = []

    def stop(self) -> int:
        self.stops.append(threading.current_thread().name)
        return 7

    def hand_over(self) -> None:
        self.handed.append(threading.current_thread().name)


@pytest.fixture
def door(tmp_path: Path) -> Iterator[Callable[..., tuple[StopSocket, Calls]]]:
    opened: list[StopSocket] = []

    def open_door(uid: int | None = None) -> tuple[StopSocket, Calls]:
        calls = Calls()
        stop_socket = StopSocket(
            tmp_path / "run" / "broker-stop.sock", stop=calls.stop, hand_over=calls.hand_over, uid=uid
        )
        stop_socket.start()
        opened.append(stop_socket)
        return stop_socket, calls

    yield open_door
    for stop_socket in opened:
        stop_socket.stop()


def test_a_stop_line_closes_the_fence_in_the_sockets_thread_and_answers_the_epoch(door: Any) -> None:
    stop_socket, calls = door()
    assert ask(stop_socket.path, b"STOP\n") == "stopped epoch 7\n"
    assert calls.stops == ["broker-stop-client"] and calls.handed == ["broker-stop-client"]
    assert ask(stop_socket.path, b"STOP\r\n") == "stopped epoch 7\n"
    assert stop_socket.stops == 2


def test_a_bad_line_gets_an_error_line_and_stops_nothing(door: Any) -> None:
    stop_socket, calls = door()
    assert ask(stop_socket.path, b"HALT\n") == "error: unknown request 'HALT': the only request is STOP\n"
    assert ask(stop_socket.path, b"S" * 100 + b"\n").startswith("error: send one line, STOP")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:  # closes before its newline
        client.connect(str(stop_socket.path))
        client.sendall(b"STOP")
        client.shutdown(socket.SHUT_WR)
        assert client.recv(256).startswith(b"error: send one line, STOP")
    assert calls.stops == [] and calls.handed == [] and stop_socket.stops == 0


def test_a_peer_of_another_uid_is_refused(door: Any) -> None:
    # The test runs as one user: a door that admits only another uid sees this process as a stranger.
    stop_socket, calls = door(uid=os.getuid() + 1)
    assert ask(stop_socket.path, b"STOP\n") == "error: refused: only the desktop user may stop agents here\n"
    assert calls.stops == [] and stop_socket.refused == 1


def test_the_socket_is_0600_in_a_0700_directory_and_goes_when_stopped(door: Any) -> None:
    stop_socket, _ = door()
    assert stat.S_IMODE(os.stat(stop_socket.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(stop_socket.path.parent).st_mode) == 0o700
    stop_socket.stop()
    assert not stop_socket.path.exists()


def test_a_live_stop_socket_is_not_taken_over_and_a_stale_one_is_replaced(door: Any, tmp_path: Path) -> None:
    first, _ = door()
    second = StopSocket(first.path, stop=lambda: 0, hand_over=lambda: None)
    with pytest.raises(StopSocketError, match="already listening"):
        second.start()
    first.stop()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(first.path))  # a socket file nobody listens on, as a killed broker leaves
    stale.close()
    again, _ = door()
    assert ask(again.path, b"STOP\n") == "stopped epoch 7\n"


class Hands:
    """Types one character per event, asking still_valid before each, as the X injector does."""

    def __init__(self) -> None:
        self.sent = 0
        self.started = threading.Event()

    def inject(self, action: InputAction, window: int, guard: Any) -> bool:
        still_valid = getattr(guard, "still_valid", guard)
        for _ in action.text:
            if not still_valid():
                return False
            self.sent += 1
            self.started.set()
            time.sleep(0.0005)
        return True


def _desk() -> tuple[ControlSession, BrokerMetrics, list[dict[str, Any]]]:
    async def record(**row: Any) -> None:
        pass

    class Quiet:
        async def publish(self, *args: Any) -> None:
            pass

        def write(self, record: dict[str, Any]) -> None:
            journal.append(record)

    journal: list[dict[str, Any]] = []
    metrics = BrokerMetrics(CollectorRegistry())
    desk = ControlSession(
        session_id="s1",
        policy=Policy(hold_ms=10_000),
        metrics=metrics,
        publisher=Quiet(),
        journal=Quiet(),
        audit=record,
        interactive_reason="flag",
    )
    return desk, metrics, journal


async def test_a_stop_answers_while_the_loop_is_blocked_and_nothing_is_typed_after_it(tmp_path: Path) -> None:
    desk, metrics, journal = _desk()
    hands = Hands()
    lane = InputLane(desk, hands, metrics, size=64)
    lane.start()
    attachment = Attachment(desk, metrics, flag=True, devices_make_interactive=True)
    loop = asyncio.get_running_loop()

    def stop() -> int:
        desk.fence.close("stop_now")
        return desk.fence.closed_through

    def hand_over() -> None:
        loop.call_soon_threadsafe(attachment.stop_now, "person:stop-socket")

    stop_socket = StopSocket(tmp_path / "broker-stop.sock", stop=stop, hand_over=hand_over)
    stop_socket.start()
    try:
        desk.handle(Happening(Event.GRANT, agent="a", lease_ms=60_000), actor="person")
        epoch = desk.state.epoch
        actions = [
            asyncio.create_task(lane.submit("a", InputAction("type", text="x" * 1000))) for _ in range(40)
        ]
        await asyncio.to_thread(hands.started.wait, 5)
        # A synchronous call from the loop's own thread: the loop runs nothing until it returns.
        started = time.monotonic()
        answer = ask(stop_socket.path, b"STOP\n")
        took = time.monotonic() - started
        assert answer == f"stopped epoch {epoch}\n"
        assert took < 0.3, f"the stop socket took {took * 1000:.0f} ms"
        assert not desk.fence.open_for(epoch)
        typed = hands.sent
        results = await asyncio.gather(*actions)
        assert hands.sent <= typed + 1, "agent characters were typed after the stop was answered"
        assert typed < 1000
        assert [result.injected for result in results] == [False] * 40
        assert {result.dropped for result in results} == {"stopped"}
        assert desk.state.control_mode is ControlMode.USER and desk.state.user_intent.value == "STOP_NOW"
        rows = [row for row in journal if row["event"] == "stop_now"]
        assert rows and rows[-1]["actor"] == "person:stop-socket"
    finally:
        stop_socket.stop()
        await lane.stop()


async def test_a_stop_clears_the_queue_while_the_audit_and_nats_hang(tmp_path: Path) -> None:
    """The database and NATS stuck: the stop still answers, the loop still clears the queue and
    answers every queued action; the audit row and the event come after, whenever they can."""
    stuck = asyncio.Event()
    attempts: list[str] = []

    async def audit(**row: Any) -> None:
        attempts.append(str(row.get("action")))
        await stuck.wait()

    class StuckBus:
        async def publish(self, *args: Any) -> None:
            await stuck.wait()

        def write(self, record: dict[str, Any]) -> None:
            pass

    metrics = BrokerMetrics(CollectorRegistry())
    desk = ControlSession(
        session_id="s1",
        policy=Policy(hold_ms=10_000),
        metrics=metrics,
        publisher=StuckBus(),
        journal=StuckBus(),
        audit=audit,
        interactive_reason="flag",
    )
    hands = Hands()
    lane = InputLane(desk, hands, metrics, size=64)
    lane.start()
    attachment = Attachment(desk, metrics, flag=True, devices_make_interactive=True)
    loop = asyncio.get_running_loop()

    def stop() -> int:
        desk.fence.close("stop_now")
        return desk.fence.closed_through

    def hand_over() -> None:
        loop.call_soon_threadsafe(attachment.stop_now, "person:stop-socket")

    stop_socket = StopSocket(tmp_path / "broker-stop.sock", stop=stop, hand_over=hand_over)
    stop_socket.start()
    try:
        desk.handle(Happening(Event.GRANT, agent="a", lease_ms=60_000), actor="person")
        actions = [
            asyncio.create_task(lane.submit("a", InputAction("type", text="x" * 1000))) for _ in range(40)
        ]
        await asyncio.to_thread(hands.started.wait, 5)
        answer = await asyncio.to_thread(ask, stop_socket.path, b"STOP\n")
        assert answer.startswith("stopped epoch ")
        results = await asyncio.wait_for(asyncio.gather(*actions), timeout=5)
        assert {result.dropped for result in results} == {"stopped"}
        assert "broker.stop" in attempts and not stuck.is_set()
    finally:
        stuck.set()
        stop_socket.stop()
        await lane.stop()
