"""free_port (tests' and benchmarks' servers): a port no outgoing connection can take before the server
binds it, that is, outside the kernel's ephemeral range, and never the same one twice."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from kronii.launcher.infra import free_port


def test_free_ports_lie_below_the_ephemeral_range_and_are_not_repeated() -> None:
    first_ephemeral = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = [free_port() for _ in range(100)]
    assert len(set(ports)) == 100
    assert all(1024 < port < first_ephemeral for port in ports)


def test_a_port_something_listens_on_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    from kronii.launcher import infra

    low, _ = infra._below_ephemeral()
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        taken = listening.getsockname()[1]
        # The first draw is the port in use, the next a free one.
        draws = iter([taken - low, 0, 1, 2, 3])
        monkeypatch.setattr("secrets.randbelow", lambda _n: next(draws))
        port = free_port()
        assert port != taken and low <= port <= low + 3
