"""The `kronii` command's entry point. It imports nothing heavy itself: the plain `kronii control stop`,
the one command a person types in a hurry, goes straight to the broker's stop socket
(kronii.launcher.cli.quick_stop: the standard library only, well under 100 ms); every other command,
and a stop the fast path cannot settle, runs through the click shell (kronii.launcher.cli.shell).

The shell's names (`cli`, `command_for`, ...) are still reachable here, loaded when first named."""

from __future__ import annotations

import os
import sys

# `typing` and `collections.abc` cost more than the whole fast stop: named for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = ["main"]

_FAST_STOP = ["control", "stop"]


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments == _FAST_STOP and "_KRONII_COMPLETE" not in os.environ:
        from kronii.launcher.cli.quick_stop import stop

        code = stop()
        if code is not None:
            return code
    from kronii.launcher.cli.shell import main as shell_main

    return shell_main(arguments)


def __getattr__(name: str) -> Any:
    if name.startswith("__"):  # the import system's questions (`from ... import main` asks for __path__)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from kronii.launcher.cli import shell

    try:
        return getattr(shell, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


if __name__ == "__main__":
    raise SystemExit(main())
