"""Resume and spawn as a person would run them (seed 002, section 9.2): in the agent's working
directory and its own environment (core/agent_world.py: exactly the variables it had, nothing of
the supervisor's or the tmux server's besides the new window's terminal), in a visible window of the
workspace's tmux session (kept on screen when the process ends, with its output and exit status),
and checked. An interactive start counts only when the new process has shown its input screen
(idle, or at work on the prompt it was given) for a moment, and never a dialog: a sign-in, trust or
auth screen is a failed start naming the dialog's first line. An exec-style resume counts when it
exits 0, or is still running at the agent kind's start timeout."""

from __future__ import annotations

import asyncio
import os
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kronii.supervisor.adapters.tmux import TmuxControl
from kronii.supervisor.adapters.tmux_connection import TmuxError
from kronii.supervisor.core.agent_kinds import AgentKind
from kronii.supervisor.core.agent_state import AgentState, classify
from kronii.supervisor.core.agent_world import names_to_clear
from kronii.supervisor.core.pane_reports import StartCheck
from kronii.supervisor.core.screen import parse_screen

__all__ = ["StartCheck", "VisibleLauncher", "first_line", "start_visible"]

_POLL_SECS = 0.1
# Without an input marker the screen cannot say idle; staying alive this long is the sign.
_UNMARKED_ALIVE_SECS = 2.0
# After the input screen first shows, this long with no dialog and no exit: an agent may draw a
# frame or two of its main screen before its sign-in or trust screen, and that is not a start.
_SETTLE_SECS = 1.0
_WORD = re.compile(r"[^\W\d_]{2,}")
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")


def first_line(screen: Sequence[str]) -> str:
    """The first line of words on a captured screen (escape codes removed), for a sentence: a
    banner drawn in block or braille characters above a dialog says nothing; else the first line
    with anything on it."""
    lines = [text for text in (_ESCAPES.sub("", raw).strip() for raw in screen) if text]
    worded = [text for text in lines if _WORD.search(text)]
    return (worded or lines or [""])[0][:160]


async def _clear_list(tmux: TmuxControl, session: str, env: Mapping[str, str]) -> list[str]:
    """The variables the new window would get besides `env` (the tmux server's and the session's
    environment, the supervisor's own, which a server it started holds): to be removed."""
    present = set(os.environ)
    for scope in (["-g"], ["-t", f"={session}"]):
        try:
            lines = await tmux.command("show-environment", *scope)
        except (TmuxError, TimeoutError):
            continue  # no such session yet: it is made from the global environment
        present.update(line.partition("=")[0].lstrip("-") for line in lines)
    return names_to_clear(present, env)


async def start_visible(
    tmux: TmuxControl, *, session: str, window: str, argv: Sequence[str], env: Mapping[str, str],
    cwd: str | None, kind: AgentKind, exec_style: bool, status_dir: Path,
) -> StartCheck:  # fmt: skip
    """Start `argv` in a new window of `session` with exactly the environment `env` (plus the
    terminal's TERM, TMUX and TMUX_PANE) and watch it until it proves it started. An exec-style
    command runs under a small shell that writes its exit status into `status_dir`."""
    if not argv or not argv[0]:
        return StartCheck(False, detail="the agent kind has no command for this step")
    status_file: Path | None = None
    if exec_style:
        await asyncio.to_thread(status_dir.mkdir, parents=True, exist_ok=True, mode=0o700)
        status_file = status_dir / f"exit-{uuid.uuid4().hex}"
    clear = await _clear_list(tmux, session, env)
    command = (
        ["env", *(part for name in clear for part in ("-u", name)), "--", *argv] if clear else list(argv)
    )
    try:
        pane_id, pid = await tmux.start_agent(
            session, window, command, env=env, cwd=cwd, keep_on_exit=True,
            status_file=str(status_file) if status_file else None,
        )  # fmt: skip
    except (TmuxError, TimeoutError, OSError) as error:
        return StartCheck(False, detail=f"tmux could not start {argv[0]}: {error}")
    try:
        return await _Watch(tmux, pane_id, pid, argv[0], kind, exec_style, status_file).run()
    finally:
        if status_file is not None:
            status_file.unlink(missing_ok=True)


