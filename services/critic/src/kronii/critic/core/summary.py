"""The rules summariser (the seed's Summarise, without a model): the kind of an error and one line
that says it, read from the text a failing command printed. Always given redacted text: the line
it returns is stored and shown as is. Linear in the text; a few hundred microseconds for a screen."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["MAX_MESSAGE_CHARS", "ErrorSummary", "summarise_error"]

MAX_MESSAGE_CHARS = 200

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_TRACEBACK = "Traceback (most recent call last):"
_PYTHON_LAST = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt|Fault))(?::\s*(.*))?$")
# bash: "bash: foo: command not found", "foo: not found" (dash); zsh: "zsh: command not found: foo";
# fish: "fish: Unknown command: foo".
_NOT_FOUND = (
    re.compile(r"(?:^|:\s)([^\s:]+): (?:command )?not found\s*$"),
    re.compile(r"command not found:\s*(\S+)"),
    re.compile(r"Unknown command:?\s*'?([^\s']+)'?"),
)
_RUST = re.compile(r"^error\[(E\d{4})\]:\s*(.+)$")
_NPM = re.compile(r"^npm (?:ERR!|error)\s*(.*)$")
_NPM_CODE = re.compile(r"^code\s+(\S+)$")
_NPM_NOISE = re.compile(r"^(?:code|errno|syscall|path|dest|A complete log|Log files|$)")
_FATAL = re.compile(r"^fatal:\s*(.+)$")
_COMPILER = re.compile(r"^(?:(\S+?):\d+(?::\d+)?:\s*)?(?:fatal )?error:\s*(.+)$")
_PERMISSION = "Permission denied"


@dataclass(frozen=True)
class ErrorSummary:
    error_type: str
    message: str

    @property
    def line(self) -> str:
        if not self.error_type:
            return self.message
        return f"{self.error_type}: {self.message}" if self.message else self.error_type


_NOTHING = ErrorSummary("", "")


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= MAX_MESSAGE_CHARS:
        return flat
    return flat[: MAX_MESSAGE_CHARS - 1] + "…"


def _python(lines: list[str]) -> ErrorSummary | None:
    if not any(_TRACEBACK in line for line in lines):
        return None
    last = _PYTHON_LAST.match(lines[-1].strip())
    if last is None:
        return ErrorSummary("python", _one_line(lines[-1]))
    return ErrorSummary(last.group(1).rsplit(".", 1)[-1], _one_line(last.group(2) or ""))


def _not_found(lines: list[str]) -> ErrorSummary | None:
    for line in lines:
        for pattern in _NOT_FOUND:
            found = pattern.search(line)
            if found:
                return ErrorSummary("command_not_found", f"{found.group(1)}: command not found")
    return None


def _rust(lines: list[str]) -> ErrorSummary | None:
    for line in lines:
        found = _RUST.match(line.strip())
        if found:
            return ErrorSummary(f"rust {found.group(1)}", _one_line(found.group(2)))
    return None


def _npm(lines: list[str]) -> ErrorSummary | None:
    bodies = [found.group(1).strip() for line in lines if (found := _NPM.match(line.strip()))]
    if not bodies:
        return None
    code = next((found.group(1) for body in bodies if (found := _NPM_CODE.match(body))), "")
    said = next((body for body in bodies if not _NPM_NOISE.match(body)), bodies[-1])
    return ErrorSummary(f"npm {code}" if code else "npm", _one_line(said))


def _fatal(lines: list[str]) -> ErrorSummary | None:
    for line in lines:
        found = _FATAL.match(line.strip())
        if found:
            return ErrorSummary("fatal", _one_line(found.group(1)))
    return None


def _compiler(lines: list[str]) -> ErrorSummary | None:
    for line in lines:
        found = _COMPILER.match(line.strip())
        if found:
            return ErrorSummary("compile error" if found.group(1) else "error", _one_line(found.group(2)))
    return None


def _permission(lines: list[str]) -> ErrorSummary | None:
    for line in lines:
        if _PERMISSION in line:
            return ErrorSummary("permission_denied", _one_line(line))
    return None


def _python_line(lines: list[str]) -> ErrorSummary | None:
    last = _PYTHON_LAST.match(lines[-1].strip())
    if last is None:
        return None
    return ErrorSummary(last.group(1).rsplit(".", 1)[-1], _one_line(last.group(2) or ""))


_RULES: tuple[Callable[[list[str]], ErrorSummary | None], ...] = (
    _python,
    _not_found,
    _rust,
    _npm,
    _fatal,
    _compiler,
    _permission,
    _python_line,
)


def summarise_error(redacted_text: str) -> ErrorSummary:
    """The first rule that recognises the text wins, most specific first; else the last line."""
    lines = [line for line in _ANSI.sub("", redacted_text).splitlines() if line.strip()]
    if not lines:
        return _NOTHING
    for rule in _RULES:
        summary = rule(lines)
        if summary is not None:
            return summary
    return ErrorSummary("error", _one_line(lines[-1]))
