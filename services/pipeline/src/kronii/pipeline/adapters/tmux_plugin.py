"""The tmux plugin: what the user's focused terminal pane shows, in a few redacted facts.

The pane is the active pane of the most recently active tmux client (or, with no client attached,
of the most recently active session). Its recent output is summarised as the last command, the
errors and tracebacks seen, and the last test result line; every piece goes through the shared
redaction engine before it leaves this module, and a pane graded red yields nothing but its level."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.redaction import WITHHELD_TEXT, Level, RedactionContext, RedactionEngine, shared_engine

__all__ = [
    "TMUX_APP_ID",
    "PaneCapture",
    "PaneSummary",
    "TmuxPane",
    "TmuxPlugin",
    "summarize_pane",
]

TMUX_APP_ID = "tmux"
_MAX_ERRORS = 3
_MAX_FACT_CHARS = 200
_LEVEL_ORDER = {Level.GREEN: 0, Level.AMBER: 1, Level.RED: 2}

# A shell prompt: one token (user@host:~/dir, bash-5.2, ~/proj), optionally after a (venv) tag,
# then $, #, %, a heavy angle quote (starship) or a single one, then the command. '#' and '%' need a token before them so a markdown
# heading or a percentage in some program's output is not taken for a prompt; the token needs a
# letter, ~ or / for the same reason.
_PROMPT = re.compile(
    r"^(?:\([^()\s]{1,40}\)\s+)?(?:(?P<token>(?=\S*[A-Za-z~/])\S{1,80}?)\s?(?P<mark>[$#%\u276f\u203a])|(?P<bare>[$\u276f\u203a]))\s+(?P<cmd>\S.*)$"
)
_ERRORS = [
    re.compile(p)
    for p in (
        r"^Traceback \(most recent call last\):",
        # A Python exception line, also as pytest prints it ("E   AssertionError: ...").
        r"^(?:E\s+)?(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)(?::\s.*)?$",
        r"\b(?:error|ERROR|Error)(?:\[\w+\])?:\s",
        r"^npm ERR!",
        r"^(?:fatal|panic):\s",
        r"command not found$",
        r"Segmentation fault",
    )
]
_TEST_RESULTS = [
    # pytest's last line: "==== 2 failed, 5 passed in 0.31s ====" (also with -q: "2 failed, 5 passed in 0.31s").
    re.compile(r"^=*\s*(?P<r>(?:\d+ \w+(?:, )?)+) in [\d.]+s\b"),
    re.compile(r"^=+ (?P<r>no tests ran) in [\d.]+s"),
    # cargo test, jest, go test.
    re.compile(r"^(?P<r>test result: (?:ok|FAILED)\..*)$"),
    re.compile(r"^(?P<r>Tests:\s+.*\d+ total)$"),
    re.compile(r"^(?P<r>(?:ok|FAIL)\s+\S+\s+[\d.]+s)$"),
]
# unittest: "FAILED (failures=1)" after "Ran 3 tests in 0.001s".
_UNITTEST_VERDICT = re.compile(r"^(?P<r>(?:OK|FAILED)(?: \(.*\))?)$")
_TEST_RESULTS.append(_UNITTEST_VERDICT)


@dataclass(frozen=True, slots=True)
class PaneCapture:
    pane_id: str
    session: str
    current_command: str
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PaneSummary:
    last_command: str = ""
    errors: tuple[str, ...] = ()
    tests: str = ""

    def text(self) -> str:
        parts: list[str] = []
        if self.last_command:
            parts.append(f"last command: {self.last_command}")
        if self.tests:
            parts.append(f"tests: {self.tests}")
        if self.errors:
            parts.append(f"errors: {' | '.join(self.errors)}")
        return "; ".join(parts) if parts else "no command or error in the pane's recent output"


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _MAX_FACT_CHARS else text[: _MAX_FACT_CHARS - 1] + "\u2026"


def _last_command(lines: Sequence[str]) -> str:
    for line in reversed(lines):
        match = _PROMPT.match(line)
        if match and (match["bare"] or match["token"]):
            return _clip(match["cmd"])
    return ""


def _errors(lines: Sequence[str]) -> tuple[str, ...]:
    found: list[str] = []
    for line in lines:
        stripped = line.strip()
        if stripped and any(pattern.search(stripped) for pattern in _ERRORS):
            clipped = _clip(stripped)
            if clipped in found:
                found.remove(clipped)
            found.append(clipped)
    return tuple(found[-_MAX_ERRORS:])


def _tests(lines: Sequence[str]) -> str:
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index].strip()
        for pattern in _TEST_RESULTS:
            match = pattern.match(line)
            if not match:
                continue
            result = match["r"].strip()
            if pattern is not _UNITTEST_VERDICT:
                return _clip(result)
            # A bare OK/FAILED counts only under unittest's "Ran N tests in ..." line.
            ran = next((above.strip() for above in reversed(lines[:index]) if above.strip()), "")
            if ran.startswith("Ran "):
                return _clip(f"{ran.split(' in ')[0]}: {result}")
    return ""


def summarize_pane(lines: Sequence[str]) -> PaneSummary:
    """The last command, the last few distinct error lines and the last test result in `lines`."""
    lines = [line.rstrip() for line in lines]
    return PaneSummary(_last_command(lines), _errors(lines), _tests(lines))


class TmuxPane:
    """Reads the focused pane with the tmux CLI (a snapshot is rare enough for a process each)."""

    def __init__(
        self,
        socket: str | None = None,
        *,
        binary: str = "tmux",
        history_lines: int = 200,
        timeout_s: float = 3.0,
    ) -> None:
        self._base = [binary, *(["-S", socket] if socket else [])]
        self._history_lines = history_lines
        self._timeout_s = timeout_s

    async def _tmux(self, *args: str) -> list[str] | None:
        try:
            process = await asyncio.create_subprocess_exec(
                *self._base,
                *args,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                stdin=asyncio.subprocess.DEVNULL,
            )
        except OSError:
            return None  # no tmux binary
        try:
            out, _ = await asyncio.wait_for(process.communicate(), self._timeout_s)
        except TimeoutError:
            process.kill()
            await process.wait()
            return None
        if process.returncode != 0:
            return None  # no server, or the pane went away
        return out.decode("utf-8", errors="replace").splitlines()

    async def focused_session(self) -> str | None:
        """The session id ($n) of the most recently active human client, else of the most recently
        active session."""
        clients = await self._tmux(
            "list-clients", "-F", "#{client_activity}\t#{session_id}\t#{client_control_mode}"
        )
        candidates = [row.split("\t") for row in clients or ()]
        human = [(int(c[0]), c[1]) for c in candidates if len(c) == 3 and c[2] != "1" and c[0].isdigit()]
        if human:
            return max(human)[1]
        sessions = await self._tmux("list-sessions", "-F", "#{session_activity}\t#{session_id}")
        rows = [row.split("\t") for row in sessions or ()]
        known = [(int(r[0]), r[1]) for r in rows if len(r) == 2 and r[0].isdigit()]
        return max(known)[1] if known else None

    async def capture(self) -> PaneCapture | None:
        session = await self.focused_session()
        if session is None:
            return None
        info = await self._tmux("display-message", "-p", "-t", session, "#{pane_id}\t#{pane_current_command}")
        if not info or "\t" not in info[0]:
            return None
        pane_id, current_command = info[0].split("\t", 1)
        lines = await self._tmux("capture-pane", "-p", "-J", "-t", pane_id, "-S", f"-{self._history_lines}")
        if lines is None:
            return None
        while lines and not lines[-1].strip():
            lines.pop()
        return PaneCapture(pane_id, session, current_command, tuple(lines))


class _Pane(Protocol):
    async def capture(self) -> PaneCapture | None: ...


def _worst(levels: Iterable[Level]) -> Level:
    return max(levels, key=_LEVEL_ORDER.__getitem__, default=Level.GREEN)


class TmuxPlugin:
    """The plugin the PluginHost serves: snapshot with a summary, or the redacted tail as full data."""

    def __init__(
        self,
        pane: TmuxPane | _Pane | None = None,
        *,
        engine: RedactionEngine | None = None,
        full_lines: int = 60,
        clock: Callable[[], float] = time.time,
        version: str = "1",
    ) -> None:
        self._pane = pane if pane is not None else TmuxPane()
        self._engine = engine if engine is not None else shared_engine()
        self._full_lines = full_lines
        self._clock = clock
        self._version = version

    @property
    def registration(self) -> pb.PluginRegistration:
        return pb.PluginRegistration(
            app_id=TMUX_APP_ID,
            display_name="tmux (focused pane)",
            capabilities=pb.PluginCapabilities(
                snapshot=True, events=False, summarize=True, redact_hint=False
            ),
            # A terminal shows commands, paths and now and then a secret: redacted, but not harmless.
            risk_score=0.4,
            version=self._version,
        )

    async def snapshot(self, request: pb.PluginSnapshotRequest) -> pb.PluginSnapshot:
        detail = request.detail or pb.SNAPSHOT_DETAIL_SUMMARY
        reply = pb.PluginSnapshot(app_id=TMUX_APP_ID, detail=detail)
        reply.taken_at.FromNanoseconds(round(self._clock() * 1e9))
        capture = await self._pane.capture()
        if capture is None:
            reply.error = "no tmux pane to read (no server, or no session)"
            reply.redaction_level = Level.GREEN.value
            return reply
        summary = summarize_pane(capture.lines)
        context = RedactionContext.random()
        app = f"tmux:{capture.current_command}"

        def clean(text: str) -> tuple[str, Level]:
            result = self._engine.redact(text, context=context, app=app)
            return result.text, result.level

        last_command, command_level = clean(summary.last_command)
        tests, tests_level = clean(summary.tests)
        errors = [clean(error) for error in summary.errors]
        current_command, current_level = clean(capture.current_command)
        levels = [command_level, tests_level, current_level, *(level for _, level in errors)]
        full_text = ""
        if detail == pb.SNAPSHOT_DETAIL_FULL:
            full_text, full_level = clean("\n".join(capture.lines[-self._full_lines :]))
            levels.append(full_level)
        level = _worst(levels)
        reply.redaction_level = level.value
        if level is Level.RED:
            reply.summary = WITHHELD_TEXT
            return reply
        redacted = PaneSummary(last_command, tuple(text for text, _ in errors), tests)
        text = redacted.text()
        if request.max_chars:
            text = text[: request.max_chars]
            full_text = full_text[-max(0, request.max_chars - len(text)) :] if full_text else ""
        reply.summary = text
        reply.full_text = full_text
        reply.attributes.update(
            {
                "last_command": last_command,
                "tests": tests,
                "error_count": str(len(errors)),
                "pane_command": current_command,
            }
        )
        return reply
