"""The automation compatibility audit on this machine: which of the tools in `core.compat_table` are
installed (executables on PATH, Python packages importable by the python3 interpreters on PATH) and
running, rendered as docs/AUTOMATION_COMPAT.md. `kronii broker audit` prints `audit_markdown()`.

Python packages are looked up with importlib.util.find_spec in a child interpreter, never imported:
importing pyautogui or keyboard would open the display or the input devices.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from kronii.broker.core.compat_table import TOOLS, ToolRow, render_markdown

__all__ = ["Probe", "audit_markdown", "find_executables", "probe", "python_interpreters", "running_commands"]

SHIM_MARKER = b"kronii.broker.cli.xdotool_shim"
_FIND_SPEC = """
import importlib.util, json, os, sys
found = {}
for name in sys.argv[1:]:
    top, _, rest = name.partition(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and rest:
        # A submodule is looked for as a file, so its package's __init__ does not run.
        tail = os.path.join(*rest.split("."))
        places = list(spec.submodule_search_locations or [])
        forms = (tail + ".py", os.path.join(tail, "__init__.py"))
        spec = spec if any(os.path.exists(os.path.join(p, f)) for p in places for f in forms) else None
    if spec is not None:
        found[name] = True
print(json.dumps(sorted(found)))
"""


@dataclass
class Probe:
    """What the audit found: tools installed, a note per tool, and findings to act on."""

    installed: set[str] = field(default_factory=set)
    notes: dict[str, str] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)


def find_executables(names: Iterable[str], path_value: str | None = None) -> dict[str, str]:
    """name -> the first executable of that name on PATH that is not kronii's shadow of it."""
    found: dict[str, str] = {}
    directories = (path_value if path_value is not None else os.environ.get("PATH", "")).split(os.pathsep)
    for name in names:
        for directory in filter(None, directories):
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK) and not _is_shim(candidate):
                found[name] = candidate
                break
    return found


def _is_shim(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return SHIM_MARKER in handle.read(4096)
    except OSError:
        return False


def python_interpreters(path_value: str | None = None) -> list[str]:
    """The distinct python3 interpreters on PATH (python3 and python3.N), one per real file."""
    seen: set[str] = set()
    interpreters: list[str] = []
    directories = (path_value if path_value is not None else os.environ.get("PATH", "")).split(os.pathsep)
    for directory in filter(None, directories):
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            if not _is_python3_name(name):
                continue
            candidate = os.path.join(directory, name)
            real = os.path.realpath(candidate)
            if real not in seen and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                seen.add(real)
                interpreters.append(candidate)
    return interpreters


def _is_python3_name(name: str) -> bool:
    if name == "python3":
        return True
    minor = name.removeprefix("python3.")
    return minor != name and minor.isdigit()


def importable_modules(interpreter: str, modules: Sequence[str]) -> set[str]:
    """Which of ``modules`` the interpreter would find (none when it does not run within 15 s)."""
    try:
        done = subprocess.run(
            [interpreter, "-c", _FIND_SPEC, *modules], capture_output=True, text=True, timeout=15, check=False
        )
        return set(json.loads(done.stdout or "[]"))
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return set()


def running_commands(proc: Path = Path("/proc")) -> list[list[str]]:
    """Every readable process's command line (processes of other users may be unreadable)."""
    commands: list[list[str]] = []
    for entry in proc.iterdir() if proc.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if raw:
            commands.append([part.decode(errors="replace") for part in raw.rstrip(b"\0").split(b"\0")])
    return commands


def _running_names(commands: Iterable[Sequence[str]]) -> set[str]:
    return {os.path.basename(command[0]) for command in commands if command}


def vnc_findings(commands: Iterable[Sequence[str]]) -> list[str]:
    """A finding for each running x11vnc that lets its viewers type (started without -viewonly)."""
    findings = []
    for command in commands:
        if not command or os.path.basename(command[0]) != "x11vnc":
            continue
        if {"-viewonly", "--viewonly"} & set(command[1:]):
            continue
        display = _option_value(command, "-display") or "its default display"
        findings.append(
            f"x11vnc is running without -viewonly (on {display}): its viewers' keys and pointer reach the "
            "desktop. That is right for a person's viewer (it makes the session interactive); a viewer an "
            "agent drives must connect through an x11vnc started with -viewonly."
        )
    return findings


def _option_value(command: Sequence[str], option: str) -> str:
    for index, word in enumerate(command[:-1]):
        if word == option:
            return command[index + 1]
    return ""


def probe(
    rows: Sequence[ToolRow] = TOOLS,
    *,
    path_value: str | None = None,
    commands: Sequence[Sequence[str]] | None = None,
) -> Probe:
    result = Probe()
    executables = find_executables({name for row in rows for name in row.executables}, path_value)
    modules = sorted({name for row in rows for name in row.python_modules})
    by_interpreter = {py: importable_modules(py, modules) for py in python_interpreters(path_value)}
    running = list(running_commands() if commands is None else commands)
    running_names = _running_names(running)
    for row in rows:
        note = _found_note(row, executables, by_interpreter, running_names)
        if note is not None:
            result.installed.add(row.tool)
            result.notes[row.tool] = note
    if _shadowed("xdotool", path_value):
        result.notes["xdotool"] = (result.notes.get("xdotool", "") + "; PATH-shadowed by kronii").lstrip("; ")
    result.findings = _risk_findings(rows, result.installed) + vnc_findings(running)
    return result


def _found_note(
    row: ToolRow, executables: dict[str, str], by_interpreter: dict[str, set[str]], running_names: set[str]
) -> str | None:
    """What the audit says of a tool found here (where, which pythons, running), or None when absent."""
    where = [name for name in row.executables if name in executables]
    pythons = sorted(
        {os.path.basename(py) for py, found in by_interpreter.items() if found & set(row.python_modules)}
    )
    if not where and not pythons:
        return None
    details = [", ".join(where)] if len(row.executables) > 1 else []
    if pythons:
        details.append("importable by " + ", ".join(pythons))
    if set(row.executables) & running_names:
        details.append("running")
    return "; ".join(details)


def _shadowed(name: str, path_value: str | None) -> bool:
    for directory in filter(None, (path_value or os.environ.get("PATH", "")).split(os.pathsep)):
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate):
            return _is_shim(candidate)
    return False


def _risk_findings(rows: Sequence[ToolRow], installed: set[str]) -> list[str]:
    findings = []
    for row in rows:
        if row.tool in installed and not row.compatibility.startswith("Compatible"):
            findings.append(
                f"{row.tool} is installed: it can inject input outside the broker. Plan: {row.adapter_plan}."
            )
    return findings


def audit_markdown(*, probed: Probe | None = None, now: datetime | None = None) -> str:
    """The audit document for this machine, as `kronii broker audit` prints it."""
    found = probed or probe()
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    preface = (
        f'Produced by the broker\'s compatibility audit on this machine ({stamp}): "Found" says what it saw '
        "here, the other columns hold for any machine. Re-run it with `kronii broker audit > "
        "docs/AUTOMATION_COMPAT.md` (or `python -m kronii.broker.cli.compat`)."
    )
    return render_markdown(
        TOOLS, found.installed, notes=found.notes, findings=found.findings, preface=preface
    )


if __name__ == "__main__":
    sys.stdout.write(audit_markdown())
