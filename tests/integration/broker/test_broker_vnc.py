"""Remote viewing under a real Xvfb: x11vnc started by VncServer, its hooks reaching the broker's
ViewerHookListener, and a real VNC viewer (vncdotool) playing the person.

x11vnc is installed by `make sysdeps`; a missing one fails the test rather than skipping it."""

from __future__ import annotations

import asyncio
import os
import queue
import shutil
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from kronii.broker.adapters.viewer_socket import ViewerHookListener, hook_socket_path
from kronii.broker.adapters.vnc import VncServer, VncSettings, encode_rfbauth
from kronii.broker.adapters.x_watch import RawInputWatcher, UserInputSeen
from kronii.launcher.infra import free_port
from vncdotool import api as vnc_api  # type: ignore[import-untyped]
from vncdotool.client import AuthenticationError  # type: ignore[import-untyped]

from tests.desktop import start_xvfb

DEADLINE_S = 10.0


@pytest.fixture
def x_display() -> Iterator[str]:
    assert shutil.which("x11vnc") is not None, "x11vnc is missing: run `make sysdeps`"
    with start_xvfb() as display:
        yield display


@dataclass
class Hooks:
    listener: ViewerHookListener
    changes: list[tuple[bool, str]] = field(default_factory=list)


@pytest_asyncio.fixture
async def hooks(tmp_path: Path) -> AsyncIterator[Hooks]:
    changes: list[tuple[bool, str]] = []
    listener = ViewerHookListener(
        hook_socket_path(tmp_path), lambda attached, client: changes.append((attached, client))
    )
    await listener.start()
    try:
        yield Hooks(listener, changes)
    finally:
        await listener.stop()


@asynccontextmanager
async def running_vnc(
    display: str, data_dir: Path, hooks: Hooks, settings: VncSettings | None = None
) -> AsyncIterator[VncServer]:
    server = VncServer(display, data_dir, hooks.listener.path, settings)
    await asyncio.to_thread(server.start)
    try:
        yield server
    finally:
        await asyncio.to_thread(server.stop)


async def eventually(predicate: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not predicate():
        assert time.monotonic() < deadline, f"{what} not reached within {DEADLINE_S}s"
        await asyncio.sleep(0.02)


def connect_viewer(port: int, password: str) -> Any:
    """A viewer that completed the handshake (a framebuffer update needs authentication first)."""
    viewer = vnc_api.connect(f"127.0.0.1::{port}", password=password, timeout=DEADLINE_S)
    viewer.refreshScreen()
    return viewer


def wrong_password(password: str) -> str:
    return "x" * len(password) if password != "x" * len(password) else "y" * len(password)


async def test_a_viewer_with_the_password_is_reported_attached_then_gone(
    x_display: str, tmp_path: Path, hooks: Hooks
) -> None:
    async with running_vnc(x_display, tmp_path, hooks) as server:
        viewer = await asyncio.to_thread(connect_viewer, server.port, server.password())
        await eventually(lambda: hooks.changes, "the viewer reported attached")
        attached, client_id = hooks.changes[0]
        assert attached and client_id
        assert hooks.listener.viewer_ids == {client_id}

        await asyncio.to_thread(viewer.disconnect)
        await eventually(lambda: len(hooks.changes) == 2, "the viewer reported gone")
        assert hooks.changes[1] == (False, client_id)
        assert hooks.listener.viewer_count == 0


async def test_a_viewer_with_a_wrong_password_never_counts_as_attached(
    x_display: str, tmp_path: Path, hooks: Hooks
) -> None:
    async with running_vnc(x_display, tmp_path, hooks) as server:
        with pytest.raises(AuthenticationError):
            await asyncio.to_thread(connect_viewer, server.port, wrong_password(server.password()))
        # x11vnc runs its hooks one after another: once the good viewer is reported, whatever
        # the refused one caused has been reported before it.
        viewer = await asyncio.to_thread(connect_viewer, server.port, server.password())
        await eventually(lambda: hooks.changes, "the good viewer reported attached")
        assert len(hooks.changes) == 1
        assert hooks.listener.viewer_count == 1
        await asyncio.to_thread(viewer.disconnect)


async def test_a_session_stays_attached_until_the_last_of_two_viewers_leaves(
    x_display: str, tmp_path: Path, hooks: Hooks
) -> None:
    async with running_vnc(x_display, tmp_path, hooks) as server:
        first = await asyncio.to_thread(connect_viewer, server.port, server.password())
        second = await asyncio.to_thread(connect_viewer, server.port, server.password())
        await eventually(lambda: hooks.listener.viewer_count == 2, "two viewers attached")
        assert [attached for attached, _ in hooks.changes] == [True]

        await asyncio.to_thread(first.disconnect)
        await eventually(lambda: hooks.listener.viewer_count == 1, "one viewer gone")
        assert [attached for attached, _ in hooks.changes] == [True]

        await asyncio.to_thread(second.disconnect)
        await eventually(lambda: len(hooks.changes) == 2, "the last viewer reported gone")
        assert hooks.changes[1][0] is False


def move_pointer_as_viewer(port: int, password: str, x: int, y: int) -> None:
    viewer = connect_viewer(port, password)
    try:
        viewer.mouseMove(x, y)
        # x11vnc handles a client's messages in order: once this update is answered, the motion was.
        viewer.refreshScreen()
    finally:
        viewer.disconnect()


@pytest.mark.parametrize(("viewonly", "moves"), [(False, True), (True, False)])
async def test_a_view_only_server_ignores_the_viewers_pointer(
    x_display: str, tmp_path: Path, hooks: Hooks, viewonly: bool, moves: bool
) -> None:
    target = (123, 77)
    seen: queue.Queue[UserInputSeen] = queue.Queue()
    watcher = RawInputWatcher(x_display, seen.put, lambda: None, debounce_s=0.0)
    watcher.start()
    try:
        async with running_vnc(x_display, tmp_path, hooks, VncSettings(viewonly=viewonly)) as server:
            await asyncio.to_thread(move_pointer_as_viewer, server.port, server.password(), *target)
            await asyncio.sleep(0.2)
    finally:
        watcher.stop()
    # The viewer moves a pointer of its own (x11vnc -multiptr), so the X server's raw events say it.
    sources = {item.source_name for item in list(seen.queue)}
    assert bool(sources) is moves
    assert all(source.startswith("x11vnc ") for source in sources), sources


async def test_a_viewers_keys_come_from_its_own_device_the_persons_not_the_core_xtest_one(
    x_display: str, tmp_path: Path, hooks: Hooks
) -> None:
    seen: queue.Queue[UserInputSeen] = queue.Queue()
    unbrokered: queue.Queue[UserInputSeen] = queue.Queue()
    watcher = RawInputWatcher(
        x_display, seen.put, lambda: None, debounce_s=0.0, on_unbrokered_input=unbrokered.put
    )
    watcher.start()
    try:
        async with running_vnc(x_display, tmp_path, hooks) as server:
            await asyncio.to_thread(press_key_as_viewer, server.port, server.password(), "a")
            first = await asyncio.to_thread(seen.get, True, DEADLINE_S)
    finally:
        watcher.stop()
    # x11vnc names its per-viewer devices after the viewer's address ("x11vnc 127.0.0.1 keyboard").
    assert first.kind == "key" and first.source_name.startswith("x11vnc 127.0.0.1 ")
    assert unbrokered.empty()


def press_key_as_viewer(port: int, password: str, key: str) -> None:
    viewer = connect_viewer(port, password)
    try:
        viewer.keyPress(key)
        viewer.refreshScreen()
    finally:
        viewer.disconnect()


async def test_a_configured_port_is_the_one_listened_on(x_display: str, tmp_path: Path, hooks: Hooks) -> None:
    port = free_port()
    async with running_vnc(x_display, tmp_path, hooks, VncSettings(port=port)) as server:
        assert server.port == port
        with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S) as conn:
            assert conn.recv(12).startswith(b"RFB ")


