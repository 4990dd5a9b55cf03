"""STOP_NOW under a flood, on a real broker process (Xvfb + openbox, real NATS, Redis and PostgreSQL):
an agent the person granted sends 40 concurrent actions of 1,000 characters each; once its keys are
reaching the X server, the person stops it through the broker's stop socket (what the plain `kronii
control stop` sends). For each round:

- stop answered: connect to the stop socket, STOP, to its answer ("stopped epoch N");
- to queue cleared: the same STOP to the moment the broker's loop applied STOP_NOW and cleared the
  queue (its journal row's time, whole milliseconds, on the same wall clock);
- to the last answer: the same STOP to the last of the 40 actions answered over HTTP (an upper bound:
  the answers' delivery is in it);
- agent events after the answer: the broker's own XTEST keyboard's raw key presses the X server
  delivered after a marker key this process sends through the core XTEST device the moment the answer
  comes (on an X connection opened beforehand: microseconds, not xdotool's start-up; the order of one
  X connection's events is the server's, so this is exact whatever this process's threads are doing);
  next to it, those this process merely read after the answer (its own reading lag under the flood,
  not a figure of the broker: the X server had them before the marker);
- the event loop's lag under the flood: GET /sessions/current (HTTP, served on the broker's loop) while
  the flood types, next to the same call idle.

Goals (issue 30): stop answered p95 < 100 ms, queue empty p95 < 20 ms (the drop itself), 0 agent events
after the answer. The whole `kronii control stop` command is timed from outside by farm-bench.
"""

from __future__ import annotations

import argparse
import socket
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from _common import machine, save, summary_ms
from broker_injection import RawKeyListener, _device_id
from kronii.agents.broker_client import BrokerClient
from kronii.runtime.rendezvous import broker_stop_socket_path
from kronii.stores.db import migrate_up
from Xlib import XK, X
from Xlib import display as xdisplay
from Xlib.ext import xtest

from tests.desktop import start_xvfb, wait_until
from tests.infra import create_database, start_test_infra
from tests.integration.broker.broker_support import Broker, start_broker

ACTIONS = 40
ACTION_SIZE = 1000


def _ask_stop(path: Path) -> tuple[str, float]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(10)
        client.connect(str(path))
        client.sendall(b"STOP\n")
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = client.recv(256)
            if not chunk:
                break
            answer += chunk
    return answer.decode().strip(), time.monotonic()


def _state_call_s(client: httpx.Client) -> float:
    started = time.monotonic()
    client.get("/sessions/current").raise_for_status()
    return time.monotonic() - started


def _cleared_at(broker: Broker) -> float:
    """The wall time of the journal's last STOP_NOW row: when the loop applied it and cleared the queue."""
    rows = [row for row in broker.journal() if row["event"] == "stop_now"]
    return datetime.fromisoformat(rows[-1]["ts"]).timestamp()


class Marker:
    """A key through the core XTEST device on a connection opened beforehand."""

    def __init__(self, display_name: str) -> None:
        self._display: Any = xdisplay.Display(display_name)
        self._keycode = self._display.keysym_to_keycode(XK.string_to_keysym("Shift_L"))

    def press(self) -> None:
        xtest.fake_input(self._display, X.KeyPress, self._keycode)
        xtest.fake_input(self._display, X.KeyRelease, self._keycode)
        self._display.sync()

    def close(self) -> None:
        self._display.close()


def _round(
    broker: Broker,
    stop_path: Path,
    agent: BrokerClient,
    listener: RawKeyListener,
    marker: Marker,
    devices: tuple[int, int],
) -> dict[str, Any]:
    own, person = devices
    broker.grant(agent.client_id, seconds=120)
    token = str(agent._http.headers.get("authorization", "")).removeprefix("Bearer ")
    answered: list[float] = []
    lock = threading.Lock()

    def send(index: int) -> None:
        client = BrokerClient(broker.url, timeout=60)
        client.use_token(token, agent.client_id)
        client.type_text(f"[{index:02d}]" + "c" * (ACTION_SIZE - 4))
        with lock:
            answered.append(time.monotonic())

    listener.clear()
    senders = [threading.Thread(target=send, args=(index,)) for index in range(ACTIONS)]
    for sender in senders:
        sender.start()
    typed: list[tuple[int, float]] = []
    wait_until(lambda: _drain(listener, typed) > 50, timeout_s=20, what="the flood typing")
    with httpx.Client(base_url=broker.url, timeout=10) as client:
        lag = [_state_call_s(client) for _ in range(5)]
    started, sent_wall = time.monotonic(), time.time()
    answer, answer_at = _ask_stop(stop_path)
    marker.press()  # the person's key, the moment the answer came
    for sender in senders:
        sender.join(60)
    time.sleep(0.3)
    _drain(listener, typed)
    sources = [source for source, _ in typed]
    cut = sources.index(person) if person in sources else len(sources)
    if not answer.startswith("stopped epoch"):
        raise RuntimeError(f"the stop socket answered {answer!r}")
    return {
        "answer_s": answer_at - started,
        "cleared_s": _cleared_at(broker) - sent_wall,
        "last_answer_s": max(answered) - started,
        "after_the_persons_key": sum(1 for source in sources[cut:] if source == own),
        "read_after_the_answer": sum(1 for source, at in typed if source == own and at > answer_at),
        "lag_s": lag,
    }


def _drain(listener: RawKeyListener, typed: list[tuple[int, float]]) -> int:
    while not listener.arrivals.empty():
        typed.append(listener.arrivals.get_nowait())
    return len(typed)


def run(rounds: int) -> None:
    with start_test_infra() as infra, start_xvfb() as display, tempfile.TemporaryDirectory() as tmp:
        database = create_database(infra.database, "bench_broker_stop")
        migrate_up(database)
        settings = {"KRONII_BROKER_INTERACTIVE": "true", "KRONII_BROKER_REMOTE_VIEW": "false"}
        with start_broker(infra, database, display, Path(tmp), settings=settings) as broker:
            stop_path = broker_stop_socket_path(Path(tmp) / "data", runtime_dir=str(Path(tmp) / "run"))
            agent = broker.agent("bench-agent")
            listener = RawKeyListener(display)
            marker = Marker(display)
            devices = (
                _device_id(display, "kronii-broker XTEST keyboard"),
                _device_id(display, "Virtual core XTEST keyboard"),
            )
            with httpx.Client(base_url=broker.url, timeout=10) as client:
                idle = [_state_call_s(client) for _ in range(20)]
            try:
                results = [_round(broker, stop_path, agent, listener, marker, devices) for _ in range(rounds)]
            finally:
                listener.close()
                marker.close()
    save(
        "broker_stop",
        {
            "machine": machine(),
            "rounds": rounds,
            "flood": f"{ACTIONS} concurrent actions of {ACTION_SIZE} characters",
            "stop_socket_answer": summary_ms([result["answer_s"] for result in results]),
            "stop_to_queue_cleared_on_the_loop": summary_ms([result["cleared_s"] for result in results]),
            "stop_to_last_action_answered_over_http": summary_ms(
                [result["last_answer_s"] for result in results]
            ),
            "agent_events_after_the_persons_key": [result["after_the_persons_key"] for result in results],
            "agent_events_this_process_read_after_the_answer": [
                result["read_after_the_answer"] for result in results
            ],
            "state_call_idle": summary_ms(idle),
            "state_call_under_flood": summary_ms([lag for result in results for lag in result["lag_s"]]),
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    print(f"broker_stop: {args.rounds} rounds of {ACTIONS} x {ACTION_SIZE} characters, then STOP")
    run(args.rounds)


if __name__ == "__main__":
    main()
