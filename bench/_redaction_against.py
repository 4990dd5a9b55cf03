"""The redaction engine of another git revision on the same texts, in the same run: `--against REV`.

The revision's `libs/redaction` is checked out into a temporary directory (`git archive`, no work tree touched)
and a child process imports the engine from there (its `src` first on sys.path), redacts the same chunks one
call each, best of `rounds` passes, and reports CPU and wall seconds. The figures of this checkout come from the
same kind of child, so both pay the same process and import costs and run one after the other.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from kronii.redaction import RedactionEngine
import kronii.redaction
texts = json.load(open(sys.argv[2], encoding="utf-8"))
rounds = int(sys.argv[3])
engine = RedactionEngine()
for text in texts[:50]:
    engine.redact(text)
best_cpu = best_wall = None
for _ in range(rounds):
    wall, cpu = time.perf_counter(), time.process_time()
    for text in texts:
        engine.redact(text)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
    best_wall = wall if best_wall is None else min(best_wall, wall)
print(json.dumps({"cpu": best_cpu, "wall": best_wall, "engine": kronii.redaction.__file__,
                  "detectors": len(engine.detectors)}))
"""


def _source_of(revision: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", revision, "libs/redaction/src"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "libs" / "redaction" / "src"


def _run(source: Path, texts_file: Path, rounds: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(source), str(texts_file), str(rounds)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def throughput_against(revision: str, texts: list[str], rounds: int = 3) -> dict[str, Any]:
    """This checkout's engine and `revision`'s on `texts`: MB per CPU second each, and the ratio."""
    size = sum(len(text.encode()) for text in texts) / 1e6
    with tempfile.TemporaryDirectory(prefix="kronii-against-") as scratch:
        texts_file = Path(scratch) / "texts.json"
        texts_file.write_text(json.dumps(texts), encoding="utf-8")
        baseline = _run(_source_of(revision, Path(scratch) / "rev"), texts_file, rounds)
        current = _run(REPO / "libs" / "redaction" / "src", texts_file, rounds)
    return {
        "revision": revision,
        "mb": round(size, 2),
        "rounds": rounds,
        "now_mb_per_cpu_s": round(size / current["cpu"], 2),
        "now_detectors": current["detectors"],
        "then_mb_per_cpu_s": round(size / baseline["cpu"], 2),
        "then_detectors": baseline["detectors"],
        "cpu_ratio_now_over_then": round(current["cpu"] / baseline["cpu"], 3),
    }
