"""The price of knowing who calls: the kernel lookup every request of every service makes.

A loopback connection's owner comes from the kernel's sock_diag (one exact-address query, the
interface `ss` uses); the fallback where netlink is missing walks /proc/net/tcp. Both are timed on
the same real loopback connection, with some idle connections open as a desktop would have, and
the ratio is printed; also one whole HTTP request through the access layer against the same request
with the layer off (a real uvicorn server, same process).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI
from kronii.edge.access import AccessMiddleware, AccessPolicy, _proc_uid, tcp_peer_uid
from kronii.launcher.infra import free_port

RESULTS = Path(__file__).parent / "results"


def _per_call_us(call: Callable[[], Any], rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        call()
    return (time.perf_counter() - started) / rounds * 1e6


def lookups(idle: int = 200) -> dict[str, float]:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    idle_pairs = []
    for _ in range(idle):
        client = socket.create_connection(("127.0.0.1", port))
        idle_pairs.append((client, server.accept()[0]))
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = server.accept()
    host, peer_port = client.getsockname()
    assert tcp_peer_uid(host, peer_port, port, "127.0.0.1") == os.geteuid()
    diag = _per_call_us(lambda: tcp_peer_uid(host, peer_port, port, "127.0.0.1"), 3000)
    proc = _per_call_us(lambda: _proc_uid(socket.AF_INET, host, peer_port, port), 100)
    for pair in [*idle_pairs, (client, accepted)]:
        for sock in pair:
            sock.close()
    server.close()
    return {"sock_diag_us": round(diag, 1), "proc_net_tcp_us": round(proc, 1), "open_connections": idle + 1}


def _requests(guarded: bool, count: int) -> list[float]:
    """Time `count` GETs from this thread to a real uvicorn server running on another."""
    app = FastAPI()

    @app.get("/v1/thing")
    async def thing() -> dict[str, str]:
        return {"ok": "yes"}

    if guarded:
        app.add_middleware(AccessMiddleware, policy=AccessPolicy())
    # Bound by uvicorn as the services are (a socket handed in answers after a 40 ms delayed ACK).
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_config=None, access_log=False, lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    timings = []
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        for _ in range(count):
            started = time.perf_counter()
            answer = client.get("/v1/thing")
            timings.append((time.perf_counter() - started) * 1e6)
            assert answer.status_code == 200
    server.should_exit = True
    thread.join(5)
    return timings


def requests(count: int = 2000) -> dict[str, float]:
    plain = statistics.median(_requests(False, count))
    guarded = statistics.median(_requests(True, count))
    return {
        "request_plain_us": round(plain, 1),
        "request_guarded_us": round(guarded, 1),
        "ratio": round(guarded / plain, 3),
    }


def main() -> None:
    figures = {**lookups(), **requests()}
    figures["proc_over_sock_diag"] = round(figures["proc_net_tcp_us"] / figures["sock_diag_us"], 1)
    print(json.dumps(figures, indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "access_check.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
