"""A shell command line read just enough to judge it: the simple commands it runs and the program
each one starts. Not a shell parser: quotes are honoured when they balance, and an unbalanced line
falls back to splitting on spaces, which is good enough for a hint and never raises."""

from __future__ import annotations

import re
import shlex

__all__ = ["command_name", "program_words", "reports_itself", "simple_commands"]

# Where one simple command ends and the next begins; `|` is kept apart by callers that need it.
_SEPARATORS = re.compile(r"\|\||&&|[;|&\n]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# Wrappers that run the next word as the program; their own options are skipped, and these options
# take the next word as their value (`sudo -u bob make`).
_WRAPPERS = frozenset({"sudo", "doas", "env", "command", "exec", "nohup", "time", "nice", "builtin"})
_VALUED_OPTIONS = frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-n"})


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError:  # an unbalanced quote: the person is still typing, or it is not sh syntax
        return text.split()


def simple_commands(command_line: str) -> list[list[str]]:
    """The words of each simple command, in order; empty ones left out."""
    found = []
    for part in _SEPARATORS.split(command_line):
        words = _words(part)
        if words:
            found.append(words)
    return found


def program_words(words: list[str]) -> list[str]:
    """The words from the program on: environment assignments, `sudo` and the like (with their
    options) taken off the front."""
    index = 0
    while index < len(words):
        word = words[index]
        if _ASSIGNMENT.match(word):
            index += 1
        elif word in _WRAPPERS:
            index += 1
            while index < len(words) and words[index].startswith("-"):
                index += 2 if words[index] in _VALUED_OPTIONS else 1
        else:
            break
    return words[index:]


def command_name(command_line: str) -> str:
    """The program the line starts: `git` for `FOO=1 sudo -E git push`; "" for an empty line."""
    for words in simple_commands(command_line):
        program = program_words(words)
        if program:
            return program[0].rsplit("/", 1)[-1] if "/" in program[0] else program[0]
    return ""


def reports_itself(command_line: str) -> bool:
    """`kronii run -- CMD` as a shell hook saw it: the run tells the critic itself, with the
    command's error text, so the hook's own line for it is the same command told twice."""
    commands = simple_commands(command_line)
    if len(commands) != 1:
        return False
    program = program_words(commands[0])
    return len(program) >= 2 and program[0].rsplit("/", 1)[-1] == "kronii" and program[1] == "run"
