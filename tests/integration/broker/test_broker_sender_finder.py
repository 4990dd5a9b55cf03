"""The finder of unbrokered input's sender against a real Xvfb and the real xdotool: the X-Resource
extension's client pids, a client that just connected named by its /proc name, the broker's own
connections and older clients left out."""

from __future__ import annotations

import os
import queue
import subprocess
import time

from kronii.broker.adapters.x_clients import SenderFinder
from kronii.broker.core.facts import UnbrokeredInput, UserInputSeen

from tests.desktop import wait_until
from tests.integration.broker.conftest import x_env

SEEN = UserInputSeen("key", 6, "Virtual core XTEST keyboard", 0.0)


def test_a_program_connected_just_now_is_named_and_the_finders_own_process_is_not(x_display: str) -> None:
    found: queue.Queue[UnbrokeredInput] = queue.Queue()
    finder = SenderFinder(x_display, found.put)
    finder.start()
    # xdotool stays connected while it waits (its display is opened before the command runs).
    waiting = subprocess.Popen(["/usr/bin/xdotool", "sleep", "5"], env=x_env(x_display))
    try:
        wait_until(lambda: _connected(x_display, waiting.pid), timeout_s=5, what="xdotool connected")
        finder.find(SEEN)
        answer = found.get(timeout=5)
    finally:
        waiting.kill()
        waiting.wait()
        finder.stop()

    assert answer.seen == SEEN
    assert answer.senders and answer.senders[0].program == "xdotool"
    assert answer.senders[0].pid == waiting.pid
    assert os.getpid() not in {sender.pid for sender in answer.senders}


def test_a_client_there_long_before_is_not_named(x_display: str) -> None:
    found: queue.Queue[UnbrokeredInput] = queue.Queue()
    waiting = subprocess.Popen(["/usr/bin/xdotool", "sleep", "30"], env=x_env(x_display))
    clock = [time.monotonic()]
    finder = SenderFinder(x_display, found.put, monotonic=lambda: clock[0])
    try:
        wait_until(lambda: _connected(x_display, waiting.pid), timeout_s=5, what="xdotool connected")
        finder.start()  # its first snapshot sees xdotool
        clock[0] += 60  # a minute later: long-standing
        finder.find(SEEN)
        answer = found.get(timeout=5)
    finally:
        waiting.kill()
        waiting.wait()
        finder.stop()

    assert answer.senders == ()


def _connected(display: str, pid: int) -> bool:
    from Xlib import display as xdisplay
    from Xlib.ext import res

    connection = xdisplay.Display(display)
    try:
        reply = connection.res_query_client_ids([{"client": 0, "mask": res.LocalClientPIDMask}])
        return any(entry.value and entry.value[0] == pid for entry in reply.ids)
    finally:
        connection.close()
