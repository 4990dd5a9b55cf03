"""An agent runtime's logical session id, read from the files the agent itself writes, for the
`codex resume <id>` / `claude --resume <id>` fallback when its pane cannot take a prompt.

A runtime is matched by its process (start time, environment) and working directory, never by
guessing: a Codex rollout counts when its `session_meta` names the runtime's cwd and began at or
after the process started; a Claude Code transcript counts when it sits in the folder Claude Code
derives from that cwd and was written after the process started. Nothing matching gives "".

Codex writes `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl`, dated by the
local day the session began; the file appears with the first prompt, and the first line (many KB
of instructions) carries `session_meta`. A resumed session keeps appending to its old file, which
the process holds open: that open file answers first. Claude Code writes
`$CLAUDE_CONFIG_DIR/projects/<folder>/<id>.jsonl`, the folder being the cwd with each character
but ASCII letters and digits turned into "-".
"""

from __future__ import annotations

import json
import os
import re
import time
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from kronii.supervisor.adapters.processes import agent_process, descendants, process_info

__all__ = [
    "CLAUDE_FOLDER_MAX",
    "FIRST_LINE_LIMIT",
    "SLACK_SECS",
    "RolloutMeta",
    "claude_config_dir",
    "claude_folder_name",
    "claude_session_id",
    "codex_home",
    "codex_session_id",
    "day_folders",
    "find_session_id",
    "parse_rollout_head",
    "read_rollout_meta",
]

# A start time from /proc has whole-second boot time under it, and a session begins a moment
# after its process: anything this much before the recorded start still belongs to it.
SLACK_SECS = 2.0
# Codex's first line holds its whole base instructions; past this only the fields at its front
# (id, timestamp, cwd come first) are read.
FIRST_LINE_LIMIT = 256 * 1024
# Claude Code cuts longer folder names and appends a hash of the path (Bun.hash in the CLI,
# djb2 in its SDKs), so a long cwd is found by this prefix and confirmed by the cwd inside.
CLAUDE_FOLDER_MAX = 200

_CLAUDE_HEAD = 64 * 1024
_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_ROLLOUT = re.compile(r"rollout-.+\.jsonl")
# An id goes into an argument vector: a plain token, never whitespace or an option.
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_META_TYPE = re.compile(r'"type"\s*:\s*"session_meta"')
_PAYLOAD = re.compile(r'"payload"\s*:\s*\{')


@dataclass(frozen=True, slots=True)
class RolloutMeta:
    session_id: str
    cwd: str
    started_at: float


# ---- Codex ---------------------------------------------------------------------------------------


def _epoch(value: object) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        return None
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp()


