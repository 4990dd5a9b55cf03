"""The Unix-socket front door: a 0600 socket in a 0700 directory, peer credentials from the kernel,
allowed peers spliced to a real gRPC server that can tell who is calling, others refused and
audited; and what /proc tells about a caller on a pseudo-terminal (its terminal, session, standard
input, start time) for the proof of presence. Tests run as root; the other user is `nobody`,
through setpriv."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from kronii.capture.adapters.callers import PEERS, front_door, identity_for_peer
from kronii.edge.local_door import FrontDoorError, PeerPolicy, PeerRegistry
from kronii.edge.peers import PeerIdentity
from kronii.edge.procinfo import claimed_device, proc_facts, start_ticks
from kronii.runtime.rendezvous import capture_socket_path
from kronii.stores.audit import AuditLog

from tests.integration.capture_vault.conftest import Sessions
from tests.integration.capture_vault.vault_support import audit_recorder

WHO = "/kronii.test.Who/Whoami"

# Run as `nobody`: connect, send the HTTP/2 preface, report what happened.
_OTHER_USER_CLIENT = """
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
try:
    s.connect(sys.argv[1])
except PermissionError:
    print("permission-denied"); sys.exit(0)
try:
    s.sendall(b"PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n")
    data = s.recv(100)
except (ConnectionResetError, BrokenPipeError):
    data = b""
