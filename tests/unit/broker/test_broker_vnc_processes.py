"""What the broker reads from /proc about ports and x11vncs, against this process's real sockets, and
the viewer count it keeps for the broker after it (adapters.vnc_processes, adapters.viewer_record)."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from kronii.broker.adapters.viewer_record import EarlierViewers, ViewerRecord
from kronii.broker.adapters.vnc_processes import (
    TcpSocket,
    is_x11vnc_of,
    parse_tcp_table,
    port_holder,
    viewers_connected,
)

_TABLE = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:170E 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 187891 1 0 100 0 0 10 0
   1: 0100007F:170E 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000  1000        0 187900 1 0 20 4 30 10 -1
   2: garbage
"""


def test_a_tcp_table_is_read_into_port_state_uid_and_inode() -> None:
    assert parse_tcp_table(_TABLE) == [
        TcpSocket(5902, 0x0A, 1000, 187891),
        TcpSocket(5902, 0x01, 1000, 187900),
    ]


@pytest.fixture
def listening() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    try:
        yield server
    finally:
        server.close()


def _name_of_this_process() -> str:
    return Path(os.fsdecode(Path("/proc/self/cmdline").read_bytes().split(b"\0")[0])).name


def test_the_holder_of_a_port_is_named_with_its_pid(listening: socket.socket) -> None:
    port = listening.getsockname()[1]
    assert port_holder(port) == f"{_name_of_this_process()} (pid {os.getpid()})"


def test_a_port_nobody_listens_on_has_no_holder(listening: socket.socket) -> None:
    port = listening.getsockname()[1]
    listening.close()
    assert port_holder(port) == ""


def test_the_clients_connected_to_a_processs_listening_port_are_counted(listening: socket.socket) -> None:
    assert viewers_connected(os.getpid()) == 0
    port = listening.getsockname()[1]
    clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
    accepted = [listening.accept()[0] for _ in clients]
    try:
        # The client ends are this process's too, on ports it does not listen on: not counted.
        assert viewers_connected(os.getpid()) == 2
    finally:
        for sock in clients + accepted:
            sock.close()


def test_a_process_that_does_not_exist_has_no_count() -> None:
    assert viewers_connected(2**22 + 12345) is None


def test_only_an_x11vnc_with_this_data_dirs_flag_file_is_its_own(tmp_path: Path) -> None:
    assert not is_x11vnc_of(os.getpid(), tmp_path)


# ---- the viewer record -------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.s = 1000.0

    def __call__(self) -> float:
        return self.s


def test_no_record_means_a_first_start_with_nobody_to_wait_for(tmp_path: Path) -> None:
    assert ViewerRecord(tmp_path / "viewers.json").read() == EarlierViewers(0, None)


def test_a_broker_killed_with_a_viewer_attached_leaves_a_record_without_an_end(tmp_path: Path) -> None:
    clock = Clock()
    ViewerRecord(tmp_path / "viewers.json", clock).write(1)
    clock.s += 30
    assert ViewerRecord(tmp_path / "viewers.json", clock).read() == EarlierViewers(1, None)
    assert (tmp_path / "viewers.json").stat().st_mode & 0o777 == 0o600


def test_a_clean_stop_says_how_long_ago_it_ended(tmp_path: Path) -> None:
    clock = Clock()
    ViewerRecord(tmp_path / "viewers.json", clock).write(2, ended=True)
    clock.s += 25
    assert ViewerRecord(tmp_path / "viewers.json", clock).read() == EarlierViewers(2, 25.0)


@pytest.mark.parametrize(
    "text", ["{not json", "[]", '{"boot_id": "%s", "viewers": "two"}', '{"boot_id": "%s"}']
)
def test_a_damaged_record_is_not_known_rather_than_nobody(tmp_path: Path, text: str) -> None:
    record = ViewerRecord(tmp_path / "viewers.json")
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    (tmp_path / "viewers.json").write_text(text.replace("%s", boot))
    assert record.read() == EarlierViewers(None, None)


def test_a_record_from_before_a_reboot_counts_as_nobody(tmp_path: Path) -> None:
    (tmp_path / "viewers.json").write_text(
        json.dumps({"boot_id": "an-earlier-boot", "viewers": 3, "ended": None})
    )
    assert ViewerRecord(tmp_path / "viewers.json").read() == EarlierViewers(0, None)
