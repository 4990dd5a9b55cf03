"""`kronii up` time to "kronii is up", cold (new data directory: initdb, JetStream store, migrations)
and warm (the same directory again). No display, embedded NATS, Redis and PostgreSQL.

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


def one_run(data_dir: Path) -> tuple[float, float]:
    env = standalone_env(data_dir)
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
    cold, warm, stops = [], [], []
    for n in range(args.runs):
        root = Path(tempfile.mkdtemp(prefix="kronii-bench-up-"))
        try:
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
        },
    )


if __name__ == "__main__":
    main()