def _string_field(text: str, key: str) -> str | None:
    """The first `"key": "..."` in (possibly cut-off) JSON text, unescaped."""
    found = re.search(rf'"{re.escape(key)}"\s*:\s*"((?:[^"\\]|\\.)*)"', text)
    if found is None:
        return None
    try:
        value = json.loads(f'"{found.group(1)}"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _meta(session_id: object, cwd: object, started_at: float | None) -> RolloutMeta | None:
    if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
        return None
    if not isinstance(cwd, str) or not cwd or started_at is None:
        return None
    return RolloutMeta(session_id, cwd, started_at)


def parse_rollout_head(head: bytes) -> RolloutMeta | None:
    """The session id, cwd and start of a rollout from its first line; None for anything else.
    A line cut off at the read limit (or half written) is read from its front, where Codex puts
    the id, timestamp and cwd before the long instructions."""
    text = head.decode("utf-8", errors="replace").strip()
    if not text.startswith("{"):
        return None
    try:
        line = json.loads(text)
    except ValueError:
        line = None
    if isinstance(line, dict):
        payload = line.get("payload")
        if line.get("type") != "session_meta" or not isinstance(payload, dict):
            return None
        started = _epoch(payload.get("timestamp")) or _epoch(line.get("timestamp"))
        return _meta(payload.get("session_id") or payload.get("id"), payload.get("cwd"), started)
    if line is not None:
        return None
    kind, payload_at = _META_TYPE.search(text), _PAYLOAD.search(text)
    if kind is None or payload_at is None or kind.start() > payload_at.start():
        return None
    front = text[payload_at.end() :]
    started = _epoch(_string_field(front, "timestamp")) or _epoch(_string_field(text, "timestamp"))
    sid = _string_field(front, "session_id") or _string_field(front, "id")
    return _meta(sid, _string_field(front, "cwd"), started)


def read_rollout_meta(path: Path) -> RolloutMeta | None:
    """Reads the first line only, at most FIRST_LINE_LIMIT bytes of it."""
    try:
        with path.open("rb") as file:
            head = file.readline(FIRST_LINE_LIMIT)
    except OSError:
        return None
    return parse_rollout_head(head)


def day_range(since: float, now: float) -> tuple[date, date]:
    """The local days whose folders can hold a session begun between `since` and `now`, a day
    wider each way: Codex dates folders by its own local time zone, which may not be ours."""
    since = max(since, 0.0)
    return (
        datetime.fromtimestamp(since).date() - timedelta(days=1),
        datetime.fromtimestamp(max(now, since)).date() + timedelta(days=1),
    )


def _numbered(folder: Path, width: int) -> list[tuple[int, Path]]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [(int(n), folder / n) for n in names if len(n) == width and n.isdigit()]


def day_folders(sessions: Path, since: float, now: float) -> list[Path]:
    """The existing `YYYY/MM/DD` folders from the process's start day to today: one listing per
    level that exists, however long ago `since` is."""
    first, last = day_range(since, now)
    out: list[Path] = []
    for year, year_dir in _numbered(sessions, 4):
        if not first.year <= year <= last.year:
            continue
        for month, month_dir in _numbered(year_dir, 2):
            if not (first.year, first.month) <= (year, month) <= (last.year, last.month):
                continue
            for day, day_dir in _numbered(month_dir, 2):
                try:
                    if first <= date(year, month, day) <= last:
                        out.append(day_dir)
                except ValueError:
                    continue
    return sorted(out)


def _norm(path: str) -> str:
    return unicodedata.normalize("NFC", os.path.normpath(path)) if path else ""


def _newest(metas: Iterable[tuple[RolloutMeta, str]]) -> str:
    best = max(metas, key=lambda m: (m[0].started_at, m[1]), default=None)
    return best[0].session_id if best else ""


def codex_session_id(codex_home: Path, cwds: Iterable[str], started_at: float, now: float) -> str:
    """The newest rollout whose session began in one of `cwds` at or after `started_at`."""
    wanted = {_norm(c) for c in cwds if c}
    since = started_at - SLACK_SECS

    def candidates() -> Iterable[tuple[RolloutMeta, str]]:
        for folder in day_folders(codex_home / "sessions", since, now):
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if not _ROLLOUT.fullmatch(entry.name):
                    continue
                try:
                    if not entry.is_file() or entry.stat().st_mtime < since:
                        continue  # a session begun after `since` was written after it
                except OSError:
                    continue
                meta = read_rollout_meta(Path(entry.path))
                if meta and meta.started_at >= since and _norm(meta.cwd) in wanted:
                    yield meta, entry.name

    return _newest(candidates())


def _open_rollouts(pid: int) -> list[Path]:
    fds = f"/proc/{pid}/fd"
    try:
        names = os.listdir(fds)
    except OSError:
        return []
    out: list[Path] = []
    for fd in names:
        try:
            target = os.readlink(f"{fds}/{fd}")
        except OSError:
            continue
        if _ROLLOUT.fullmatch(target.rsplit("/", 1)[-1]):
            out.append(Path(target))
    return out


def _held_codex_session(pids: Iterable[int], cwds: Iterable[str]) -> str:
    """The rollout the agent is writing to right now: Codex keeps it open for the session's life,
    also when the session was resumed (its old file, dated and stamped before this process)."""
    wanted = {_norm(c) for c in cwds if c}
    for pid in pids:
        held = [(meta, p.name) for p in _open_rollouts(pid) if (meta := read_rollout_meta(p))]
        found = _newest((m, n) for m, n in held if _norm(m.cwd) in wanted)
        if found:
            return found
    return ""


def codex_home(env: Mapping[str, str], cwd: str, home: Path | None = None) -> Path:
    """$CODEX_HOME of the runtime (relative to its cwd), else <home>/.codex."""
    value = env.get("CODEX_HOME", "")
    if value:
        return Path(cwd, value) if cwd else Path(value)
    return _home(env, home) / ".codex"


# ---- Claude Code ---------------------------------------------------------------------------------


def claude_folder_name(cwd: str) -> str:
    """Claude Code's folder for a cwd: every character but ASCII letters and digits becomes "-",
    one for one (lossy: "/a/b-c" and "/a/b_c" share a folder). Longer than CLAUDE_FOLDER_MAX,
    Claude Code adds a hash suffix; this returns the name without it."""
    return _NON_ALNUM.sub("-", cwd)


def _claude_cwd(path: Path) -> str | None:
    """The first "cwd" in a transcript's head, to tell apart long cwds sharing a folder prefix."""
    try:
        with path.open("rb") as file:
            head = file.read(_CLAUDE_HEAD).decode("utf-8", errors="replace")
    except OSError:
        return None
    return _string_field(head, "cwd")


def _claude_folders(projects: Path, cwd: str) -> list[tuple[Path, bool]]:
    """The folder(s) for a cwd, each with whether its files must be checked for that cwd."""
    name = claude_folder_name(cwd)
    if len(name) <= CLAUDE_FOLDER_MAX:
        return [(projects / name, False)]
    prefix = name[:CLAUDE_FOLDER_MAX] + "-"
    try:
        names = os.listdir(projects)
    except OSError:
        return []
    return [(projects / n, True) for n in sorted(names) if n.startswith(prefix)]


def claude_session_id(config_dir: Path, cwds: Iterable[str], started_at: float) -> str:
    """The newest-modified `<uuid>.jsonl` in the cwd's project folder written after `started_at`
    (a resumed or /clear-ed session writes its own file, so the newest is the live one)."""
    since = started_at - SLACK_SECS
    best: tuple[float, str] | None = None
    for cwd in dict.fromkeys(_norm(c) for c in cwds if c):
        for folder, check in _claude_folders(config_dir / "projects", cwd):
            for mtime, stem, path in _session_files(folder):
                if mtime < since or (best is not None and (mtime, stem) <= best):
                    continue
                if check and _norm(_claude_cwd(path) or "") != cwd:
                    continue
                best = (mtime, stem)
    return best[1] if best else ""


def _session_files(folder: Path) -> Iterator[tuple[float, str, Path]]:
    """(mtime, uuid, path) of each session file in a project folder; a folder or file that cannot
    be read is passed over."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        stem, dot, ext = entry.name.rpartition(".")
        if not dot or ext != "jsonl" or not _UUID.fullmatch(stem):
            continue  # agent-<id>.jsonl and the like are sidechains, not sessions
        try:
            if entry.is_file():
                yield entry.stat().st_mtime, stem, Path(entry.path)
        except OSError:
            continue


def claude_config_dir(env: Mapping[str, str], cwd: str, home: Path | None = None) -> Path:
    """$CLAUDE_CONFIG_DIR of the runtime (relative to its cwd), else <home>/.claude."""
    value = env.get("CLAUDE_CONFIG_DIR", "")
    if value:
        return Path(cwd, value) if cwd else Path(value)
    return _home(env, home) / ".claude"


# ---- the runtime ---------------------------------------------------------------------------------


def _home(env: Mapping[str, str], home: Path | None) -> Path:
    if home is not None:
        return home
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def _cwds(process_cwd: str, registered: str) -> list[str]:
    """The process's own cwd, then the registered one (as given and with links resolved)."""
    out = [process_cwd]
    if os.path.isabs(registered):
        out += [registered, os.path.realpath(registered)]
    return list(dict.fromkeys(_norm(c) for c in out if c))


def find_session_id(
    kind: str, pid: int, cwd: str, *, home: Path | None = None, now: float | None = None
) -> str:
    """The logical session of the runtime whose registered process is `pid` (or the agent
    under it) and whose cwd is `cwd`; "" when nothing matches, the process is gone, or `kind` is
    neither "codex" nor "claude". `home` stands in for the runtime's home directory when its
    environment names no CODEX_HOME / CLAUDE_CONFIG_DIR."""
    if kind not in ("codex", "claude"):
        return ""
    tree = [p for p in (process_info(q) for q in [pid, *descendants(pid)]) if p is not None]
    if not tree or tree[0].pid != pid:
        return ""  # the registered process is gone: its start time is unknown, so no guessing
    agent = agent_process(kind, tree)
    if agent is None:
        return ""
    cwds = _cwds(agent.cwd, cwd)
    if kind == "claude":
        return claude_session_id(claude_config_dir(agent.env, agent.cwd, home), cwds, agent.started_at)
    held = _held_codex_session([agent.pid, *descendants(agent.pid)], cwds)
    if held:
        return held
    root = codex_home(agent.env, agent.cwd, home)
    return codex_session_id(root, cwds, agent.started_at, time.time() if now is None else now)
