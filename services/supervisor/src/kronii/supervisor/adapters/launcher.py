"""Resume and spawn as a person would run them (seed 002, section 9.2): in the agent's working
directory, in a visible window of the workspace's tmux session (kept on screen when the process
ends, with its output and exit status), and checked: the step succeeded only when the new process
reached `idle` or `working` on its screen (an exec-style resume: exited 0, or still running) within
the agent kind's start timeout."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from kronii.supervisor.adapters.tmux import TmuxControl
from kronii.supervisor.adapters.tmux_connection import TmuxError
from kronii.supervisor.core.agent_kinds import AgentKind
from kronii.supervisor.core.agent_state import AgentState, classify
from kronii.supervisor.core.pane_reports import StartCheck
from kronii.supervisor.core.screen import parse_screen

__all__ = ["StartCheck", "VisibleLauncher", "start_visible"]

_POLL_SECS = 0.1
# Without an input marker the screen cannot say idle; staying alive this long is the sign.
_UNMARKED_ALIVE_SECS = 2.0


async def start_visible(
    tmux: TmuxControl, *, session: str, window: str, argv: Sequence[str], env: Mapping[str, str],
    cwd: str | None, kind: AgentKind, exec_style: bool, status_dir: Path,
) -> StartCheck:  # fmt: skip
    """Start `argv` in a new window of `session` and watch it until it proves it started. An
    exec-style command runs under a small shell that writes its exit status into `status_dir`."""
    if not argv or not argv[0]:
        return StartCheck(False, detail="the agent kind has no command for this step")
    status_file: Path | None = None
    if exec_style:
        await asyncio.to_thread(status_dir.mkdir, parents=True, exist_ok=True, mode=0o700)
        status_file = status_dir / f"exit-{uuid.uuid4().hex}"
    try:
        pane_id, pid = await tmux.start_agent(
            session, window, argv, env=env, cwd=cwd, keep_on_exit=True,
            status_file=str(status_file) if status_file else None,
        )  # fmt: skip
    except (TmuxError, TimeoutError, OSError) as error:
        return StartCheck(False, detail=f"tmux could not start {argv[0]}: {error}")
    try:
        return await _watch(tmux, pane_id, pid, argv, kind, exec_style, status_file)
    finally:
        if status_file is not None:
            status_file.unlink(missing_ok=True)


async def _watch(
    tmux: TmuxControl, pane_id: str, pid: int, argv: Sequence[str], kind: AgentKind, exec_style: bool,
    status_file: Path | None,
) -> StartCheck:  # fmt: skip
    started = time.monotonic()
    deadline = started + kind.start_timeout_secs
    while True:
        try:
            check = await _look(tmux, pane_id, pid, kind, exec_style, time.monotonic() - started, status_file)
        except (TmuxError, TimeoutError, ValueError) as error:
            return StartCheck(False, pane_id, pid, "gone", f"the new pane {pane_id} went away: {error}")
        if check is not None:
            return check
        if time.monotonic() >= deadline:
            break
        await asyncio.sleep(_POLL_SECS)
    if exec_style:
        return StartCheck(
            True, pane_id, pid, "running", f"{argv[0]} is still running after {kind.start_timeout_secs:g} s"
        )
    cursor_x, cursor_y, screen = await tmux.screen_at(pane_id)
    state = classify(parse_screen(screen), cursor_y, kind, cursor_x=cursor_x).state
    return StartCheck(
        False, pane_id, pid, state.value,
        f"{argv[0]} did not reach idle or working within {kind.start_timeout_secs:g} s (it shows {state.value})",
    )  # fmt: skip


def _reported(status_file: Path | None) -> int | None:
    if status_file is None:
        return None
    try:
        text = status_file.read_text().strip()
    except OSError:
        return None
    return int(text) if text.lstrip("-").isdigit() else None


async def _look(
    tmux: TmuxControl, pane_id: str, pid: int, kind: AgentKind, exec_style: bool, elapsed: float,
    status_file: Path | None,
) -> StartCheck | None:  # fmt: skip
    dead, status = await tmux.pane_exit(pane_id)
    if dead:
        status = _reported(status_file) if status_file is not None else status
        ok = exec_style and status == 0
        said = f"status {status}" if status is not None else "an exit status tmux did not report"
        detail = "exited 0" if ok else f"exited with {said} after {elapsed:.1f} s"
        return StartCheck(ok, pane_id, pid, f"exited {status}", detail)
    if exec_style:
        return None
    cursor_x, cursor_y, screen = await tmux.screen_at(pane_id)
    reading = classify(parse_screen(screen), cursor_y, kind, cursor_x=cursor_x)
    if reading.state is AgentState.BLOCKED:
        return StartCheck(False, pane_id, pid, "blocked", f"it stopped at a dialog: {reading.evidence!r}")
    if not kind.input_marker:
        if elapsed >= min(_UNMARKED_ALIVE_SECS, kind.start_timeout_secs):
            return StartCheck(True, pane_id, pid, "running", f"running after {elapsed:.1f} s")
        return None
    if reading.state in (AgentState.IDLE, AgentState.WORKING):
        return StartCheck(
            True, pane_id, pid, reading.state.value, f"{reading.state.value} after {elapsed:.1f} s"
        )
    return None


class VisibleLauncher:
    """The fallback chain's way to start a resume or a spawn: start_visible on one tmux server."""

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
