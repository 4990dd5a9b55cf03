"""What the supervisor asks of tmux, over the one control connection (adapters/tmux_connection.py):
a pane's probe, its screen and exit, keys and pastes, and an agent started in a new window."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping, Sequence

from kronii.supervisor.adapters.tmux_connection import TmuxConnection, TmuxError, TmuxUnanswered, says_gone
from kronii.supervisor.core.pane_reports import PaneProbe

__all__ = ["TmuxControl"]

_PANE_FORMAT = "P\t#{pane_id}\t#{pane_pid}\t#{pane_dead}\t#{cursor_y}\t#{pane_height}\t#{session_name}\t#{cursor_x}\t#{cursor_flag}\t#{pane_current_command}"
# Each client's current pane: a person's keys go to the pane they are looking at, not to every
# pane of the session (agents of one workspace share a session, a window each).
_CLIENT_FORMAT = "C\t#{client_control_mode}\t#{client_activity}\t#{pane_id}"


# Waits for the go line, runs the command, and leaves its exit status in $KRONII_EXIT_FILE.
_REPORT_EXIT = 'IFS= read -r _; "$@"; s=$?; printf "%s\\n" "$s" > "$KRONII_EXIT_FILE"; exit "$s"'


class TmuxControl(TmuxConnection):
    """The tmux server as the supervisor uses it: the control connection (pipelined commands, a
    lost connection re-opened on the next one) and the questions it asks of panes."""

    async def probe(self, target: str) -> PaneProbe:
        lines = await self.commands(
            [
                ["display-message", "-p", "-t", target, _PANE_FORMAT],
                ["list-clients", "-t", target, "-F", _CLIENT_FORMAT],
                ["capture-pane", "-p", "-e", "-t", target],
            ]
        )
        if not lines or not lines[0].startswith("P\t"):
            raise TmuxError(f"unexpected answer for pane {target}: {lines[:1]}")
        fields = lines[0].split("\t")
        height = int(fields[5] or 0)
        clients = lines[1 : len(lines) - height] if height else lines[1:]
        activity = _people_at(clients, fields[1])
        return PaneProbe(
            pane_id=fields[1],
            pane_pid=int(fields[2] or 0),
            dead=fields[3] == "1",
            cursor_y=int(fields[4] or 0),
            session=fields[6],
            cursor_x=int(fields[7] or 0),
            cursor_visible=fields[8] != "0",
            current_command="\t".join(fields[9:]),
            human_client_activity=tuple(activity),
            screen=tuple(lines[len(lines) - height :]) if height else (),
        )

    async def screen(self, target: str) -> tuple[int, tuple[str, ...]]:
        """The cursor row and the visible screen, with its SGR attributes (`capture-pane -e`)."""
        _, cursor_y, lines = await self.screen_at(target)
        return cursor_y, lines

    async def screen_at(self, target: str) -> tuple[int, int, tuple[str, ...]]:
        """The cursor's column and row, and the visible screen with its SGR attributes, read in
        one round trip (whether the cursor is in the agent's input box depends on both)."""
        lines = await self.commands(
            [
                ["display-message", "-p", "-t", target, "#{cursor_x} #{cursor_y}"],
                ["capture-pane", "-p", "-e", "-t", target],
            ]
        )
        x, _, y = (lines[0] if lines else "0 0").partition(" ")
        return int(x or 0), int(y or 0), tuple(lines[1:])

    async def pane_exit(self, target: str) -> tuple[bool, int | None]:
        """Whether the pane's process has exited (the pane kept by remain-on-exit), and its status."""
        lines = await self.command("display-message", "-p", "-t", target, "#{pane_dead} #{pane_dead_status}")
        dead, _, status = (lines[0] if lines else "0 ").partition(" ")
        return dead == "1", int(status) if status.strip().lstrip("-").isdigit() else None

    async def send_literal(self, target: str, text: str) -> None:
        await self.command("send-keys", "-t", target, "-l", "--", text)

    async def paste(self, target: str, text: str) -> None:
        """A uniquely named buffer, pasted with bracketed paste (-p), LF kept (-r), then deleted (-d)."""
        name = f"kronii-{uuid.uuid4().hex[:12]}"
        await self.commands(
            [
                ["set-buffer", "-b", name, "--", text],
                ["paste-buffer", "-p", "-r", "-d", "-b", name, "-t", target],
            ]
        )

    async def send_keys(self, target: str, keys: Sequence[str]) -> None:
        await self.command("send-keys", "-t", target, *keys)

    async def has_session(self, session: str) -> bool:
        try:
            await self.command("has-session", "-t", f"={session}")
        except TmuxUnanswered:
            raise
        except TmuxError:
            return False
        return True

    async def start_agent(
        self,
        session: str,
        window: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        width: int = 200,
        height: int = 50,
        keep_on_exit: bool = False,
        status_file: str | None = None,
    ) -> tuple[str, int]:
        """Start `argv` (executed directly, no shell) in a new window of `session` (created when
        missing); returns the pane id and the pid of the process. With `keep_on_exit` the pane
        stays on screen after the process ends, with its last output and exit status."""
        options = _window_options(window, env=env, cwd=cwd, status_file=status_file)
        first = _first_process(argv, keep_on_exit=keep_on_exit, status_file=status_file)
        new_window = ["new-window", "-d", "-t", f"={session}:", *options, "--", *first]
        if await self.has_session(session):
            lines = await self.command(*new_window)
        else:
            size = ["-x", str(width), "-y", str(height)]
            try:
                lines = await self.command("new-session", "-d", "-s", session, *size, *options, "--", *first)
            except TmuxError as error:
                if "duplicate session" not in str(error):
                    raise
                # Another start made the session between our look and ours: a window in it, then.
                lines = await self.command(*new_window)
        pane_id, _, pid = lines[0].partition("\t")
        if keep_on_exit or status_file:
            await self.commands(
                [
                    ["set-option", "-p", "-t", pane_id, "remain-on-exit", "on"],
                    ["send-keys", "-t", pane_id, "Enter"],
                ]
            )
        return pane_id, int(pid)

    async def pane_exists(self, pane_id: str) -> bool:
        """False only when tmux says so (no such pane, or its process ended); TmuxUnanswered (or
        tmux's other errors) when it could not tell."""
        try:
            lines = await self.command("display-message", "-p", "-t", pane_id, "#{pane_id} #{pane_dead}")
        except TmuxError as error:
            if says_gone(error):
                return False
            raise
        return bool(lines) and lines[0] == f"{pane_id} 0"

    async def kill_server(self) -> None:
        with contextlib.suppress(TmuxError, TimeoutError):
            await self.command("kill-server")
        await self.close()


def _people_at(clients: Sequence[str], pane_id: str) -> list[float]:
    """The latest key time of each person's client looking at this pane (control clients, kronii's
    own, never count)."""
    activity: list[float] = []
    for client in clients:
        parts = client.split("\t")
        if (
            len(parts) == 4
            and parts[0] == "C"
            and parts[1] != "1"
            and parts[2].isdigit()
            and parts[3] == pane_id
        ):
            activity.append(float(parts[2]))
    return activity


def _window_options(
    window: str, *, env: Mapping[str, str] | None, cwd: str | None, status_file: str | None
) -> list[str]:
    """new-window's (or new-session's) options: print the pane id and pid, name the window, set
    the agent's environment and directory (and, with a status file, where its status goes)."""
    where: list[str] = []
    for key, value in (env or {}).items():
        where += ["-e", f"{key}={value}"]
    if cwd:
        where += ["-c", cwd]
    options: list[str] = ["-P", "-F", "#{pane_id}\t#{pane_pid}", "-n", window, *where]
    if status_file:
        options += ["-e", f"KRONII_EXIT_FILE={status_file}"]
    return options


def _first_process(argv: Sequence[str], *, keep_on_exit: bool, status_file: str | None) -> list[str]:
    """The pane's first process. With keep_on_exit the agent waits for one line on its terminal
    before it starts (the same process then execs it, keeping pid and exit status): remain-on-exit
    must be on before it runs, or one that fails at once takes its window, and its error, with it.
    With a status file the shell stays as the pane's process and writes the agent's exit status
    there (tmux's own #{pane_dead_status} is sometimes never filled in)."""
    if status_file:
        return ["sh", "-c", _REPORT_EXIT, "kronii-start", *argv]
    if keep_on_exit:
        return ["sh", "-c", 'IFS= read -r _; exec "$@"', "kronii-start", *argv]
    return list(argv)