async def test_the_password_is_private_kept_across_restarts_and_off_the_command_line(
    x_display: str, tmp_path: Path, hooks: Hooks
) -> None:
    async with running_vnc(x_display, tmp_path, hooks) as server:
        password = server.password()
        assert server._process is not None
        cmdline = Path(f"/proc/{server._process.pid}/cmdline").read_bytes()
        assert password.encode() not in cmdline
        assert stat.S_IMODE(server.password_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(server.password_file.parent.stat().st_mode) == 0o700
        log_text = (server.password_file.parent / "x11vnc.log").read_text(errors="replace")
        assert password not in log_text
    async with running_vnc(x_display, tmp_path, hooks) as again:
        assert again.password() == password
        viewer = await asyncio.to_thread(connect_viewer, again.port, password)
        await asyncio.to_thread(viewer.disconnect)


def test_the_password_file_is_what_x11vnc_storepasswd_writes(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    subprocess.run(
        ["x11vnc", "-storepasswd", "s3cretXY", str(reference)], capture_output=True, check=True, timeout=10
    )
    assert encode_rfbauth("s3cretXY") == reference.read_bytes()


async def test_stopping_leaves_no_process_of_x11vncs_group(
    x_display: str, tmp_path: Path, hooks: Hooks
) -> None:
    async with running_vnc(x_display, tmp_path, hooks) as server:
        assert server._process is not None
        group = server._process.pid
        port = server.port
        os.killpg(group, 0)  # the group exists while x11vnc runs
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass


# Run as `nobody`: write a well-formed "attached" line to the hook socket.
_FOREIGN_HOOK = """
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
try:
    s.sendall(b'{"event": "attached", "client_id": "0x99"}\\n')
except (BrokenPipeError, ConnectionResetError):
    pass  # the listener may hang up before the line is written: refused either way
s.close()
"""


@pytest.mark.skipif(os.getuid() != 0, reason="connecting as another user needs root")
async def test_the_hook_socket_refuses_another_user_even_when_its_modes_are_loosened() -> None:
    changes: list[tuple[bool, str]] = []
    base = Path(tempfile.mkdtemp(prefix="kronii-viewer-hook-"))
    base.chmod(0o755)  # another user may reach it: only the listener's own modes would stop them
    listener = ViewerHookListener(
        hook_socket_path(base), lambda attached, client: changes.append((attached, client))
    )
    await listener.start()
    try:
        path = listener.path
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        path.parent.chmod(0o777)
        path.chmod(0o777)
        done = await asyncio.create_subprocess_exec(
            "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
            "/usr/bin/python3", "-c", _FOREIGN_HOOK, str(path),
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await asyncio.wait_for(done.communicate(), DEADLINE_S)
        assert done.returncode == 0, err.decode()
        await eventually(lambda: listener.refused == 1, "the foreign connection refused")
        assert changes == []
        assert listener.viewer_count == 0
    finally:
        await listener.stop()
        shutil.rmtree(base, ignore_errors=True)
