"""Resume and spawn as a person would run them (seed 002, section 9.2): in the agent's working
directory, in a visible window of the workspace's tmux session (kept on screen when the process
ends, with its output and exit status), and checked: the step succeeded only when the new process
reached `idle` or `working` on its screen (an exec-style resume: exited 0, or still running) within
the agent kind's start timeout."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kronii.supervisor.adapters.tmux import TmuxControl, TmuxError
from kronii.supervisor.core.agent_state import AgentState, classify
from kronii.supervisor.core.params import AgentKind
from kronii.supervisor.core.screen import parse_screen

__all__ = ["StartCheck", "start_visible"]

_POLL_SECS = 0.1
# Without an input marker the screen cannot say idle; staying alive this long is the sign.
_UNMARKED_ALIVE_SECS = 2.0


@dataclass(frozen=True, slots=True)
class StartCheck:
    ok: bool
    pane_id: str = ""
    pid: int = 0
    # What the new process showed: a state, "exited 1", "running".
    seen: str = ""
    detail: str = ""


async def start_visible(
    tmux: TmuxControl, *, session: str, window: str, argv: Sequence[str], env: Mapping[str, str],
    cwd: str | None, kind: AgentKind, exec_style: bool,
) -> StartCheck:  # fmt: skip
    """Start `argv` in a new window of `session` and watch it until it proves it started."""
    if not argv or not argv[0]:
        return StartCheck(False, detail="the agent kind has no command for this step")
    try:
        pane_id, pid = await tmux.start_agent(session, window, argv, env=env, cwd=cwd, keep_on_exit=True)
    except (TmuxError, TimeoutError, OSError) as error:
        return StartCheck(False, detail=f"tmux could not start {argv[0]}: {error}")
    started = time.monotonic()
    deadline = started + kind.start_timeout_secs
    while True:
        try:
            check = await _look(tmux, pane_id, pid, kind, exec_style, time.monotonic() - started)
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
    cursor_y, screen = await tmux.screen(pane_id)
    state = classify(parse_screen(screen), cursor_y, kind).state
    return StartCheck(
        False, pane_id, pid, state.value,
        f"{argv[0]} did not reach idle or working within {kind.start_timeout_secs:g} s (it shows {state.value})",
    )  # fmt: skip


async def _look(
    tmux: TmuxControl, pane_id: str, pid: int, kind: AgentKind, exec_style: bool, elapsed: float
) -> StartCheck | None:
    dead, status = await tmux.pane_exit(pane_id)
    if dead:
        ok = exec_style and status == 0
        seen = f"exited {status}"
        detail = "exited 0" if ok else f"exited with status {status} after {elapsed:.1f} s"
        return StartCheck(ok, pane_id, pid, seen, detail)
    if exec_style:
        return None
    cursor_y, screen = await tmux.screen(pane_id)
    reading = classify(parse_screen(screen), cursor_y, kind)
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