@dataclass
class _Watch:
    """One new window watched until its process proves it started, or fails to."""

    tmux: TmuxControl
    pane_id: str
    pid: int
    program: str
    kind: AgentKind
    exec_style: bool
    status_file: Path | None
    # When the input screen (idle, or working on its prompt) first showed, and what it was.
    ready_since: float | None = None
    ready: str = ""

    async def run(self) -> StartCheck:
        started = time.monotonic()
        deadline = started + self.kind.start_timeout_secs
        while True:
            try:
                check = await self._look(time.monotonic() - started)
            except (TmuxError, TimeoutError, ValueError) as error:
                return StartCheck(
                    False, self.pane_id, self.pid, "gone", f"the new pane {self.pane_id} went away: {error}"
                )
            if check is not None:
                return check
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(_POLL_SECS)
        timeout = f"{self.kind.start_timeout_secs:g} s"
        if self.exec_style:
            return StartCheck(
                True, self.pane_id, self.pid, "running", f"{self.program} is still running after {timeout}"
            )
        state, screen = await self._read()
        shows = f"it shows {state.value}" + (f": {first_line(screen)!r}" if first_line(screen) else "")
        return StartCheck(
            False, self.pane_id, self.pid, state.value,
            f"{self.program} did not reach its input screen within {timeout} ({shows})",
        )  # fmt: skip

    async def _read(self) -> tuple[AgentState, tuple[str, ...]]:
        cursor_x, cursor_y, screen = await self.tmux.screen_at(self.pane_id)
        return classify(parse_screen(screen), cursor_y, self.kind, cursor_x=cursor_x).state, screen

    async def _look(self, elapsed: float) -> StartCheck | None:
        dead, status = await self.tmux.pane_exit(self.pane_id)
        if dead:
            status = _reported(self.status_file) if self.status_file is not None else status
            ok = self.exec_style and status == 0
            said = f"status {status}" if status is not None else "an exit status tmux did not report"
            detail = "exited 0" if ok else f"exited with {said} after {elapsed:.1f} s"
            return StartCheck(ok, self.pane_id, self.pid, f"exited {status}", detail)
        if self.exec_style:
            return None
        state, screen = await self._read()
        if state is AgentState.BLOCKED:
            shown = first_line(screen) or "a dialog"
            return StartCheck(
                False, self.pane_id, self.pid, "blocked",
                f"{self.program} stopped at a dialog, not its input screen: {shown!r}",
            )  # fmt: skip
        if not self.kind.input_marker:
            if elapsed >= min(_UNMARKED_ALIVE_SECS, self.kind.start_timeout_secs):
                return StartCheck(True, self.pane_id, self.pid, "running", f"running after {elapsed:.1f} s")
            return None
        now = time.monotonic()
        if self.ready_since is None:
            if state not in (AgentState.IDLE, AgentState.WORKING):
                return None
            self.ready_since, self.ready = now, f"{state.value} after {elapsed:.1f} s"
        if now - self.ready_since < min(_SETTLE_SECS, self.kind.start_timeout_secs / 2):
            return None
        return StartCheck(
            True, self.pane_id, self.pid, state.value,
            f"{self.ready}, and no dialog, no exit {now - self.ready_since:.1f} s later",
        )  # fmt: skip


def _reported(status_file: Path | None) -> int | None:
    if status_file is None:
        return None
    try:
        text = status_file.read_text().strip()
    except OSError:
        return None
    return int(text) if text.lstrip("-").isdigit() else None


class VisibleLauncher:
    """The fallback chain's way to start a resume or a spawn: start_visible on one tmux server.
    `env` is the agent's whole environment (core/agent_world.launch_env)."""

    def __init__(self, tmux: TmuxControl) -> None:
        self._tmux = tmux

    async def start(
        self, *, session: str, window: str, argv: Sequence[str], env: Mapping[str, str], cwd: str | None,
        kind: AgentKind, exec_style: bool, status_dir: Path,
    ) -> StartCheck:  # fmt: skip
        return await start_visible(
            self._tmux, session=session, window=window, argv=argv, env=env, cwd=cwd, kind=kind,
            exec_style=exec_style, status_dir=status_dir,
        )  # fmt: skip
