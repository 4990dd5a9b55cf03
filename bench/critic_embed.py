"""The critic's embedding throughput on one core (issue 15): all-MiniLM-L6-v2 int8 (onnxruntime, one
intra-op thread) with its tokenizer, over typical shell lines: command lines as people type them and the
error messages commands print, drawn with a fixed seed from fixed word lists.

- per line: embed([line]) one at a time, as the background queue does; p50/p95 wall per line, the CPU
  time per line (the thread's own clock) and lines/s = lines / wall;
- batched: the same lines 32 at a time (rows of equal token length share a run, no padding);
- through the EmbeddingQueue (cpu_share 1.0, then the default 0.5): enqueue-to-done latency p50/p95
  with all lines submitted at once (a burst), and the CPU share the process used, measured on its
  own clock; then lines arriving one every 50 ms (commands as typed, at a fast pace), at cpu_share 0.5:
  the enqueue-to-done latency a hint would wait for;
- the load: checksum plus onnxruntime session, once.

The process is pinned to one CPU (the first it may use) so "one core" is what is measured.

Usage: python bench/critic_embed.py [--lines 600] [--seed 15]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from typing import Any

from _common import machine, percentile, save, summary_ms
from kronii.critic.adapters.embedder import MiniLmEmbedder, default_tokenizer_path
from kronii.critic.adapters.embedding_queue import EmbeddingQueue
from kronii.critic.core.embedding_jobs import EmbeddingResult, JobOutcome
from tokenizers import Tokenizer

PROGRAMS = ("git", "kubectl", "docker", "npm", "cargo", "make", "pytest", "terraform", "ssh", "rsync", "pip")
SUBCOMMANDS = (
    "push",
    "pull",
    "status",
    "apply",
    "build",
    "run",
    "test",
    "logs",
    "install",
    "get pods",
    "exec -it",
)
ARGS = (
    "--force",
    "-n staging",
    "origin main",
    "--release",
    "-v",
    "./deploy.sh",
    "-rf build/",
    "--all",
    "-x",
    "-k db",
)
PATHS = (
    "/srv/app",
    "~/src/kronii",
    "/etc/nginx/nginx.conf",
    "./package.json",
    "build/output.log",
    "/var/lib/data",
)
ERRORS = (
    "{prog}: command not found",
    "fatal: not a git repository (or any of the parent directories): .git",
    "error: failed to push some refs to 'git@exemple.com:acme/{prog}.git'",
    "Permission denied (publickey).",
    "npm ERR! code ENOENT npm ERR! syscall open npm ERR! path {path}",
    "ModuleNotFoundError: No module named '{prog}'",
    'Error from server (NotFound): pods "{prog}-7d9f" not found',
    "docker: Error response from daemon: pull access denied for acme/{prog}, repository does not exist",
    "error[E0425]: cannot find value `{prog}` in this scope --> src/main.rs:{num}:{num}",
    "make: *** [Makefile:{num}: test] Error 2",
    "{path}: No such file or directory",
    "ssh: connect to host 10.0.0.{num} port 22: Connection refused",
    "Traceback (most recent call last): File \"{path}\", line {num}, in main KeyError: '{prog}'",
)


def shell_lines(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    lines: list[str] = []
    for _ in range(count):
        prog = rng.choice(PROGRAMS)
        if rng.random() < 0.5:
            words = [prog, rng.choice(SUBCOMMANDS), *rng.sample(ARGS, rng.randint(0, 3))]
            if rng.random() < 0.4:
                words.append(rng.choice(PATHS))
            lines.append(" ".join(words))
        else:
            lines.append(
                rng.choice(ERRORS).format(prog=prog, path=rng.choice(PATHS), num=rng.randint(1, 999))
            )
    return lines


def pin_to_one_cpu() -> int | None:
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


def per_line(embedder: MiniLmEmbedder, lines: list[str]) -> dict[str, Any]:
    walls: list[float] = []
    cpus: list[float] = []
    for line in lines:
        cpu_before, began = time.thread_time(), time.perf_counter()
        assert embedder.embed([line])
        walls.append(time.perf_counter() - began)
        cpus.append(time.thread_time() - cpu_before)
    return {
        "lines_per_s": round(len(lines) / sum(walls), 1),
        "wall_per_line": summary_ms(walls),
        "cpu_per_line_p50_ms": round(percentile(cpus, 0.5) * 1000, 2),
        "cpu_per_line_p95_ms": round(percentile(cpus, 0.95) * 1000, 2),
    }


def batched(embedder: MiniLmEmbedder, lines: list[str], rows: int = 32) -> dict[str, Any]:
    began = time.perf_counter()
    for start in range(0, len(lines), rows):
        assert embedder.embed(lines[start : start + rows])
    return {"rows": rows, "lines_per_s": round(len(lines) / (time.perf_counter() - began), 1)}


def through_queue(embedder: MiniLmEmbedder, lines: list[str], cpu_share: float) -> dict[str, Any]:
    latencies: list[float] = []
    queue = EmbeddingQueue(embedder, capacity=len(lines), job_timeout_s=60.0, cpu_share=cpu_share)

    def done(result: EmbeddingResult) -> None:
        if result.outcome is JobOutcome.EMBEDDED:
            latencies.append(result.latency_s)

    cpu_before, began = time.process_time(), time.perf_counter()
    queue.start()
    for index, line in enumerate(lines):
        queue.submit(str(index), line, done)
    assert queue.wait_idle(600)
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu_before
    stats = queue.stats()
    queue.stop()
    return {
        "cpu_share_setting": cpu_share,
        "embedded": stats.outcomes[JobOutcome.EMBEDDED],
        "lines_per_s": round(len(lines) / wall, 1),
        "enqueue_to_done": summary_ms(latencies),
        "cpu_share_measured": round(cpu / wall, 3),
        "throttled_s": round(stats.throttled_seconds, 2),
    }


def paced(embedder: MiniLmEmbedder, lines: list[str], interval_s: float) -> dict[str, Any]:
    """Lines arriving one every ``interval_s``, as commands do: the latency a hint would wait for."""
    latencies: list[float] = []
    queue = EmbeddingQueue(embedder, capacity=len(lines), cpu_share=0.5)
    queue.start()
    for index, line in enumerate(lines):
        queue.submit(str(index), line, lambda result: latencies.append(result.latency_s))
        time.sleep(interval_s)
    assert queue.wait_idle(60)
    stats = queue.stats()
    queue.stop()
    return {
        "interval_ms": interval_s * 1000,
        "cpu_share_setting": 0.5,
        "embedded": stats.outcomes[JobOutcome.EMBEDDED],
        "enqueue_to_done": summary_ms(latencies),
    }


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=int, default=600)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument(
        "--fast",
        action="store_true",
        help="the fast, memory-hungry session (KRONII_CRITIC_EMBED_LOW_MEMORY=false)",
    )
    args = parser.parse_args()
    cpu = pin_to_one_cpu()
    lines = shell_lines(args.lines, args.seed)
    rss_before = resident_mb()
    began = time.perf_counter()
    embedder = MiniLmEmbedder(low_memory=not args.fast)
    if not embedder.available:
        raise SystemExit(f"no model: {embedder.unavailable_reason}")
    load_s = time.perf_counter() - began
    embedder.embed(lines[:20])  # warm up: first runs allocate
    model_mb = round(resident_mb() - rss_before, 1)
    tokenizer = Tokenizer.from_file(str(default_tokenizer_path()))
    tokenizer.no_padding()
    tokens = [len(tokenizer.encode(line).ids) for line in lines]
    save(
        "critic_embed",
        {
            "machine": {**machine(), "pinned_cpu": cpu},
            "session": "fast" if args.fast else "low_memory",
            "model_resident_mb": model_mb,
            "lines": len(lines),
            "tokens_per_line": {"mean": round(statistics.fmean(tokens), 1), "max": max(tokens)},
            "load_ms": round(load_s * 1000, 1),
            "per_line": per_line(embedder, lines),
            "batched": batched(embedder, lines),
            "queue_full_core": through_queue(embedder, lines, 1.0),
            "queue_half_core": through_queue(embedder, lines[: len(lines) // 2], 0.5),
            "queue_paced": paced(embedder, lines[:100], 0.05),
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
