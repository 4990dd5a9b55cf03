"""`kronii up` time to "kronii is up", cold (new data directory: initdb, JetStream store, migrations)
and warm (the same directory again). No display, embedded NATS, Redis and PostgreSQL.

The floor, in the same run: the three servers alone, started as `kronii up` starts them (the launcher's
EmbeddedInfra, side by side, PostgreSQL waited for until it accepts sessions) by a Python process of
their own, cold and warm on a data directory of their own. What `kronii up` takes above it is kronii's:
the migrations, the services' imports and start, their readiness.

kronii runs as installed: with its bytecode cached (the bench drops a PYTHONDONTWRITEBYTECODE of its own
environment; one start before the timed runs writes the cache).

Usage: python bench/kronii_up.py [--runs 3]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _common import machine, save

from tests.mesh import Proc, standalone_env

# The servers alone: started as the launcher starts them, "servers are up" once all three serve.
_FLOOR = """
import signal, sys, threading
from pathlib import Path
from kronii.launcher.infra import EmbeddedInfra, InfraPorts, free_port
infra = EmbeddedInfra(Path(sys.argv[1]), InfraPorts(free_port(), free_port(), free_port()))
infra.start(nats_url=None, redis_url=None, database_url=None)
print("servers are up", flush=True)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
stop.wait()
infra.stop()
"""


def floor_run(data_dir: Path) -> float:
    env = _as_installed(standalone_env(data_dir))
    started = time.perf_counter()
    proc = Proc([sys.executable, "-c", _FLOOR, str(data_dir)], env)
    proc.wait_for_line(lambda line: line.strip() == "servers are up", 120)
    up = time.perf_counter() - started
    code, _stop = proc.terminate(30)
    if code != 0:
        raise SystemExit(f"the servers alone exited with {code}:\n{proc.output[-2000:]}")
    return up


def _as_installed(env: dict[str, str]) -> dict[str, str]:
    """An installed kronii has its bytecode cached (pip and uv write it, Python writes it at the first run): a
    PYTHONDONTWRITEBYTECODE in the bench's own environment would make every start compile kronii's sources."""
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def one_run(data_dir: Path) -> tuple[float, float]:
    env = _as_installed(standalone_env(data_dir))
    started = time.perf_counter()
    proc = Proc([str(Path(sys.executable).parent / "kronii"), "up"], env)
    proc.wait_for_line(lambda line: line.strip() == "kronii is up", 120)
    up = time.perf_counter() - started
    code, stop = proc.terminate(30)
    if code != 0:
        raise SystemExit(f"kronii up exited with {code}:\n{proc.output[-2000:]}")
    return up, stop


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    cold, warm, stops, floor_cold, floor_warm = [], [], [], [], []
    warm_up = Path(tempfile.mkdtemp(prefix="kronii-bench-up-"))
    try:
        one_run(warm_up / "data")  # writes the bytecode cache, as the first start of an install does
    finally:
        shutil.rmtree(warm_up, ignore_errors=True)
    for n in range(args.runs):
        root = Path(tempfile.mkdtemp(prefix="kronii-bench-up-"))
        try:
            floor_cold.append(floor_run(root / "floor"))
            floor_warm.append(floor_run(root / "floor"))
            print(
                f"run {n + 1}: servers alone cold {floor_cold[-1]:.2f} s, warm {floor_warm[-1]:.2f} s",
                flush=True,
            )
            up, stop = one_run(root / "data")
            cold.append(up)
            stops.append(stop)
            print(f"run {n + 1}: cold {up:.2f} s", flush=True)
            up, stop = one_run(root / "data")
            warm.append(up)
            stops.append(stop)
            print(f"run {n + 1}: warm {up:.2f} s", flush=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    save(
        "kronii_up",
        {
            "machine": machine(),
            "cold_seconds": [round(v, 2) for v in cold],
            "warm_seconds": [round(v, 2) for v in warm],
            "cold_median_s": round(sorted(cold)[len(cold) // 2], 2),
            "warm_median_s": round(sorted(warm)[len(warm) // 2], 2),
            "stop_max_s": round(max(stops), 2),
            "servers_alone_cold_seconds": [round(v, 2) for v in floor_cold],
            "servers_alone_warm_seconds": [round(v, 2) for v in floor_warm],
            "servers_alone_cold_median_s": round(sorted(floor_cold)[len(floor_cold) // 2], 2),
            "servers_alone_warm_median_s": round(sorted(floor_warm)[len(floor_warm) // 2], 2),
        },
    )


if __name__ == "__main__":
    main()
