"""Agent key injection latency through the broker's own master device, next to xdotool, on Xvfb + openbox.

- agent: XMasterInjector.inject(key "a") into an xterm, from the call to the RawKeyPress (with the
  broker's XTEST keyboard as its source) arriving at a separate listening connection;
- xdotool: `xdotool key a` run as a subprocess, from its start to its RawKeyPress arriving there (what
  an agent driving the desktop with xdotool pays);
- watcher: for the same xdotool keys, RawInputWatcher's on_user_input call relative to the listener reading
  the raw event (the broker's own delay in learning a person touched the desktop; goal < 20 ms).

Prints p50/p95/max of each and the ratio of the agent's p95 to xdotool's (goal <= 2).

Usage: python bench/broker_injection.py [--keys 200]
"""

from __future__ import annotations

import argparse
import os
import queue
import select
import subprocess
import threading
import time
from typing import Any

from _common import machine, save, summary_ms
from kronii.broker.adapters import x_protocol
from kronii.broker.adapters.x_master import XMasterInjector
from kronii.broker.adapters.x_watch import RawInputWatcher, UserInputSeen
from kronii.broker.ports import InjectionGuard
from kronii.desktop.input_actions import InputAction
from Xlib import display as xdisplay
from Xlib.ext import ge, xinput

from tests.desktop import open_window, start_xvfb

_WAIT_S = 5.0


class RawKeyListener:
    """A connection of its own that stamps every RawKeyPress with time.monotonic() as it is read."""

    def __init__(self, display_name: str) -> None:
        self.arrivals: queue.Queue[tuple[int, float]] = queue.Queue()
        self._display: Any = xdisplay.Display(display_name)
        x_protocol.query_version(self._display)
        x_protocol.register_raw_events(self._display)
        root = self._display.screen().root
        root.xinput_select_events([(xinput.AllMasterDevices, xinput.RawKeyPressMask)])
        self._display.sync()
        self._wake_read, self._wake_write = os.pipe()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            while self._display.pending_events():
                event = self._display.next_event()
                if event.type == ge.GenericEventCode and event.evtype == xinput.RawKeyPress:
                    self.arrivals.put((event.data.sourceid, time.monotonic()))
            readable, _, _ = select.select([self._display.fileno(), self._wake_read], [], [])
            if self._wake_read in readable:
                return

    def clear(self) -> None:
        while not self.arrivals.empty():
            self.arrivals.get_nowait()

    def next_from(self, sources: frozenset[int]) -> float:
        while True:
            source, arrived = self.arrivals.get(timeout=_WAIT_S)
            if source in sources:
                return arrived

    def close(self) -> None:
        os.write(self._wake_write, b"x")
        self._thread.join(2)
        self._display.close()


def _device_id(display_name: str, name: str) -> int:
    connection = xdisplay.Display(display_name)
    try:
        devices = connection.xinput_query_device(xinput.AllDevices).devices
        return next(int(device.deviceid) for device in devices if device.name == name)
    finally:
        connection.close()


def _agent(injector: XMasterInjector, listener: RawKeyListener, window: int, keys: int) -> list[float]:
    latencies = []
    for _ in range(keys):
        listener.clear()
        started = time.monotonic()
        guard = InjectionGuard(1, lambda: True, lambda: None)
        if not injector.inject(InputAction("key", keys="a"), window, guard):
            raise RuntimeError("inject refused a key with a lease that never ends")
        latencies.append(listener.next_from(injector.source_ids) - started)
    return latencies


def _xdotool(
    display_name: str, listener: RawKeyListener, seen: queue.Queue[UserInputSeen], keys: int
) -> tuple[list[float], list[float]]:
    core_xtest = frozenset({_device_id(display_name, "Virtual core XTEST keyboard")})
    env = {**os.environ, "DISPLAY": display_name}
    raw, watched = [], []
    for _ in range(keys):
        listener.clear()
        while not seen.empty():
            seen.get_nowait()
        started = time.monotonic()
        process = subprocess.Popen(["xdotool", "key", "a"], env=env)
        arrived = listener.next_from(core_xtest)
        raw.append(arrived - started)
        # Both stamp time.monotonic() when they read the event off their own connection.
        watched.append(seen.get(timeout=_WAIT_S).at - arrived)
        if process.wait(timeout=_WAIT_S) != 0:
            raise RuntimeError("xdotool key failed")
    return raw, watched


def run(keys: int) -> None:
    with start_xvfb() as display_name, open_window(display_name, "bench target", "KroniiBench") as window:
        injector = XMasterInjector(display_name)
        injector.start()
        listener = RawKeyListener(display_name)
        seen: queue.Queue[UserInputSeen] = queue.Queue()
        watcher = RawInputWatcher(
            display_name,
            seen.put,
            lambda: None,
            own_input=injector,
            debounce_s=0.0,
            on_unbrokered_input=seen.put,  # xdotool is automation around the broker, not a person
        )
        watcher.start()
        try:
            _agent(injector, listener, window.window_id, 10)  # warm-up: keymap, first focus
            agent = _agent(injector, listener, window.window_id, keys)
            xdotool_raw, watcher_seen = _xdotool(display_name, listener, seen, keys)
        finally:
            watcher.stop()
            listener.close()
            injector.stop()
    agent_summary, xdotool_summary = summary_ms(agent), summary_ms(xdotool_raw)
    save(
        "broker_injection",
        {
            "machine": machine(),
            "agent_inject_to_raw_event": agent_summary,
            "xdotool_start_to_raw_event": xdotool_summary,
            "watcher_report_after_listener_saw_the_raw_event": summary_ms(watcher_seen),
            "p95_ratio_agent_to_xdotool": round(agent_summary["p95_ms"] / xdotool_summary["p95_ms"], 3),
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keys", type=int, default=200)
    args = parser.parse_args()
    print(f"broker_injection: {args.keys} agent keys, then {args.keys} xdotool keys")
    run(args.keys)


if __name__ == "__main__":
    main()
