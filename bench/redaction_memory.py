"""`kronii redact`'s peak memory against its input's size, in the same run: the CLI (which reads and masks a
window at a time), one `redact` call over the whole text in a process of its own (what the CLI did before it
read in windows), and detect-secrets' CLI (`detect-secrets scan --no-verify FILE`) on the same file.

The text is bench/redaction_text.py's mixed corpus (the labelled documents among logs, configs, shell history and
Python sources), the same seed, cut at 1, 10 and 50 MB. Each command runs as its own child, its peak resident set
from the kernel (`wait4`'s ru_maxrss) with its CPU and wall time.

Usage: python bench/redaction_memory.py [--sizes 1,10,50] [--detect-secrets-max-mb 10]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import machine, save
from redaction_text import MB, build_corpus

from tests.unit.redaction.test_redaction_corpus import load_corpus

GNU_TIME = "/usr/bin/time"

# What the CLI did before it read in windows: the whole input read, then one `redact` call over it.
_WHOLE_TEXT_SCRIPT = (
    "import sys; from kronii.redaction import RedactionEngine, RedactionPolicy;"
    "text = open(sys.argv[1], encoding='utf-8', errors='replace').read();"
    "result = RedactionEngine(RedactionPolicy(red_share_threshold=1.0)).redact(text);"
    "sys.stdout.write(result.text)"
)


def corpus_file(folder: Path, size_mb: int) -> Path:
    text = "".join(chunk.text + "\n" for chunk in build_corpus(size_mb * MB, load_corpus()))
    data = text.encode("utf-8")[: size_mb * MB]
    path = folder / f"mixed-{size_mb}mb.txt"
    path.write_bytes(data)
    return path


def peak(command: list[str], cwd: Path | None = None) -> dict[str, Any]:
    """Run `command` to its end (output thrown away); its peak RSS, CPU and wall time. Measured by GNU time,
    a small C program: a child of this Python process would start with its parent's peak (the kernel carries
    the resident high-water mark across fork and exec), and this process holds the corpus."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        done = subprocess.run(
            [GNU_TIME, "-f", "%M %U %S %e", "-o", report.name, *command],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            check=False,
        )
        kilobytes, user, system, wall = report.read().split()[-4:]
    return {
        "peak_mb": round(int(kilobytes) / 1024, 1),
        "cpu_s": round(float(user) + float(system), 2),
        "wall_s": round(float(wall), 2),
        "exit_code": done.returncode,
    }


def script(name: str) -> str:
    beside = Path(sys.executable).with_name(name)
    if not beside.exists():
        sys.exit(f"{name} is not installed beside {sys.executable}")
    return str(beside)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1,10,50", help="input sizes in MB (default 1,10,50)")
    parser.add_argument(
        "--detect-secrets-max-mb", type=int, default=10, help="detect-secrets only up to this size (slow)"
    )
    args = parser.parse_args()
    sizes = [int(part) for part in args.sizes.split(",")]
    kronii, detect_secrets = script("kronii"), script("detect-secrets")
    if not os.access(GNU_TIME, os.X_OK):
        sys.exit(f"this benchmark needs GNU time at {GNU_TIME} (Debian's package `time`)")
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="kronii-bench-redact-memory-") as tmp:
        for size in sizes:
            path = corpus_file(Path(tmp), size)
            row = {
                "kronii_redact_cli": peak([kronii, "redact", str(path)]),
                "one_redact_call": peak([sys.executable, "-c", _WHOLE_TEXT_SCRIPT, str(path)]),
            }
            if size <= args.detect_secrets_max_mb:
                row["detect_secrets_cli"] = peak(
                    [detect_secrets, "scan", "--no-verify", path.name], cwd=Path(tmp)
                )
            rows[f"{size}mb"] = row
            print(f"{size} MB: {row}", flush=True)
    first, last = rows[f"{sizes[0]}mb"], rows[f"{sizes[-1]}mb"]
    figures = {
        "machine": machine(),
        "sizes_mb": sizes,
        "runs": rows,
        "cli_peak_growth": round(
            last["kronii_redact_cli"]["peak_mb"] / first["kronii_redact_cli"]["peak_mb"], 2
        ),
        "one_call_peak_growth": round(
            last["one_redact_call"]["peak_mb"] / first["one_redact_call"]["peak_mb"], 2
        ),
    }
    save("redaction_memory", figures)


if __name__ == "__main__":
    main()
