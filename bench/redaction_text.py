"""Text redaction: kronii's engine against detect-secrets 1.5 on the same text, in the same run.

- throughput: a seeded, mixed corpus of --size-mb MB (10^6 bytes of UTF-8): the labelled documents of
  tests/data/redaction (markers stripped, values in place) among ordinary text: standard-library Python
  sources (test packages and site-packages left out), log lines, config files and shell history, generated
  here from fixed word lists. Processed chunk by chunk as a desktop would hand them over: one document, one
  config file, a few KB of log or history, a source file in pieces of at most 64 KB;
- latency: a 200-byte window title (several variants, one holding a vendor token) per event, p50/p99 in µs;
- detect-secrets over the same chunks, each written to a file and scanned the way `detect-secrets scan` scans
  a file (`detect_secrets.core.scan.scan_file` under `default_settings()`: all 27 plugins, default filters,
  lines one by one with their context). By default it scans the whole corpus (about 90 s for 10 MB on a
  2-core machine); --detect-secrets-mb N limits it to the first chunks up to N MB (corpus order is already
  shuffled), and its MB/s then comes from that sample (kronii's MB/s on the same chunks is given too). The
  file names carry the extension detect-secrets picks its keyword rules by (.py, .log, .yaml, ...);
- recall on the secret labels (types of the `secret` category) of the labelled documents: kronii finds a label
  when a finding overlaps its span; detect-secrets when it reports anything on a line the label touches
  (line level, which favours detect-secrets). Precision per flagged line: a line is flagged by kronii when a
  secret-category finding touches it, by detect-secrets when it reports anything but its public-IP detector
  there (addresses are personal data, not secrets: leaving them out favours detect-secrets); the line is
  correct when a secret label touches it. detect-secrets reads code.txt's documents as .py, the config files'
  as .conf, the rest as .txt; as an upper bound it also reads each document under five names and the union of
  its reports counts.

- secret-dense text (--dense-mb MB, default 2): lines of the labelled documents, four in five of them holding
  a label (the rest their unlabelled lines), drawn with a fixed seed, as one file. kronii redacts it in process
  (one `redact` call, as the CLI makes) and as the CLI, whole process (`kronii redact FILE`, start-up included),
  and detect-secrets scans the same file as its CLI, `detect-secrets scan --no-verify FILE` (its default mode
  waits on network verification, not a fair comparison offline), whole process too. Also the start-up cost:
  `kronii redact` of one line on standard input, whole process, median of --cli-runs runs.

Wall and CPU seconds are both reported: on a shared machine the CPU figures are the steadier ones.

- against a revision (--against REV): the engine of git revision REV and this checkout's, each in a child
  process on the same chunks, best of three passes: MB per CPU second and the CPU ratio (bench/_redaction_against.py).
- the compiled scan (--plain-too): the same chunks, in this process, right after, by an engine with the compiled
  (hyperscan) scan off, `RedactionEngine(compiled_scan=False)`; its MB per CPU second, the CPU ratio, and whether
  both engines found the same (type, start, end, detector) in every chunk.

Usage: python bench/redaction_text.py [--size-mb 10] [--title-iterations 20000] [--detect-secrets-mb N]
       [--dense-mb 2] [--cli-runs 5] [--dense-only] [--against REV] [--plain-too]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
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
from _redaction_against import throughput_against
from kronii.redaction import (
    Category,
    Finding,
    Level,
    RedactionContext,
    RedactionEngine,
    RedactionResult,
    category_of,
)
from kronii.redaction.detectors import ScanText

from tests.unit.redaction.test_redaction_corpus import Document, load_corpus

try:
    from detect_secrets.__version__ import VERSION as DETECT_SECRETS_VERSION
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings
except ImportError:  # a plain `uv sync` removes the bench group's packages again
    sys.exit("detect-secrets is not installed: uv sync --all-packages --group bench")

MB = 1_000_000
SEED = 20240517
TITLE_BYTES = 200
MAX_CHUNK = 64 * 1024
DEFAULT_DS_MB = 0.0  # the whole corpus: about 90 s for 10 MB here
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


def _score(
    documents: list[Document],
    hit: Callable[[int, int, int, range], bool],
    flagged: Callable[[int, list[int]], set[int]],
) -> LineScores:
    """hit(document index, label start, label end, label lines); flagged(document index, line starts)."""
    scores = LineScores()
    for index, document in enumerate(documents):
        starts = _line_starts(document.text)
        secret_lines: set[int] = set()
        for label in document.labels:
            if category_of(label.type) is not Category.SECRET:
                continue
            lines = _lines_of(starts, label.start, label.end)
            secret_lines.update(lines)
            scores.labels[label.type] += 1
            if hit(index, label.start, label.end, lines):
                scores.hits[label.type] += 1
            else:
                scores.misses.append(f"{document.source} {label.type}")
        lines_flagged = flagged(index, starts)
        scores.flagged_lines += len(lines_flagged)
        scores.correct_lines += len(lines_flagged & secret_lines)
    return scores


def score_kronii(documents: list[Document], findings: list[tuple[Finding, ...]]) -> tuple[LineScores, int]:
    def hit(index: int, start: int, end: int, lines: range) -> bool:
        return any(f.start < end and start < f.end for f in findings[index])

    def flagged(index: int, starts: list[int]) -> set[int]:
        return {n for f in _secret_findings(findings[index]) for n in _lines_of(starts, f.start, f.end)}

    covered = sum(
        any(f.start <= label.start and label.end <= f.end for f in found)
        for document, found in zip(documents, findings, strict=True)
        for label in document.labels
        if category_of(label.type) is Category.SECRET
    )
    return _score(documents, hit, flagged), covered


def score_detect_secrets(documents: list[Document], reports: list[dict[int, set[str]]]) -> LineScores:
    def hit(index: int, start: int, end: int, lines: range) -> bool:
        return any(n in reports[index] for n in lines)

    def flagged(index: int, starts: list[int]) -> set[int]:
        return {n for n, types in reports[index].items() if types - {DS_IP_TYPE}}

    return _score(documents, hit, flagged)


# --- the runs ---------------------------------------------------------------------------------------------


@dataclass
class Timing:
    wall: float  # seconds for the whole loop
    cpu: float  # this process's CPU seconds for it (the machine may be shared)
    per_chunk: list[float]  # wall seconds per chunk

    def mbps(self, size: int, *, cpu: bool = False) -> float:
        seconds = self.cpu if cpu else self.wall
        return round(size / MB / seconds, 3) if seconds > 0 else float("inf")


def _timed(items: Sequence[Any], work: Callable[[Any], Any]) -> tuple[Timing, list[Any]]:
    wall, cpu = time.perf_counter, time.process_time
    per_chunk: list[float] = []
    results = []
    started, started_cpu = wall(), cpu()
    for item in items:
        before = wall()
        results.append(work(item))
        per_chunk.append(wall() - before)
    return Timing(wall() - started, cpu() - started_cpu, per_chunk), results


def run_kronii(engine: RedactionEngine, chunks: list[Chunk]) -> tuple[Timing, list[RedactionResult]]:
    warm = RedactionContext.random()
    # The compiled scan's databases, compiled as the first long text would (about 0.4 s); an older engine has none.
    _ = getattr(engine, "compiled_scan", False)
    for chunk in chunks[:5]:
        engine.redact(chunk.text, context=warm)  # compiled patterns, phone metadata
    context = RedactionContext.random()  # one per run, as a caller keeps one per conversation
    return _timed(chunks, lambda chunk: engine.redact(chunk.text, context=context))


def _ds_reports(path: Path) -> dict[int, set[str]]:
    reports: dict[int, set[str]] = {}
    for secret in scan_file(str(path)):
        reports.setdefault(secret.line_number, set()).add(secret.type)
    return reports


def run_detect_secrets(
    files: Sequence[tuple[str, str]], workdir: Path
) -> tuple[Timing, list[dict[int, set[str]]]]:
    """Scan each (suffix, text) as its own file; time the scans, not the writing."""
    workdir.mkdir()
    paths = []
    for number, (suffix, text) in enumerate(files):
        path = workdir / f"{number:06d}{suffix}"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    with default_settings():
        _ds_reports(paths[0])  # warm-up: plugin classes and regexes
        return _timed(paths, _ds_reports)


def _titles(documents: list[Document]) -> list[tuple[str, str]]:
    token = next(
        d.text[label.start : label.end]
        for d in documents
        for label in d.labels
        if label.type == "GITHUB_TOKEN"
    )
    raw = [
        (
            "code",
            "main.py - kronii - Visual Studio Code — alice@exemple.com — src/kronii/redaction/_engine.py "
            "— Ln 142, Col 17 — Spaces: 4 — UTF-8 — LF — Python 3.11.7 64-bit ('.venv': venv)",
        ),
        (
            "google-chrome",
            "Inbox (3) - alice.smith@exemple.com - Gmail - Google Chrome — Re: deploy window for orders-api "
            "on Thursday — 2 new messages",
        ),
        (
            "org.gnome.Terminal",
            "deploy@bastion: ~/src/kronii — ssh deploy@203.0.113.7 -p 2222 — tmux: session 0, window 2 "
            "(pytest -q tests/unit -k redaction)",
        ),
        (
            "slack",
            "#platform-oncall | Acme Corp - Slack — Bob Chen: can you rotate the staging key before 5pm? "
            "call me on +44 20 7946 0958 — thread (12 replies)",
        ),
        (
            "org.gnome.Terminal",
            f"alice@devbox: ~/src/kronii — export GITHUB_TOKEN={token} && gh pr create --fill",
        ),
        (
            "libreoffice-writer",
            "Q3 roadmap.docx - LibreOffice Writer — last edited by carol@exemple.org — Page 3 of 17 — "
            "Word count 4,812 — English (USA)",
        ),
        (
            "firefox",
            "localhost:8080/admin/users?page=2&sort=created_at — Grafana: API latency p99 (last 6 hours) — "
            "Mozilla Firefox Private Browsing",
        ),
    ]
    pad = " — Ln 1, Col 1 — UTF-8 — main ✓ 0↓ 0↑ — 3 problems"
    titles = []
    for app, title in raw:
        while len(title.encode("utf-8")) < TITLE_BYTES:
            title += pad
        title = title.encode("utf-8")[:TITLE_BYTES].decode("utf-8", "ignore")
        title += " " * (TITLE_BYTES - len(title.encode("utf-8")))
        titles.append((app, title))
    return titles


def run_titles(
    engine: RedactionEngine, titles: list[tuple[str, str]], iterations: int
) -> tuple[list[float], list[float], dict[str, str]]:
    """Microseconds per event (wall, and this thread's CPU time), cycling through the variants with their app ids, one context for the run."""
    context = RedactionContext.random()
    levels = {}
    for index, (app, title) in enumerate(titles):
        levels[f"{index}:{app}"] = str(engine.redact(title, context=context, app=app).level)
    for n in range(200):
        app, title = titles[n % len(titles)]
        engine.redact(title, context=context, app=app)
    clock, cpu = time.perf_counter_ns, time.thread_time_ns
    times: list[float] = []
    cpu_times: list[float] = []
    for n in range(iterations):
        app, title = titles[n % len(titles)]
        before, before_cpu = clock(), cpu()
        engine.redact(title, context=context, app=app)
        after_cpu, after = cpu(), clock()
        times.append((after - before) / 1000)
        cpu_times.append((after_cpu - before_cpu) / 1000)
    return times, cpu_times, levels


def _noise(chunks: list[Chunk], flagged: Callable[[int], int], count: int) -> dict[str, float]:
    """Lines flagged as secrets in the unlabelled filler (stdlib, logs, configs, history) of the first chunks.

    The filler has no planted secrets; these lines were not checked one by one, so they are an indication of
    noise, not a false-positive rate."""
    filler = [i for i in range(count) if not chunks[i].labelled]
    size = sum(chunks[i].size for i in filler)
    lines = sum(flagged(i) for i in filler)
    return {"filler_mb": round(size / MB, 3), "flagged_lines": lines, "per_mb": round(lines / (size / MB), 2)}


def _by_kind(chunks: list[Chunk], timing: Timing) -> dict[str, float]:
    """MB/s per kind of text, from the per-chunk wall times."""
    sizes: Counter[str] = Counter()
    seconds: dict[str, float] = {}
    for chunk, spent in zip(chunks, timing.per_chunk, strict=False):
        sizes[chunk.kind] += chunk.size
        seconds[chunk.kind] = seconds.get(chunk.kind, 0.0) + spent
    return {kind: round(sizes[kind] / MB / seconds[kind], 3) for kind in sorted(sizes) if seconds[kind] > 0}


# --- secret-dense text, in process and as whole processes ---------------------------------------------------

DENSE_SEED = 20261124
DENSE_LABELLED_SHARE = 0.8


def dense_text(documents: list[Document], size: int) -> str:
    """About `size` bytes of lines from the labelled documents, most of them holding a label."""
    labelled: list[str] = []
    plain: list[str] = []
    for document in documents:
        position = 0
        for line in document.text.split("\n"):
            end = position + len(line)
            touched = any(label.start < end and position < label.end for label in document.labels)
            (labelled if touched else plain).append(line)
            position = end + 1
    rng = random.Random(DENSE_SEED)
    lines: list[str] = []
    taken = 0
    while taken < size:
        line = rng.choice(labelled if rng.random() < DENSE_LABELLED_SHARE else plain)
        lines.append(line)
        taken += len(line.encode("utf-8")) + 1
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class ProcessRun:
    wall: float
    cpu: float  # user + system seconds of the finished child
    exit_code: int


def _whole_process(command: Sequence[str], *, stdin: bytes = b"", cwd: Path | None = None) -> ProcessRun:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return ProcessRun(wall, cpu, done.returncode)


def _median_run(runs: list[ProcessRun]) -> dict[str, Any]:
    return {
        "runs": len(runs),
        "wall_s": round(statistics.median(r.wall for r in runs), 3),
        "cpu_s": round(statistics.median(r.cpu for r in runs), 3),
        "wall_min_s": round(min(r.wall for r in runs), 3),
        "wall_max_s": round(max(r.wall for r in runs), 3),
        "exit_codes": sorted({r.exit_code for r in runs}),
    }


def _script(name: str) -> str:
    """A console script of this environment (beside its Python), else the one on PATH."""
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        sys.exit(f"{name} is not installed in this environment")
    return found


def run_dense(
    engine: RedactionEngine, documents: list[Document], size_mb: float, runs: int
) -> dict[str, Any]:
    """Secret-dense text: kronii in process and as the CLI, detect-secrets' CLI, and `kronii redact` start-up."""
    text = dense_text(documents, int(size_mb * MB))
    size = len(text.encode("utf-8"))
    kronii, detect_secrets = _script("kronii"), _script("detect-secrets")
    engine.redact(text[:20000])  # warm-up: the regex caches, lazily built tables
    in_process: list[tuple[float, float]] = []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        result = engine.redact(text)
        in_process.append((time.perf_counter() - started, time.process_time() - started_cpu))
    lines = text.count("\n")
    with tempfile.TemporaryDirectory(prefix="kronii-bench-dense-") as tmp:
        path = Path(tmp) / "dense.txt"
        path.write_text(text, encoding="utf-8")
        cli = [_whole_process([kronii, "redact", str(path)]) for _ in range(runs)]
        one_line = [_whole_process([kronii, "redact"], stdin=b"x\n") for _ in range(max(runs, 5))]
        # detect-secrets is slow: one run, in a directory holding only the file (no git repository around).
        ds = _whole_process([detect_secrets, "scan", "--no-verify", path.name], cwd=Path(tmp))
    wall = statistics.median(w for w, _ in in_process)
    cpu = statistics.median(c for _, c in in_process)
    cli_figures, ds_figures = _median_run(cli), _median_run([ds])
    ds_mbps = size / MB / ds.wall

    def mbps(seconds: float) -> float:
        return round(size / MB / seconds, 3)

    return {
        "bytes": size,
        "lines": lines,
        "seed": DENSE_SEED,
        "lines_with_a_finding": round(_lines_touched(text, result.findings) / lines, 3),
        "detector_ms": _detector_ms(engine, text),
        "findings": len(result.findings),
        "level": str(result.level),
        "kronii_in_process": {
            "wall_s": round(wall, 3),
            "cpu_s": round(cpu, 3),
            "mb_per_s": mbps(wall),
            "mb_per_cpu_s": mbps(cpu),
            "runs": runs,
        },
        "kronii_cli": {
            **cli_figures,
            "mb_per_s": mbps(cli_figures["wall_s"]),
            "command": "kronii redact FILE",
        },
        "kronii_cli_one_line": {**_median_run(one_line), "command": "echo x | kronii redact"},
        "detect_secrets_cli": {
            **ds_figures,
            "mb_per_s": round(ds_mbps, 4),
            "command": "detect-secrets scan --no-verify FILE",
        },
        "ratio_in_process_vs_detect_secrets": round(mbps(wall) / ds_mbps, 1),
        "ratio_cli_vs_detect_secrets": round(mbps(cli_figures["wall_s"]) / ds_mbps, 1),
    }


def _lines_touched(text: str, findings: Sequence[Finding]) -> int:
    starts = [0, *(i + 1 for i, char in enumerate(text) if char == "\n")]
    touched: set[int] = set()
    for finding in findings:
        touched.update(range(bisect_right(starts, finding.start) - 1, bisect_right(starts, finding.end - 1)))
    return len(touched)


def _detector_ms(engine: RedactionEngine, text: str) -> dict[str, float]:
    """Each detector's own time on the whole text, slowest first: where the engine's time goes."""
    scan = ScanText(text)
    _ = scan.lower
    spent: dict[str, float] = {}
    for detector in engine.detectors:
        started = time.perf_counter()
        for _candidate in detector.detect(scan):
            pass
        spent[detector.name] = round((time.perf_counter() - started) * 1000, 1)
    return dict(sorted(spent.items(), key=lambda item: -item[1]))


def _print_dense(dense: dict[str, Any]) -> None:
    k, c, one, d = (
        dense[key] for key in ("kronii_in_process", "kronii_cli", "kronii_cli_one_line", "detect_secrets_cli")
    )
    print(
        f"secret-dense: {dense['bytes'] / MB:.2f} MB, {dense['lines_with_a_finding']:.0%} of lines with a finding | "
        f"kronii in process {k['mb_per_s']} MB/s (CPU {k['mb_per_cpu_s']}) | kronii CLI {c['mb_per_s']} MB/s "
        f"(whole process {c['wall_s']} s) | detect-secrets --no-verify {d['mb_per_s']} MB/s ({d['wall_s']} s) | "
        f"ratio in process {dense['ratio_in_process_vs_detect_secrets']}x, CLI "
        f"{dense['ratio_cli_vs_detect_secrets']}x | `echo x | kronii redact` {one['wall_s']} s wall, "
        f"{one['cpu_s']} s CPU",
        flush=True,
    )


def _plain_too(chunks: list[Chunk], timing: Timing, results: list[RedactionResult]) -> dict[str, Any]:
    """The same chunks by an engine without the compiled scan: its speed, and whether it found the same."""
    total = sum(chunk.size for chunk in chunks)
    plain_timing, plain_results = run_kronii(RedactionEngine(compiled_scan=False), chunks)
    differing = sum(
        1
        for one, other in zip(results, plain_results, strict=True)
        if [(f.type, f.start, f.end, f.detector) for f in one.findings]
        != [(f.type, f.start, f.end, f.detector) for f in other.findings]
    )
    figures = {
        "mb_per_cpu_s": plain_timing.mbps(total, cpu=True),
        "cpu_seconds": round(plain_timing.cpu, 3),
        "cpu_ratio_plain_over_compiled": round(plain_timing.cpu / timing.cpu, 2),
        "chunks_with_other_findings": differing,
    }
    print(
        f"without the compiled scan: CPU {plain_timing.cpu:.2f} s = {figures['mb_per_cpu_s']} MB/s, "
        f"x {figures['cpu_ratio_plain_over_compiled']} the compiled scan's CPU; chunks with other findings: "
        f"{differing}",
        flush=True,
    )
    return figures


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size-mb", type=float, default=10.0, help="size of the mixed corpus (default 10)")
    parser.add_argument(
        "--title-iterations", type=int, default=20000, help="window-title events (default 20000)"
    )
    parser.add_argument(
        "--detect-secrets-mb",
        type=float,
        default=DEFAULT_DS_MB,
        help="detect-secrets scans only the first chunks up to this many MB (default 0: the whole corpus)",
    )
    parser.add_argument(
        "--dense-mb", type=float, default=2.0, help="size of the secret-dense text (default 2)"
    )
    parser.add_argument("--cli-runs", type=int, default=3, help="runs of each kronii measurement (default 3)")
    parser.add_argument("--dense-only", action="store_true", help="only the secret-dense measurements")
    parser.add_argument(
        "--against",
        metavar="REV",
        help="also run the engine of git revision REV on the same chunks (child processes, best of 3) and "
        "give the CPU ratio",
    )
    parser.add_argument(
        "--plain-too",
        action="store_true",
        help="also redact the same chunks with the compiled scan off (in process) and give the CPU ratio",
    )
    args = parser.parse_args()
    size = int(args.size_mb * MB)
    load_before = _load()

    documents = load_corpus()
    dense = run_dense(RedactionEngine(), documents, args.dense_mb, args.cli_runs)
    _print_dense(dense)
    if args.dense_only:
        save(
            "redaction_text_dense",
            {
                "machine": {**machine(), "load_average_before": load_before, "load_average_after": _load()},
                "secret_dense": dense,
            },
        )
        return 0
    built = time.perf_counter()
    chunks = build_corpus(size, documents)
    build_seconds = time.perf_counter() - built
    total = sum(c.size for c in chunks)
    by_kind: Counter[str] = Counter()
    for chunk in chunks:
        by_kind[chunk.kind] += chunk.size
    print(
        f"corpus: {total / MB:.2f} MB in {len(chunks)} chunks ("
        + ", ".join(f"{kind} {by_kind[kind] / total:.0%}" for kind in sorted(by_kind))
        + f"), built in {build_seconds:.1f} s; load average {load_before}",
        flush=True,
    )

    engine = RedactionEngine()
    k_timing, k_results = run_kronii(engine, chunks)
    errors = sum(1 for r in k_results if r.level is Level.RED and not r.findings)
    print(
        f"kronii: {total / MB:.2f} MB in {k_timing.wall:.2f} s = {k_timing.mbps(total)} MB/s "
        f"(CPU {k_timing.cpu:.2f} s = {k_timing.mbps(total, cpu=True)} MB/s); engine errors {errors}",
        flush=True,
    )

    plain = _plain_too(chunks, k_timing, k_results) if args.plain_too else None

    against = None
    if args.against:
        against = throughput_against(args.against, [chunk.text for chunk in chunks])
        print(
            f"against {args.against}: now {against['now_mb_per_cpu_s']} MB per CPU s "
            f"({against['now_detectors']} detectors), then {against['then_mb_per_cpu_s']} "
            f"({against['then_detectors']}): CPU x {against['cpu_ratio_now_over_then']}",
            flush=True,
        )

    title_times, title_cpu, title_levels = run_titles(engine, _titles(documents), args.title_iterations)
    title = {
        "bytes": TITLE_BYTES,
        "variants": title_levels,
        "iterations": len(title_times),
        "p50_us": round(percentile(title_times, 0.50), 1),
        "p99_us": round(percentile(title_times, 0.99), 1),
        "max_us": round(max(title_times), 1),
        "mean_us": round(statistics.fmean(title_times), 1),
        "cpu_p50_us": round(percentile(title_cpu, 0.50), 1),
        "cpu_p99_us": round(percentile(title_cpu, 0.99), 1),
    }
    print(
        f"window title ({TITLE_BYTES} B, {len(title_levels)} variants, {len(title_times)} events): "
        f"p50 {title['p50_us']} µs, p99 {title['p99_us']} µs, max {title['max_us']} µs "
        f"(CPU p50 {title['cpu_p50_us']} µs, p99 {title['cpu_p99_us']} µs)",
        flush=True,
    )

    sample = len(chunks)
    if args.detect_secrets_mb > 0:
        limit, taken, sample = args.detect_secrets_mb * MB, 0, 0
        while sample < len(chunks) and taken < limit:
            taken += chunks[sample].size
            sample += 1
    sample_size = sum(c.size for c in chunks[:sample])
    whole = sample == len(chunks)
    print(f"detect-secrets: scanning {sample_size / MB:.2f} MB in {sample} files ...", flush=True)
    with tempfile.TemporaryDirectory(prefix="kronii-bench-ds-") as tmp:
        d_timing, d_reports = run_detect_secrets(
            [(c.suffix, c.text) for c in chunks[:sample]], Path(tmp) / "c"
        )
        d_labelled = run_detect_secrets(
            [(labelled_suffix(d), d.text) for d in documents], Path(tmp) / "labelled"
        )[1]
        d_any_suffix = [
            run_detect_secrets([(suffix, d.text) for d in documents], Path(tmp) / f"all{suffix}")[1]
            for suffix in ALL_SUFFIXES
        ]
    k_sample = Timing(sum(k_timing.per_chunk[:sample]), float("nan"), k_timing.per_chunk[:sample])
    print(
        f"detect-secrets: {sample_size / MB:.2f} MB in {d_timing.wall:.1f} s = {d_timing.mbps(sample_size)} MB/s "
        f"(CPU {d_timing.cpu:.1f} s = {d_timing.mbps(sample_size, cpu=True)} MB/s); kronii on the same "
        f"chunks: {k_sample.mbps(sample_size)} MB/s",
        flush=True,
    )

    k_scores, covered = score_kronii(documents, [engine.redact(d.text).findings for d in documents])
    d_scores = score_detect_secrets(documents, d_labelled)
    union: list[dict[int, set[str]]] = [{} for _ in documents]
    for run in d_any_suffix:
        for merged, reports in zip(union, run, strict=True):
            for line, types in reports.items():
                merged.setdefault(line, set()).update(types)
    d_best = score_detect_secrets(documents, union)

    k_mbps, d_mbps = k_timing.mbps(total), d_timing.mbps(sample_size)
    ratio = round(k_mbps / d_mbps, 1)
    ratio_same = round(k_sample.mbps(sample_size) / d_mbps, 1)
    ratio_cpu = round(k_timing.mbps(total, cpu=True) / d_timing.mbps(sample_size, cpu=True), 1)
    k_fig, d_fig, best_fig = k_scores.figures(), d_scores.figures(), d_best.figures()

    def kronii_lines(i: int) -> int:
        return len(_kronii_lines(chunks[i].text, k_results[i].findings))

    figures: dict[str, Any] = {
        "machine": {**machine(), "load_average_before": load_before, "load_average_after": _load()},
        "versions": {
            "kronii-redaction": version("kronii-redaction"),
            "detect-secrets": DETECT_SECRETS_VERSION,
        },
        "corpus": {
            "bytes": total,
            "mb": round(total / MB, 3),
            "chunks": len(chunks),
            "seed": SEED,
            "share_by_kind": {kind: round(by_kind[kind] / total, 4) for kind in sorted(by_kind)},
            "labelled_documents": len(documents),
            "labelled_source": "tests/data/redaction/corpus",
            "stdlib": sysconfig.get_paths()["stdlib"],
            "max_chunk_bytes": MAX_CHUNK,
        },
        "kronii": {
            "seconds": round(k_timing.wall, 3),
            "cpu_seconds": round(k_timing.cpu, 3),
            "mb_per_s": k_mbps,
            "mb_per_cpu_s": k_timing.mbps(total, cpu=True),
            "mb_per_s_by_kind": _by_kind(chunks, k_timing),
            "per_chunk": summary_ms(k_timing.per_chunk),
            "engine_errors": errors,
            "levels": dict(Counter(str(r.level) for r in k_results)),
            "secret_lines_in_filler": _noise(chunks, kronii_lines, len(chunks)),
            "compiled_scan": getattr(engine, "compiled_scan", False),
            "without_compiled_scan": plain,
        },
        "detect_secrets": {
            "how": "detect_secrets.core.scan.scan_file on each chunk written to a file, under "
            "detect_secrets.settings.default_settings() (all plugins, default filters), as `detect-secrets scan`",
            "whole_corpus": whole,
            "sample_bytes": sample_size,
            "sample_mb": round(sample_size / MB, 3),
            "sample_files": sample,
            "seconds": round(d_timing.wall, 3),
            "cpu_seconds": round(d_timing.cpu, 3),
            "mb_per_s": d_mbps,
            "mb_per_cpu_s": d_timing.mbps(sample_size, cpu=True),
            "mb_per_s_by_kind": _by_kind(chunks, d_timing),
            "estimated_seconds_for_whole_corpus": round(total / MB / d_mbps, 1),
            "per_chunk": summary_ms(d_timing.per_chunk),
            "kronii_mb_per_s_on_same_chunks": k_sample.mbps(sample_size),
            "secret_lines_in_filler": _noise(
                chunks, lambda i: sum(1 for t in d_reports[i].values() if t - {DS_IP_TYPE}), sample
            ),
            "kronii_secret_lines_in_same_filler": _noise(chunks, kronii_lines, sample),
            "report_types_in_sample": dict(
                Counter(t for reports in d_reports for types in reports.values() for t in types)
            ),
        },
        "window_title": title,
        "against_revision": against,
        "secret_dense": dense,
        "recall": {
            "secret_types": sorted(k_scores.labels),
            "rule": "labels whose type is in category 'secret'; kronii: any finding overlapping the span; "
            "detect-secrets: any report on a line the span touches. Line precision: flagged lines (kronii: "
            "secret-category findings; detect-secrets: any report but 'Public IP (ipv4)') touched by a secret label",
            "detect_secrets_file_names": {**LABELLED_SUFFIXES, "others": ".txt"},
            "kronii": {**k_fig, "fully_covered": covered},
            "detect_secrets": d_fig,
            "detect_secrets_union_of_suffixes": {"suffixes": list(ALL_SUFFIXES), **best_fig},
        },
        "summary": {
            "kronii_mb_per_s": k_mbps,
            "detect_secrets_mb_per_s": d_mbps,
            "detect_secrets_measured_on_mb": round(sample_size / MB, 3),
            "speed_ratio": ratio,
            "speed_ratio_same_chunks": ratio_same,
            "speed_ratio_cpu": ratio_cpu,
            "speed_target_10x_met": ratio >= 10,
            "kronii_recall": k_fig["recall"],
            "detect_secrets_recall": d_fig["recall"],
            "detect_secrets_recall_union_of_suffixes": best_fig["recall"],
            "recall_target_met": k_fig["recall"] >= d_fig["recall"],
            "kronii_line_precision": k_fig["line_precision"],
            "detect_secrets_line_precision": d_fig["line_precision"],
            "title_p50_us": title["p50_us"],
            "title_p99_us": title["p99_us"],
            "dense_kronii_in_process_mb_per_s": dense["kronii_in_process"]["mb_per_s"],
            "dense_kronii_cli_mb_per_s": dense["kronii_cli"]["mb_per_s"],
            "dense_detect_secrets_cli_mb_per_s": dense["detect_secrets_cli"]["mb_per_s"],
            "dense_ratio_in_process": dense["ratio_in_process_vs_detect_secrets"],
            "dense_speed_target_5_mb_per_s_met": dense["kronii_in_process"]["mb_per_s"] >= 5,
            "dense_ratio_target_40x_met": dense["ratio_in_process_vs_detect_secrets"] >= 40,
            "cli_one_line_wall_s": dense["kronii_cli_one_line"]["wall_s"],
        },
    }
    save("redaction_text", figures)
    sample_note = "whole corpus" if whole else f"first {sample_size / MB:.2f} MB of it"
    print(
        f"SUMMARY kronii {k_mbps:.2f} MB/s | detect-secrets {d_mbps:.3f} MB/s ({sample_note}) | "
        f"ratio {ratio}x (same chunks {ratio_same}x, CPU {ratio_cpu}x; target >= 10x: "
        f"{'met' if ratio >= 10 else 'NOT met'}) | secret recall kronii {k_fig['found']}/{k_fig['secret_labels']}"
        f" = {k_fig['recall']:.3f} vs detect-secrets {d_fig['found']}/{d_fig['secret_labels']} = "
        f"{d_fig['recall']:.3f}, any file name {best_fig['recall']:.3f} "
        f"({'met' if k_fig['recall'] >= d_fig['recall'] else 'NOT met'}) | line precision kronii "
        f"{k_fig['line_precision']:.3f} vs detect-secrets {d_fig['line_precision']:.3f} | "
        f"title p50 {title['p50_us']} µs p99 {title['p99_us']} µs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
