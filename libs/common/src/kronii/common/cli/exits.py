"""The exit codes of every `kronii` command, one vocabulary (docs/api.md, "The command line").

`kronii redact` keeps its own grading codes (0 green, 10 amber, 20 red) on top of these: a shell
pipeline branches on them."""

from __future__ import annotations

from collections.abc import Collection

__all__ = [
    "FAILED",
    "INTERRUPTED",
    "NOT_FOUND",
    "OK",
    "PIPE_CLOSED",
    "REFUSED",
    "UNREACHABLE",
    "USAGE",
    "CommandError",
    "exit_for_status",
]

OK = 0
FAILED = 1  # it ran and did not succeed (a job expired, a check found a broken chain)
USAGE = 2  # the command line or a setting is wrong: nothing was done
NOT_FOUND = 3  # what was named does not exist (a screenshot, a workspace, a window)
REFUSED = 4  # the service said no (not allowed, rate limited, no person present)
UNREACHABLE = 5  # a service or server it needs is not running or does not answer
INTERRUPTED = 130  # Ctrl-C
PIPE_CLOSED = 141  # the reader of its output went away (`| head`)


class CommandError(Exception):
    """What a command says before it exits with `code`: `kronii` prints the sentence, no traceback."""

    def __init__(self, message: str, code: int = FAILED) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def exit_for_status(status: int, *, refused: Collection[int] = (), usage: Collection[int] = ()) -> int:
    """The exit code for a service's HTTP refusal. A service names the statuses that mean more for its
    commands than a failure: `refused` (the supervisor's 409 and 423, a pane busy or a person typing)
    and `usage` (the critic's 413, a text too long to send)."""
    if status in (400, 422) or status in usage:
        return USAGE
    if status == 404:
        return NOT_FOUND
    if status in (401, 403, 429) or status in refused:
        return REFUSED
    if status in (502, 503, 504):
        return UNREACHABLE
    return FAILED
