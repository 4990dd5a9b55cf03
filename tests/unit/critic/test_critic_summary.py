"""The rules summariser: the kind of error and its one line, for the error shapes people meet most."""

from __future__ import annotations

import time

import pytest
from kronii.critic.core.summary import MAX_MESSAGE_CHARS, summarise_error

PYTHON = """Traceback (most recent call last):
  File "app.py", line 1, in <module>
    import requests
ModuleNotFoundError: No module named 'requests'
"""
CARGO = """   Compiling demo v0.1.0
\x1b[1m\x1b[31merror[E0425]\x1b[0m: cannot find value `x` in this scope
 --> src/main.rs:2:5
error: could not compile `demo`
"""
NPM = """npm ERR! code E404
npm ERR! 404 Not Found - GET https://registry.example/left-padx - Not found
npm ERR! A complete log of this run can be found in: /home/[USERNAME_1]/.npm/_logs/x.log
"""
GCC = """main.c: In function 'main':
main.c:3:5: error: 'x' undeclared (first use in this function)
"""


@pytest.mark.parametrize(
    ("text", "error_type", "message"),
    [
        (PYTHON, "ModuleNotFoundError", "No module named 'requests'"),
        ("bash: gti: command not found\n", "command_not_found", "gti: command not found"),
        ("zsh: command not found: gti\n", "command_not_found", "gti: command not found"),
        ("fish: Unknown command: gti\n", "command_not_found", "gti: command not found"),
        ("sh: 1: gti: not found\n", "command_not_found", "gti: command not found"),
        ("cat: /etc/shadow: Permission denied\n", "permission_denied", "cat: /etc/shadow: Permission denied"),
        (NPM, "npm E404", "404 Not Found - GET https://registry.example/left-padx - Not found"),
        (CARGO, "rust E0425", "cannot find value `x` in this scope"),
        (GCC, "compile error", "'x' undeclared (first use in this function)"),
        ("fatal: not a git repository (or any of the parent directories): .git\n", "fatal",
         "not a git repository (or any of the parent directories): .git"),
        ("some output\n\nsomething else went wrong   \n\n", "error", "something else went wrong"),
    ],
)  # fmt: skip
def test_summary_recognises_the_error(text: str, error_type: str, message: str) -> None:
    summary = summarise_error(text)
    assert (summary.error_type, summary.message) == (error_type, message)
    assert summary.line == f"{error_type}: {message}"


def test_empty_text_has_no_summary() -> None:
    summary = summarise_error("  \n\n")
    assert (summary.error_type, summary.message, summary.line) == ("", "", "")


def test_message_is_one_bounded_line() -> None:
    summary = summarise_error("x" * 5000)
    assert len(summary.message) == MAX_MESSAGE_CHARS and "\n" not in summary.message


def test_a_large_screen_is_summarised_well_within_the_budget() -> None:
    screen = ("compiling something somewhere\n" * 2000) + PYTHON
    started = time.perf_counter()
    summary = summarise_error(screen)
    assert time.perf_counter() - started < 0.3
    assert summary.error_type == "ModuleNotFoundError"
