"""The exit codes of every `kronii` command, one vocabulary (docs/api.md, "The command line").

`kronii redact` keeps its own grading codes (0 green, 10 amber, 20 red) on top of these: a shell
pipeline branches on them."""

from __future__ import annotations

from collections.abc import Mapping

from kronii.foundation.errors import code_for_grpc_status, code_for_status

__all__ = [
    "EXIT_FOR_CODE",
    "FAILED",
    "INTERRUPTED",
    "NOT_FOUND",
    "OK",
    "PIPE_CLOSED",
    "REFUSED",
    "UNREACHABLE",
    "USAGE",
    "CommandError",
    "exit_for_error",
    "exit_for_grpc_status",
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


# What each error code of kronii.foundation.errors means for a command: the one table every CLI reads.
EXIT_FOR_CODE: Mapping[str, int] = {
    "invalid_argument": USAGE,
    "unprocessable": USAGE,
    "too_large": USAGE,  # a text too long to send: shorten it
    "not_found": NOT_FOUND,
    "unauthenticated": REFUSED,
    "permission_denied": REFUSED,
    "resource_exhausted": REFUSED,
    "failed_precondition": REFUSED,  # a pane busy, a person present, a plan no longer current
    "unavailable": UNREACHABLE,
    "starting": UNREACHABLE,
    "storage_full": UNREACHABLE,
    "internal": FAILED,
}


def exit_for_error(status: int, body: object = None) -> int:
    """The exit code for a service's HTTP refusal: by the `code` its body carries, or, from a server
    that said none (a proxy's 502), by the code its status stands for."""
    code = body.get("code") if isinstance(body, Mapping) else None
    if not isinstance(code, str) or code not in EXIT_FOR_CODE:
        code = code_for_status(status)
    return EXIT_FOR_CODE.get(code, FAILED)


def exit_for_grpc_status(name: str) -> int:
    """The exit code for a gRPC refusal, by its status name (grpc.StatusCode.X.name), through the
    same table: a command needs no grpc import to read it."""
    return EXIT_FOR_CODE.get(code_for_grpc_status(name), FAILED)