print("closed" if not data else "answered")
"""

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="switching to another user needs root")


async def _whoami(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    identity = identity_for_peer(context.peer())
    if identity is None:
        return b"{}"
    return json.dumps({"uid": identity.uid, "pid": identity.pid, "exe": identity.exe}).encode()


@pytest_asyncio.fixture
async def grpc_port() -> AsyncIterator[int]:
    """A real gRPC server on loopback whose one method answers who the caller is."""
    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "kronii.test.Who", {"Whoami": grpc.unary_unary_rpc_method_handler(_whoami)}
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield port
    finally:
        await server.stop(0)


@pytest.fixture
def runtime_dir() -> Iterator[Path]:
    """A runtime directory another user could reach if the service's own modes allowed it."""
    base = Path(tempfile.mkdtemp(prefix="kronii-capture-rt-"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _nobody_python() -> str:
    found = shutil.which("python3", path=os.defpath)
    if found is None:
        pytest.skip("no system python3 that another user may run")
    return found


async def _as_nobody(path: Path) -> str:
    process = await asyncio.create_subprocess_exec(
        "setpriv",
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
        _nobody_python(),
        "-c",
        _OTHER_USER_CLIENT,
        str(path),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 20)
    assert process.returncode == 0, err.decode()
    return out.decode().strip()


async def _call_whoami(path: Path) -> dict[str, object]:
    # A private subchannel pool: a refused connection must not leave a shared backoff behind.
    options = [("grpc.use_local_subchannel_pool", 1)]
    async with grpc.aio.insecure_channel(f"unix:{path}", options=options) as channel:
        reply = await channel.unary_unary(WHO)(b"", timeout=10)
    result: dict[str, object] = json.loads(reply)
    return result


def test_the_socket_lives_under_the_runtime_directory_or_the_data_directory(tmp_path: Path) -> None:
    assert capture_socket_path(tmp_path, runtime_dir="/run/user/1000") == Path(
        "/run/user/1000/kronii/capture.sock"
    )
    assert capture_socket_path(tmp_path, runtime_dir="") == tmp_path / "run" / "capture.sock"
    assert (
        capture_socket_path(tmp_path, tmp_path / "sock", runtime_dir="/x")
        == tmp_path / "sock" / "capture.sock"
    )


async def test_an_allowed_local_call_reaches_grpc_and_grpc_knows_the_caller(
    runtime_dir: Path, grpc_port: int
) -> None:
    path = capture_socket_path(Path("unused"), runtime_dir=str(runtime_dir))
    door = front_door(path, ("127.0.0.1", grpc_port), PeerPolicy.build())
    await door.start()
    try:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_ISSOCK(os.stat(path).st_mode)
        assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700

        caller = await _call_whoami(path)

        assert caller == {"uid": os.getuid(), "pid": os.getpid(), "exe": os.path.realpath(sys.executable)}
    finally:
        await door.stop()
    assert not path.exists()
    assert len(PEERS) == 0  # every spliced port was forgotten


async def test_a_call_that_bypasses_the_socket_has_no_local_identity(grpc_port: int) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        reply = await channel.unary_unary(WHO)(b"", timeout=10)

    assert json.loads(reply) == {}
    assert identity_for_peer("unix:/some/socket") is None
    assert identity_for_peer("ipv4:10.0.0.5:4000") is None


async def test_another_user_cannot_even_reach_the_socket(runtime_dir: Path, grpc_port: int) -> None:
    path = capture_socket_path(Path("unused"), runtime_dir=str(runtime_dir))
    door = front_door(path, ("127.0.0.1", grpc_port), PeerPolicy.build())
    await door.start()
    try:
        assert await _as_nobody(path) == "permission-denied"
    finally:
        await door.stop()


async def test_the_peer_check_refuses_and_audits_another_user_when_modes_are_loosened(
    runtime_dir: Path, grpc_port: int, db: Sessions
) -> None:
    audit = AuditLog(db, "capture")
    path = capture_socket_path(Path("unused"), runtime_dir=str(runtime_dir))
    door = front_door(path, ("127.0.0.1", grpc_port), PeerPolicy.build(), record=audit_recorder(audit))
    await door.start()
    try:
        # Someone loosened the modes: only the peer check stands between nobody and the service.
        path.parent.chmod(0o755)
        path.chmod(0o666)

        outcome = await _as_nobody(path)

        assert outcome == "closed"
        assert door.refused == 1
        nobody = pwd.getpwnam("nobody").pw_uid
        rows = [row for row in await audit.tail(20) if row.action == "capture.connect"]
        assert rows
        assert rows[-1].outcome == "refused"
        assert rows[-1].actor == f"uid:{nobody}"
        assert rows[-1].detail["uid"] == nobody
        assert rows[-1].detail["reason"] == "uid_not_allowed"
        assert rows[-1].detail["pid"] > 0
        # The service's own user still gets through.
        assert (await _call_whoami(path))["uid"] == os.getuid()
    finally:
        await door.stop()


async def test_an_executable_outside_the_allow_list_is_refused(runtime_dir: Path, grpc_port: int) -> None:
    other = shutil.which("true") or "/nonexistent/true"
    path = capture_socket_path(Path("unused"), runtime_dir=str(runtime_dir))
    door = front_door(path, ("127.0.0.1", grpc_port), PeerPolicy.build(executables=[other]))
    await door.start()
    try:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await _call_whoami(path)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        assert door.refused >= 1
    finally:
        await door.stop()

    door = front_door(path, ("127.0.0.1", grpc_port), PeerPolicy.build(executables=[sys.executable]))
    await door.start()
    try:
        assert (await _call_whoami(path))["pid"] == os.getpid()
    finally:
        await door.stop()


async def test_a_second_front_door_does_not_steal_a_live_socket(runtime_dir: Path, grpc_port: int) -> None:
    path = capture_socket_path(Path("unused"), runtime_dir=str(runtime_dir))
    first = front_door(path, ("127.0.0.1", grpc_port), PeerPolicy.build())
    await first.start()
    try:
        with pytest.raises(FrontDoorError, match="another capture service is already listening") as caught:
            await front_door(path, ("127.0.0.1", grpc_port), PeerPolicy.build()).start()
        assert str(runtime_dir) not in str(caught.value)
    finally:
        await first.stop()


async def test_a_stale_socket_file_is_replaced(runtime_dir: Path, grpc_port: int) -> None:
    path = capture_socket_path(Path("unused"), runtime_dir=str(runtime_dir))
    path.parent.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()  # the file stays, nobody listens: what a crashed service leaves behind

    door = front_door(path, ("127.0.0.1", grpc_port), PeerPolicy.build())
    await door.start()
    try:
        assert (await _call_whoami(path))["uid"] == os.getuid()
    finally:
        await door.stop()


async def test_the_front_door_records_the_peer_start_time_so_a_reused_pid_is_told_apart(
    runtime_dir: Path, grpc_port: int
) -> None:
    seen: list[PeerIdentity] = []

    class Recording(PeerRegistry):
        def register(self, port: int, identity: PeerIdentity) -> None:
            seen.append(identity)
            super().register(port, identity)

    path = capture_socket_path(Path("unused"), runtime_dir=str(runtime_dir))
    door = front_door(path, ("127.0.0.1", grpc_port), PeerPolicy.build(), peers=Recording())
    await door.start()
    try:
        with contextlib.suppress(grpc.aio.AioRpcError):
            await _call_whoami(path)  # this registry is not the one the gRPC side reads
    finally:
        await door.stop()

    assert seen and seen[0].pid == os.getpid()
    assert seen[0].start_ticks == start_ticks(os.getpid()) and seen[0].start_ticks > 0


def test_proc_facts_of_a_process_on_a_pseudo_terminal_name_its_terminal_session_and_stdin() -> None:
    master, slave = os.openpty()
    device = os.fstat(slave).st_rdev
    process = subprocess.Popen(
        ["setsid", "--ctty", "sleep", "30"], stdin=slave, stdout=subprocess.DEVNULL, close_fds=True
    )
    try:
        facts = None
        for _ in range(100):  # until setsid has made the terminal its controlling one
            facts = proc_facts(process.pid, os.getuid())
            if facts is not None and facts.tty is not None:
                break
            time.sleep(0.02)
        assert facts is not None
        assert facts.tty == (os.major(device), os.minor(device))
        assert facts.session == process.pid  # setsid made it the session leader without forking
        assert facts.stdin == facts.tty
        assert facts.leader_start_ticks == facts.start_ticks == start_ticks(process.pid)
        assert claimed_device(os.ttyname(slave)) == facts.tty
        assert claimed_device("/dev/../etc/passwd") is None
        assert claimed_device("/etc/passwd") is None
        ours = proc_facts(os.getpid(), os.getuid())
        assert ours is not None and ours.session != facts.session
    finally:
        process.kill()
        process.wait()
        os.close(master)
        os.close(slave)
