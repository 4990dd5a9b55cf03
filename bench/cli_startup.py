"""Whole-process wall and CPU time of the commands a person types most, next to `python -c pass` in the
same run (the floor any Python command pays): `kronii --help`, `kronii redact` of one line on standard
input, `kronii status`, `kronii agents list`, `kronii replay` of a missing file, `kronii keys status` and
`kronii audit verify` (with nothing running, as on a fresh shell; their answer
is then a sentence, and what is measured is how soon it comes). Runs are interleaved, command by command,
so a busy moment of the machine lands on all of them; medians are reported with the ratio to the floor.

Goal (issue "The front door"): `--help` <= 0.25 s, the others <= 0.5 s, on an idle machine.

Usage: python bench/cli_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import machine, save

KRONII = str(Path(sys.executable).with_name("kronii"))
GOALS_S = {
    "kronii --help": 0.25,
    "kronii redact (one line)": 0.5,
    "kronii status": 0.5,
    "kronii agents list": 0.5,
    "kronii replay (a missing file)": 0.5,
}


def commands() -> dict[str, tuple[list[str], bytes | None]]:
    return {
        "python -c pass": ([sys.executable, "-c", "pass"], None),
        "kronii --help": ([KRONII, "--help"], None),
        "kronii redact (one line)": (
            [KRONII, "redact"],
            b"export AWS_KEY=AKIAQ7RXWN3KPL5TZ2HM for deployment\n",
        ),
        "kronii status": ([KRONII, "status"], None),
        "kronii agents list": ([KRONII, "agents", "list"], None),
        # Issue "A first hour that works": 2.4 s before it said the file was missing.
        "kronii replay (a missing file)": ([KRONII, "replay", "/nonexistent/recording.jsonl"], None),
        # Their answer with nothing running is a sentence; 3.9 s and 2.0 s were seen with a mesh up.
        "kronii keys status": ([KRONII, "keys", "status"], None),
        "kronii audit verify": ([KRONII, "audit", "verify"], None),
    }


def run_once(argv: list[str], stdin: bytes | None, env: dict[str, str]) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, env=env, timeout=120, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kronii-bench-cli-") as tmp:
        # Nothing running and nobody's own data: a fresh data dir, and ports where nothing listens.
        env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
        # As on a person's machine: Python keeps the compiled bytecode it writes at the first run (a shell
        # that forbids it makes every command compile ~130 modules from source, a third of its time).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(
            KRONII_DATA_DIR=tmp, KRONII_CONFIG=str(Path(tmp) / "none.toml"), KRONII_SUPERVISOR_HTTP_PORT="1"
        )
        table = commands()
        samples: dict[str, list[tuple[float, float, int]]] = {name: [] for name in table}
        for argv, stdin in table.values():
            run_once(argv, stdin, env)  # warm the page cache once
        for _ in range(args.runs):
            for name, (argv, stdin) in table.items():
                samples[name].append(run_once(argv, stdin, env))
    floor = statistics.median(wall for wall, _, _ in samples["python -c pass"])
    figures = {}
    for name, runs in samples.items():
        wall = statistics.median(w for w, _, _ in runs)
        figures[name] = {
            "wall_s": round(wall, 3),
            "cpu_s": round(statistics.median(c for _, c, _ in runs), 3),
            "ratio_to_python": round(wall / floor, 1),
            "exit_codes": sorted({code for _, _, code in runs}),
            "goal_s": GOALS_S.get(name),
            "meets_goal": wall <= GOALS_S[name] if name in GOALS_S else None,
        }
    save("cli_startup", {"machine": machine(), "runs": args.runs, "commands": figures})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
