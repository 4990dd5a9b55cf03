"""What reached the screen after the person's first key, on a real broker process (Xvfb + openbox, its
x11vnc, real NATS, Redis and PostgreSQL). The person is a real VNC viewer from Debian (xtightvncviewer,
on an Xvfb of its own) attached to the broker's x11vnc; an agent the person granted types actions of
1, 10, 100, 1,000 and 10,000 characters (capped at InputAction's MAX_TEXT: the broker refuses longer)
from 1 sender or 40 at once, each sender going on until it is dropped; the person presses a key in the
viewer at a random moment (0-0.3 s) after the agent's first key reached the X server.

The X server's order is read by a listener connection of this process (XI2 raw key presses and
releases of every master, stamped as they are read; one connection's events come in the order the
server processed them). A marker key sent through the core XTEST device once every sender has its
answer closes each round: everything before it is in. Per configuration:

- agent key presses after the person's first key (the invariant: 0 at every size), and the agent's
  key releases after it (what it held when cut: allowed, counted apart);
- the person's key to the last agent event the X server took after it (0 when none): p50/p95/max,
  goal p95 < 5 ms;
- from the person's key pressed in the viewer (xdotool on the viewer's display, its start-up in it):
  to the revocation read off the broker's WatchControl stream (the decision; the stream's delivery in
  it), and to the person's key in the broker's X server (the broker replays a viewer's key itself once
  the agent's injector is quiet, so this is what the person waits to see their key);
- the broker's own histograms (kronii_broker_revocation_seconds: the person's event read to the
  table's decision; kronii_broker_revocation_at_screen_seconds and kronii_broker_agent_events_after_person:
  what its own watch saw reach the screen) as their change over the configuration's rounds.

Then the person's STOP from a terminal: the whole `kronii control stop` command (process start to exit,
through the broker's stop socket) with a lease held and idle, then while 40 actions of 1,000
characters type, goal < 100 ms. STOP_NOW
under a flood to the queue empty is bench/broker_stop.py's figure.

Finally agent input through the broker (a key over its HTTP API to the raw event from the broker's
own XTEST device) next to xdotool run directly (its start to its raw event): goal p95 <= 2x xdotool.

Usage: python bench/broker_revocation.py [--rounds 20] [--keys 200] [--stops 10]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import grpc
import httpx
from _common import machine, save, summary_ms
from _x_order import KEY_PRESS, KEY_RELEASE, OrderListener, XEvent, core_xtest_key, device_id
from kronii.agents.broker_client import BrokerClient
from kronii.broker.v1 import broker_pb2 as pb
from kronii.broker.v1 import broker_pb2_grpc as pb_grpc
from kronii.desktop.input_actions import MAX_TEXT
from kronii.stores.db import migrate_up

from tests.desktop import DesktopError, open_window, start_xvfb, wait_until
from tests.infra import create_database, start_test_infra
from tests.integration.broker.broker_support import Broker, start_broker
from tests.integration.broker.person_wins_support import AGENT_KEYBOARD, Viewer, start_viewer

SIZES = (1, 10, 100, 1_000, min(10_000, MAX_TEXT))
SENDERS = (1, 40)
PERSON_WITHIN_S = 0.3
MARKER_KEY = "F9"
_WAIT_S = 15.0


class Bench:
    """The running pieces one round needs."""

    def __init__(self, broker: Broker, viewer: Viewer, listener: OrderListener, window: int) -> None:
        self.broker, self.viewer, self.listener, self.window = broker, viewer, listener, window
        self.agent = broker.agent("bench-agent")
        self.agent_sources = frozenset({device_id(broker.display, AGENT_KEYBOARD)})
        self.changes: list[tuple[str, str, float]] = []
        self.rng = random.Random(30)
        self.typist: Typist

    def token(self) -> str:
        return str(self.agent._http.headers.get("authorization", "")).removeprefix("Bearer ")


def _watch(bench: Bench, stop: threading.Event) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{bench.broker.grpc_port}") as channel:
        stream = pb_grpc.BrokerStub(channel).WatchControl(pb.GetStateRequest(session_id="current"))
        try:
            for change in stream:
                bench.changes.append((change.cause, change.state.control_mode, time.monotonic()))
                if stop.is_set():
                    stream.cancel()
                    return
        except grpc.RpcError:
            return  # the broker stopped at the end of the run


def _keep_typing(url: str, token: str, client_id: str, text: str, sent: list[int]) -> None:
    client = BrokerClient(url, timeout=60)
    client.use_token(token, client_id)
    while client.type_text(text).injected:
        sent.append(1)
    sent.append(1)


def _typist(conn: Connection, url: str, token: str, client_id: str) -> None:
    """A process of its own typing for the agent (so that its 40 threads do not delay this process's
    reading of the X server): for each (text, senders) it gets, that many clients type `text` until
    each is dropped; it answers how many actions were sent."""
    while (order := conn.recv()) is not None:
        text, count = order
        sent: list[int] = []
        threads = [
            threading.Thread(target=_keep_typing, args=(url, token, client_id, text, sent))
            for _ in range(count)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        conn.send(len(sent))


class Typist:
    def __init__(self, bench: Bench) -> None:
        self._conn, child = multiprocessing.get_context("spawn").Pipe()
        self._process = multiprocessing.get_context("spawn").Process(
            target=_typist, args=(child, bench.broker.url, bench.token(), bench.agent.client_id), daemon=True
        )
        self._process.start()

    def start(self, size: int, count: int) -> None:
        self._conn.send((("ab" * size)[:size], count))

    def wait(self) -> int:
        if not self._conn.poll(60):
            raise TimeoutError("the agent's senders were not all answered within 60 s")
        return int(self._conn.recv())

    def close(self) -> None:
        self._conn.send(None)
        self._process.join(10)


def _after_person(events: list[XEvent], agent: frozenset[int]) -> dict[str, float]:
    """The round's figures from the X server's order (events up to the marker)."""
    first = next(i for i, event in enumerate(events) if event.kind == KEY_PRESS and event.source not in agent)
    person = events[first]
    after = [event for event in events[first + 1 :] if event.source in agent]
    return {
        "person_at": person.at,
        "presses_after": sum(event.kind == KEY_PRESS for event in after),
        "releases_after": sum(event.kind == KEY_RELEASE for event in after),
        # The X server's own times (whole milliseconds): the reader's delays are not in them.
        "to_last_agent_event": (after[-1].server_ms - person.server_ms) / 1000 if after else 0.0,
    }


def _round(bench: Bench, size: int, count: int) -> dict[str, float]:
    bench.broker.grant(bench.agent.client_id, seconds=120, window=bench.window)
    start, changes = bench.listener.mark(), len(bench.changes)
    bench.typist.start(size, count)
    bench.listener.wait_for(lambda event: event.source in bench.agent_sources, start, _WAIT_S)
    threading.Event().wait(bench.rng.uniform(0.0, PERSON_WITHIN_S))
    pressed = bench.viewer.press("x")
    bench.typist.wait()
    marker = core_xtest_key(bench.broker.display, MARKER_KEY)
    events = bench.listener.wait_for(
        lambda event: event.kind == KEY_PRESS and event.detail == marker, start, _WAIT_S
    )
    figures = _after_person(events, bench.agent_sources)
    figures["press_to_screen"] = figures["person_at"] - pressed

    def revocation() -> float | None:
        return next((at for _, mode, at in bench.changes[changes:] if mode != "AGENT"), None)

    try:
        wait_until(lambda: revocation() is not None, timeout_s=2.0, what="the revocation")
        figures["to_decision_on_stream"] = (revocation() or 0.0) - pressed
    except DesktopError:  # the lease outlived the person's key (a broken promise, counted)
        figures["to_decision_on_stream"] = float("nan")
        print(
            "lease not revoked after the person's key:", bench.broker.state(), bench.changes[-3:], flush=True
        )
    return figures


def _metrics(broker: Broker) -> dict[str, float]:
    wanted = (
        "kronii_broker_revocation_seconds_sum",
        "kronii_broker_revocation_seconds_count",
        "kronii_broker_revocation_at_screen_seconds_sum",
        "kronii_broker_revocation_at_screen_seconds_count",
        "kronii_broker_agent_events_after_person_total",
    )
    figures = dict.fromkeys(wanted, 0.0)
    for line in httpx.get(f"{broker.url}/metrics", timeout=10).text.splitlines():
        name, _, value = line.partition(" ")
        if name in figures:
            figures[name] = float(value)
    return figures


def _configuration(bench: Bench, size: int, count: int, rounds: int) -> dict[str, Any]:
    before = _metrics(bench.broker)
    results = [_round(bench, size, count) for _ in range(rounds)]
    after = _metrics(bench.broker)
    delta = {name: after[name] - before[name] for name in after}

    def mean_ms(kind: str) -> float | None:
        count_ = delta[f"kronii_broker_{kind}_count"]
        return round(delta[f"kronii_broker_{kind}_sum"] / count_ * 1000, 3) if count_ else None

    return {
        "rounds": rounds,
        "agent_presses_after_person": sum(int(r["presses_after"]) for r in results),
        "rounds_with_presses_after": sum(r["presses_after"] > 0 for r in results),
        "agent_releases_after_person": sum(int(r["releases_after"]) for r in results),
        "person_to_last_agent_event": summary_ms([r["to_last_agent_event"] for r in results]),
        "press_in_viewer_to_the_key_on_screen": summary_ms([r["press_to_screen"] for r in results]),
        "press_in_viewer_to_decision_on_stream": summary_ms(
            [
                r["to_decision_on_stream"]
                for r in results
                if r["to_decision_on_stream"] == r["to_decision_on_stream"]
            ]
        ),
        "leases_not_revoked": sum(r["to_decision_on_stream"] != r["to_decision_on_stream"] for r in results),
        "broker_decision_mean_ms": mean_ms("revocation_seconds"),
        "broker_decisions": int(delta["kronii_broker_revocation_seconds_count"]),
        "broker_at_screen_mean_ms": mean_ms("revocation_at_screen_seconds"),
        "broker_counted_events_after_person": int(delta["kronii_broker_agent_events_after_person_total"]),
    }


def _timed_stop(bench: Bench, flood: bool, failures: list[str]) -> float:
    command = [str(Path(sys.executable).with_name("kronii")), "control", "stop"]
    env = {key: value for key, value in bench.broker.env.items() if key != "KRONII_BROKER_URL"}
    bench.broker.grant(bench.agent.client_id, seconds=120, window=bench.window)
    if flood:
        start = bench.listener.mark()
        bench.typist.start(1_000, 40)
        bench.listener.wait_for(lambda event: event.source in bench.agent_sources, start, _WAIT_S)
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30, check=False)
    took = time.monotonic() - started
    if done.returncode != 0 or not done.stdout.startswith("STOP_NOW"):
        failures.append(f"exit {done.returncode}: {(done.stdout + done.stderr).strip()[:200]}")
    if flood:
        bench.typist.wait()
    return took


def _kronii_stop(bench: Bench, stops: int) -> dict[str, Any]:
    """The whole `kronii control stop` command (its process's start to its exit), the agent holding a
    lease and idle, then while 40 actions of 1,000 characters type (both cores busy)."""
    failures: list[str] = []
    idle = [_timed_stop(bench, False, failures) for _ in range(stops)]
    flooded = [_timed_stop(bench, True, failures) for _ in range(stops)]
    return {"idle": summary_ms(idle), "under_flood": summary_ms(flooded), "failures": failures}


def _keys_through_broker(bench: Bench, keys: int) -> list[float]:
    """An agent's key over the broker's HTTP API to the raw event from the broker's own XTEST device."""
    bench.broker.grant(bench.agent.client_id, seconds=300)
    latencies = []
    for _ in range(keys):
        start = bench.listener.mark()
        started = time.monotonic()
        if not bench.agent.key("shift").injected:
            raise RuntimeError("the broker dropped a key under a live lease")
        event = bench.listener.wait_for(lambda e: e.source in bench.agent_sources, start, _WAIT_S)[-1]
        latencies.append(event.at - started)
    return latencies


def _keys_by_xdotool(bench: Bench, keys: int) -> list[float]:
    """xdotool run directly, from its start to its raw event: what an agent pays without the broker."""
    env = {**os.environ, "DISPLAY": bench.broker.display}
    core = frozenset({device_id(bench.broker.display, "Virtual core XTEST keyboard")})
    latencies = []
    for _ in range(keys):
        start = bench.listener.mark()
        started = time.monotonic()
        subprocess.run(["xdotool", "key", "shift"], env=env, check=True)
        event = bench.listener.wait_for(lambda e: e.source in core, start, _WAIT_S)[-1]
        latencies.append(event.at - started)
    return latencies


def _measure(bench: Bench, rounds: int, keys: int, stops: int) -> dict[str, Any]:
    figures: dict[str, Any] = {"machine": machine(), "configurations": {}}
    for size in SIZES if rounds else ():
        for count in SENDERS:
            name = f"{size} chars x {count} sender{'s' if count > 1 else ''}"
            figures["configurations"][name] = _configuration(bench, size, count, rounds)
            print(name, figures["configurations"][name], flush=True)
    figures["stop_now_under_flood_to_queue_empty"] = "bench/broker_stop.py"
    figures["kronii_control_stop"] = _kronii_stop(bench, stops) if stops else None
    if keys:
        through, direct = _keys_through_broker(bench, keys), _keys_by_xdotool(bench, keys)
        figures["agent_key_over_http_to_raw_event"] = summary_ms(through)
        figures["xdotool_key_start_to_raw_event"] = summary_ms(direct)
        figures["p95_ratio_broker_to_xdotool"] = round(
            summary_ms(through)["p95_ms"] / summary_ms(direct)["p95_ms"], 3
        )
    return figures


def run(rounds: int, keys: int, stops: int) -> None:
    with start_test_infra() as infra, start_xvfb() as display, tempfile.TemporaryDirectory() as tmp:
        database = create_database(infra.database, "bench_broker")
        migrate_up(database)
        with (
            start_broker(infra, database, display, Path(tmp)) as broker,
            open_window(display, "bench target", "KroniiBench") as window,
            start_viewer(broker) as viewer,
        ):
            listener = OrderListener(display)
            bench = Bench(broker, viewer, listener, window.window_id)
            stop = threading.Event()
            threading.Thread(target=_watch, args=(bench, stop), daemon=True).start()
            bench.typist = Typist(bench)
            try:
                figures = _measure(bench, rounds, keys, stops)
            finally:
                stop.set()
                bench.typist.close()
                listener.close()
    save("broker_revocation", figures)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=20, help="rounds per size and number of senders")
    parser.add_argument("--keys", type=int, default=200, help="keys through the broker, then by xdotool")
    parser.add_argument("--stops", type=int, default=10, help="`kronii control stop` under a flood")
    args = parser.parse_args()
    print(
        f"broker_revocation: {args.rounds} rounds per configuration, {args.stops} stops, {args.keys} keys each way"
    )
    run(args.rounds, args.keys, args.stops)


if __name__ == "__main__":
    main()
