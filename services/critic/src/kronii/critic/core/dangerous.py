"""Command lines that can do harm that cannot be undone, one row each with the reason shown to the
person. Read from the redacted line (placeholders do not change any of these shapes). The command
has already run when the critic sees it: the hint is for the next time, and for the notification."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from kronii.critic.core.command_line import program_words, simple_commands

__all__ = ["DANGER_ROWS", "DangerRow", "dangers_in"]

# (the line, the cwd) -> does the row apply
Detector = Callable[[str, str], bool]


@dataclass(frozen=True)
class DangerRow:
    name: str
    reason: str
    applies: Detector


_SHELL = r"(?:sudo\s+(?:-\S+\s+)*)?(?:/\S*/)?(?:ba|z|da|k|fi)?sh\b"
_CURL_TO_SHELL = re.compile(r"\bcurl\b[^;&|\n]*\|\s*" + _SHELL)
_WGET_TO_SHELL = re.compile(r"\bwget\b[^;&|\n]*\|\s*" + _SHELL)
_DISK_DEVICE = re.compile(r"^of=/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d)")
# Targets whose removal loses a whole tree nobody meant to lose, wherever the shell stands.
_BROAD_ANYWHERE = re.compile(r"^(?:/\*?|~/?\*?|\$\{?HOME\}?/?\*?|\.\./?\*?|(?:\.\./)+\.\.|/[^/*]+/?)$")
# A bare `*` or `.` is broad only at a top level: the root or a home directory.
_BROAD_AT_TOP = frozenset({"*", ".", "./", "./*", ".*"})
_TOP_LEVEL_CWD = re.compile(r"^(?:/|/root/?|/home/[^/]+/?|/Users/[^/]+/?|~/?)$")
_PROTECTED_BRANCH = re.compile(r"^\+?(?:[^:]*:)?(?:refs/heads/)?(?:main|master)$")


def _programs(command_line: str, name: str) -> list[list[str]]:
    """The simple commands in the line whose program is `name`, from the program word on."""
    found = []
    for words in simple_commands(command_line):
        program = program_words(words)
        if program and program[0].rsplit("/", 1)[-1] == name:
            found.append(program)
    return found


def _short_flags(words: list[str]) -> str:
    return "".join(word[1:] for word in words if word.startswith("-") and not word.startswith("--"))


def _rm_broad(command_line: str, cwd: str) -> bool:
    for words in _programs(command_line, "rm"):
        arguments = words[1:]
        flags = _short_flags(arguments)
        if not ("r" in flags or "R" in flags or "--recursive" in arguments):
            continue
        for target in (word for word in arguments if not word.startswith("-")):
            if _BROAD_ANYWHERE.match(target):
                return True
            if target in _BROAD_AT_TOP and _TOP_LEVEL_CWD.match(cwd):
                return True
    return False


def _chmod_777_recursive(command_line: str, _cwd: str) -> bool:
    for words in _programs(command_line, "chmod"):
        arguments = words[1:]
        recursive = "R" in _short_flags(arguments) or "--recursive" in arguments
        if recursive and any(word in {"777", "0777", "a+rwx", "ugo+rwx"} for word in arguments):
            return True
    return False


def _git_force_push_protected(command_line: str, _cwd: str) -> bool:
    for words in _programs(command_line, "git"):
        if "push" not in words:
            continue
        after = words[words.index("push") + 1 :]
        forced = "--force" in after or "f" in _short_flags(after)
        refs = [word for word in after if not word.startswith("-")]
        protected = [ref for ref in refs if _PROTECTED_BRANCH.match(ref)]
        if protected and (forced or any(ref.startswith("+") for ref in protected)):
            return True
    return False


def _dd_to_disk(command_line: str, _cwd: str) -> bool:
    return any(_DISK_DEVICE.match(word) for words in _programs(command_line, "dd") for word in words[1:])


def _mkfs(command_line: str, _cwd: str) -> bool:
    for words in simple_commands(command_line):
        program = program_words(words)
        if program and program[0].rsplit("/", 1)[-1].split(".", 1)[0] in {"mkfs", "mke2fs"}:
            return True
    return False


def _regex(pattern: re.Pattern[str]) -> Detector:
    return lambda command_line, _cwd: pattern.search(command_line) is not None


DANGER_ROWS: tuple[DangerRow, ...] = (
    DangerRow(
        "curl_to_shell",
        "a downloaded script ran unread: download it to a file, read it, then run it",
        _regex(_CURL_TO_SHELL),
    ),
    DangerRow(
        "wget_to_shell",
        "a downloaded script ran unread: save it with wget -O file, read it, then run it",
        _regex(_WGET_TO_SHELL),
    ),
    DangerRow(
        "chmod_777_recursive",
        "chmod -R 777 lets every user and process change every file below: grant only what is needed",
        _chmod_777_recursive,
    ),
    DangerRow(
        "rm_rf_broad",
        "rm -r on a whole tree (/, ~, $HOME, .., or * at a top level): name the exact directory",
        _rm_broad,
    ),
    DangerRow(
        "git_force_push_main",
        "a force push rewrites main/master for everyone: use --force-with-lease on a branch instead",
        _git_force_push_protected,
    ),
    DangerRow(
        "dd_to_disk",
        "dd of=/dev/<disk> overwrites a whole disk: check the device with lsblk first",
        _dd_to_disk,
    ),
    DangerRow(
        "mkfs",
        "mkfs erases the file system on the device: check the device with lsblk first",
        _mkfs,
    ),
)


def dangers_in(command_line: str, cwd: str, rows: tuple[DangerRow, ...] = DANGER_ROWS) -> list[DangerRow]:
    """The rows that apply to the line, in table order."""
    return [row for row in rows if row.applies(command_line, cwd)]
