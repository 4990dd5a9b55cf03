"""Text redaction: kronii's engine against detect-secrets 1.5 on the same text, in the same run.

- throughput: a seeded, mixed corpus of --size-mb MB (10^6 bytes of UTF-8): the labelled documents of
  tests/data/redaction (markers stripped, values in place) among ordinary text: standard-library Python
  sources (test packages and site-packages left out), log lines, config files and shell history, generated
  here from fixed word lists. Processed chunk by chunk as a desktop would hand them over: one document, one
  config file, a few KB of log or history, a source file in pieces of at most 64 KB;
- latency: a 200-byte window title (several variants, one holding a vendor token) per event, p50/p99 in µs;
- detect-secrets over the same chunks, each written to a file and scanned the way `detect-secrets scan` scans
  a file (`detect_secrets.core.scan.scan_file` under `default_settings()`: all 27 plugins, default filters,
  lines one by one with their context). It runs at a few seconds per MB, so --detect-secrets-mb may limit it
  to the first chunks (in corpus order, which is already shuffled); its MB/s comes from that sample;
- recall on the secret labels (types of the `secret` category) of the labelled documents: kronii finds a label
  when a finding overlaps its span; detect-secrets when it reports anything on a line the label touches
  (line level, which favours detect-secrets). Precision per flagged line: a line is flagged by kronii when a
  secret-category finding touches it, by detect-secrets when it reports anything but its public-IP detector
  there (addresses are personal data, not secrets: leaving them out favours detect-secrets); the line is
  correct when a secret label touches it.

Usage: python bench/redaction_text.py [--size-mb 10] [--title-iterations 20000] [--detect-secrets-mb N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import sysconfig
import tempfile
import time
import uuid
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from _common import machine, percentile, save, summary_ms
from detect_secrets.core.scan import scan_file
from detect_secrets.settings import default_settings
from kronii.redaction import Category, Finding, RedactionContext, RedactionEngine, category_of

from tests.unit.redaction.test_redaction_corpus import CORPUS, Document, load_corpus

MB = 1_000_000
SEED = 20240517
TITLE_BYTES = 200
MAX_CHUNK = 64 * 1024
DS_IP_TYPE = "Public IP (ipv4)"
# Share of the corpus by bytes; Python sources take the rest.
SHARES = {"labelled": 0.04, "log": 0.18, "config": 0.08, "shell": 0.08}
EXTENSIONS = {"labelled": ".txt", "log": ".log", "shell": ".bash_history", "python": ".py"}
# code.txt is mostly Python, the config files mostly `key = value`; the rest (logs, chat, shell history,
# titles, documents) has no extension detect-secrets knows, like a real log or history file.
LABELLED_SUFFIXES = {"code.txt": ".py", "config.txt": ".conf", "more_config.txt": ".conf"}
# For an upper bound, detect-secrets also reads every labelled document under each of these names.
ALL_SUFFIXES = (".txt", ".py", ".conf", ".yaml", ".js")
SKIPPED_STDLIB_PARTS = {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__"}


@dataclass(frozen=True)
class Chunk:
    kind: str
    suffix: str
    text: str
    size: int  # UTF-8 bytes
    labelled: bool = False


@dataclass
class LineScores:
    """Recall over secret labels and precision over flagged lines, for one tool."""

    labels: Counter[str] = field(default_factory=Counter)
    hits: Counter[str] = field(default_factory=Counter)
    flagged_lines: int = 0
    correct_lines: int = 0
    misses: list[str] = field(default_factory=list)

    def figures(self) -> dict[str, Any]:
        total, found = sum(self.labels.values()), sum(self.hits.values())
        return {
            "secret_labels": total,
            "found": found,
            "recall": round(found / total, 4) if total else float("nan"),
            "flagged_lines": self.flagged_lines,
            "correct_lines": self.correct_lines,
            "line_precision": round(self.correct_lines / self.flagged_lines, 4)
            if self.flagged_lines
            else float("nan"),
            "recall_by_type": {kind: f"{self.hits[kind]}/{n}" for kind, n in sorted(self.labels.items())},
            "misses": self.misses,
        }


# --- the mixed corpus -------------------------------------------------------------------------------------


def _chunk(kind: str, text: str, suffix: str | None = None, *, labelled: bool = False) -> Chunk:
    return Chunk(kind, suffix or EXTENSIONS[kind], text, len(text.encode("utf-8")), labelled)


def _stdlib_sources(rng: random.Random) -> Iterable[Chunk]:
    root = Path(sysconfig.get_paths()["stdlib"])
    paths = sorted(p for p in root.rglob("*.py") if not SKIPPED_STDLIB_PARTS & set(p.relative_to(root).parts))
    while True:  # cycles if the corpus asks for more than the standard library holds
        rng.shuffle(paths)
        for path in paths:
            source = path.read_text(encoding="utf-8", errors="replace")
            piece: list[str] = []
            size = 0
            for line in source.splitlines(keepends=True):
                if size + len(line) > MAX_CHUNK and piece:
                    yield _chunk("python", "".join(piece))
                    piece, size = [], 0
                piece.append(line)
                size += len(line)
            if piece:
                yield _chunk("python", "".join(piece))


_SERVICES = ["http.server", "worker", "scheduler", "db.pool", "cache", "auth", "billing", "ingest", "nats"]
_PATHS = ["/api/v1/orders", "/api/v1/users", "/healthz", "/metrics", "/api/v1/login", "/static/app.js"]
_WORDS = [
    "request",
    "done",
    "queue",
    "batch",
    "retry",
    "flushed",
    "connected",
    "closed",
    "timeout",
    "checkpoint",
    "reload",
    "config",
    "synced",
    "compacted",
    "rotated",
    "handshake",
    "upstream",
    "downstream",
    "partition",
    "lease",
    "renewed",
    "snapshot",
    "index",
    "merge",
]
_LEVELS = ["INFO ", "INFO ", "INFO ", "DEBUG", "WARN ", "ERROR"]


def _log_line(rng: random.Random, at: float) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{rng.randrange(1000):03d}Z"
    level, service = rng.choice(_LEVELS), rng.choice(_SERVICES)
    style = rng.randrange(7)
    if style == 0:
        return (
            f"{stamp} {level} {service} request_id={uuid.UUID(int=rng.getrandbits(128), version=4)} "
            f"method={rng.choice(['GET', 'POST', 'PUT'])} path={rng.choice(_PATHS)} "
            f"status={rng.choice([200, 200, 201, 204, 304, 401, 404, 500])} duration_ms={rng.randrange(1, 900)}"
        )
    if style == 1:
        day = time.strftime("%d/%b/%Y:%H:%M:%S", time.gmtime(at))
        return (
            f'127.0.0.1 - - [{day} +0000] "GET {rng.choice(_PATHS)}?page={rng.randrange(1, 40)} HTTP/1.1" '
            f'{rng.choice([200, 200, 304, 404])} {rng.randrange(200, 90000)} "-" '
            f'"Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0"'
        )
    if style == 2:
        clock = time.strftime("%b %d %H:%M:%S", time.gmtime(at))
        unit = rng.choice(["nats.service", "postgresql.service", "docker.service", "kronii-sensor.service"])
        return f"{clock} devbox systemd[1]: {rng.choice(['Started', 'Stopped', 'Reloaded'])} {unit}."
    if style == 3:
        sha = f"{rng.getrandbits(160):040x}"
        return (
            f"{stamp} {level} deploy rollout of commit {sha} to staging: {rng.randrange(1, 6)}/5 pods ready"
        )
    if style == 4:
        return (
            f"[{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(at))},{rng.randrange(1000):03d}] {level} "
            f"urllib3.connectionpool: Starting new HTTPS connection ({rng.randrange(1, 4)}): "
            f"api.example.com:443"
        )
    if style == 5:
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(3, 9)))
        return f"{stamp} {level} {service} {words} n={rng.randrange(10000)} lag_ms={rng.randrange(500)}"
    pod = f"{service.replace('.', '-')}-{rng.getrandbits(36):09x}-{rng.getrandbits(20):05x}"
    return f"{stamp} {level} kubelet pod/{pod} ready after {rng.random() * 9:.2f}s"


def _logs(rng: random.Random) -> Iterable[Chunk]:
    at = 1_715_937_123.0
    while True:
        lines = []
        for _ in range(rng.randrange(30, 120)):
            at += rng.random() * 4
            lines.append(_log_line(rng, at))
        yield _chunk("log", "\n".join(lines) + "\n")


def _config_file(rng: random.Random) -> tuple[str, str]:
    name = rng.choice(["orders", "billing", "ingest", "search", "kronii"])
    port = rng.choice([5432, 6379, 4222, 8080, 9000])
    style = rng.randrange(4)
    if style == 0:
        return ".ini", (
            f"[server]\nhost = 0.0.0.0\nport = {port}\nworkers = {rng.randrange(1, 17)}\n"
            f"log_level = {rng.choice(['info', 'debug', 'warning'])}\n\n"
            f"[database]\nhost = db.internal\nport = 5432\nname = {name}\npool_size = {rng.randrange(5, 50)}\n"
            f"timeout_seconds = {rng.randrange(5, 60)}\n\n[cache]\nbackend = redis\nttl = {rng.randrange(60, 3600)}\n"
            f"token_ttl = 3600\n"
        )
    if style == 1:
        digest = f"{rng.getrandbits(256):064x}"
        return ".yaml", (
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  labels:\n    app: {name}\n"
            f"spec:\n  replicas: {rng.randrange(1, 6)}\n  template:\n    spec:\n      containers:\n"
            f"        - name: {name}\n          image: registry.example.com/{name}@sha256:{digest}\n"
            f"          ports:\n            - containerPort: {port}\n          env:\n"
            f"            - name: LOG_LEVEL\n              value: info\n      volumes:\n"
            f"        - name: tls\n          secret:\n            secretName: {name}-tls\n"
        )
    if style == 2:
        return ".toml", (
            f'[project]\nname = "{name}"\nversion = "{rng.randrange(4)}.{rng.randrange(20)}.{rng.randrange(9)}"\n'
            f'requires-python = ">=3.11"\ndependencies = [\n  "httpx>=0.27",\n  "pydantic>=2.7",\n'
            f'  "nats-py>=2.7",\n]\n\n[tool.ruff]\nline-length = {rng.choice([88, 100, 110])}\n'
        )
    return ".env", (
        f"APP_NAME={name}\nLOG_LEVEL=info\nHTTP_PORT={port}\nFEATURE_SEARCH={rng.choice(['true', 'false'])}\n"
        f"CACHE_TTL={rng.randrange(60, 900)}\nDATABASE_HOST=db.internal\nDATABASE_NAME={name}\n"
        f"OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4317\n"
    )


def _configs(rng: random.Random) -> Iterable[Chunk]:
    while True:
        suffix, text = _config_file(rng)
        yield _chunk("config", text, suffix)


_COMMANDS = [
    "git status",
    "git diff --stat",
    "git log --oneline -n 20",
    "git pull --rebase",
    "ls -la",
    "cd ~/src/kronii",
    "make test",
    "uv sync",
    "docker compose up -d",
    "docker ps --format '{{.Names}}'",
    "htop",
    "kubectl -n staging get pods",
    "journalctl -u nats --since '10 min ago'",
    "curl -s http://localhost:8080/healthz",
    "pytest -q tests/unit -k redaction",
    "vim README.md",
]


def _shell_line(rng: random.Random) -> str:
    roll = rng.randrange(6)
    if roll == 0:
        return f'git commit -m "{rng.choice(_WORDS)}: handle {rng.choice(_WORDS)} in {rng.choice(_SERVICES)}"'
    if roll == 1:
        return f"git checkout -b feature/{rng.choice(_WORDS)}-{rng.randrange(1000)}"
    if roll == 2:
        return f"grep -rn {rng.choice(_WORDS)} src/ | head -n {rng.randrange(5, 50)}"
    return rng.choice(_COMMANDS)


def _shell(rng: random.Random) -> Iterable[Chunk]:
    at = 1_715_937_123
    while True:
        lines = []
        for _ in range(rng.randrange(60, 200)):
            at += rng.randrange(1, 300)
            line = _shell_line(rng)
            lines.append(f": {at}:0;{line}" if rng.random() < 0.5 else line)
        yield _chunk("shell", "\n".join(lines) + "\n")


def labelled_suffix(document: Document) -> str:
    """The file name detect-secrets sees for a labelled document: it picks its keyword rules by extension."""
    source = document.source.split("#")[0]
    return LABELLED_SUFFIXES.get(source, ".txt")


def _labelled(rng: random.Random, documents: list[Document]) -> Iterable[Chunk]:
    order = list(documents)
    while True:
        rng.shuffle(order)
        for document in order:
            yield _chunk("labelled", document.text, labelled_suffix(document), labelled=True)


def build_corpus(size: int, documents: list[Document]) -> list[Chunk]:
    rng = random.Random(SEED)
    streams = {
        "labelled": iter(_labelled(random.Random(rng.random()), documents)),
        "log": iter(_logs(random.Random(rng.random()))),
        "config": iter(_configs(random.Random(rng.random()))),
        "shell": iter(_shell(random.Random(rng.random()))),
        "python": iter(_stdlib_sources(random.Random(rng.random()))),
    }
    quotas = {kind: size * share for kind, share in SHARES.items()}
    quotas["python"] = size - sum(quotas.values())
    chunks: list[Chunk] = []
    for kind, quota in quotas.items():
        taken = 0
        while taken < quota:
            chunk = next(streams[kind])
            chunks.append(chunk)
            taken += chunk.size
    rng.shuffle(chunks)
    return chunks


# --- scoring helpers --------------------------------------------------------------------------------------


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(i + 1 for i, char in enumerate(text) if char == "\n")
    return starts


def _lines_of(starts: list[int], start: int, end: int) -> range:
    """1-based numbers of the lines that characters [start, end) touch."""
    first = bisect_right(starts, start)
    last = bisect_right(starts, max(start, end - 1))
    return range(first, last + 1)


def _secret_findings(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if category_of(f.type) is Category.SECRET]


def _kronii_lines(text: str, findings: Sequence[Finding]) -> set[int]:
    starts = _line_starts(text)
    return {n for f in _secret_findings(findings) for n in _lines_of(starts, f.start, f.end)}


def _score_documents(
    documents: list[Document],
    kronii: list[tuple[Finding, ...]],
    ds: list[dict[int, set[str]]],
) -> tuple[LineScores, LineScores, int]:
    k_scores, d_scores = LineScores(), LineScores()
    covered = 0
    for document, findings, reports in zip(documents, kronii, ds, strict=True):
        starts = _line_starts(document.text)
        secret_lines: set[int] = set()
        ds_flagged = {n for n, types in reports.items() if types - {DS_IP_TYPE}}
        for label in document.labels:
            if category_of(label.type) is not Category.SECRET:
                continue
            lines = _lines_of(starts, label.start, label.end)
            secret_lines.update(lines)
            where = f"{document.source} {label.type}"
            for scores, hit in (
                (k_scores, any(f.start < label.end and label.start < f.end for f in findings)),
                (d_scores, any(n in reports for n in lines)),
            ):
                scores.labels[label.type] += 1
                if hit:
                    scores.hits[label.type] += 1
                else:
                    scores.misses.append(where)
            covered += any(f.start <= label.start and label.end <= f.end for f in findings)
        for scores, flagged in ((k_scores, _kronii_lines(document.text, findings)), (d_scores, ds_flagged)):
            scores.flagged_lines += len(flagged)
            scores.correct_lines += len(flagged & secret_lines)
    return k_scores, d_scores, covered


