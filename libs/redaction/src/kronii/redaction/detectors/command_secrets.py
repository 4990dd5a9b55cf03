"""Passwords passed on command lines, as they show up in shell history and terminals: `mysql -pSECRET`,
`sshpass -p SECRET`, `curl -u user:SECRET`, `openssl ... -passin pass:SECRET`, `mount -o password=SECRET`,
`htpasswd -b file user SECRET`, `PGPASSWORD=SECRET psql`.

Which flag of which tool takes a password, and how (glued, separate, after `=`, inside `user:pass`), is data:
data/cli_password_flags.toml, one entry per flag with the manual it comes from. A line holding one of the
tools' names is split into shell words and commands (`|`, `;`, `&&`); each command's arguments are read
against the table of its tool. Long flags named after a password (`--password x`) are also the keyword
detector's; the engine merges the two.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from .._types import FindingType
from ._base import Candidate, ScanText, line_bounds, literal_alternation
from ._keywords import load_data
from ._values import is_placeholder_value

__all__ = ["CommandSecretDetector", "command_rules"]

FLAGS_FILE = "cli_password_flags.toml"
# A shell word: quoted, or a run of characters that are neither blanks, quotes nor command separators
# (backquotes and parentheses open a command substitution or a subshell: a command starts after them).
_WORD = re.compile(r"""'([^'\n]*)'|"((?:[^"\\\n]|\\.)*)"|([^\s'"|;&`()]+)|([|;&`()]+)""")
_ENV_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_WINDOWS_SWITCH = re.compile(r"/[A-Za-z?]+(?::.*)?")  # `/user:bob`, `/persistent:no`; not `/etc/file`
_MIN_VALUE = 3
_NOT_LITERAL = re.compile(r"[-*]|%\w+%|<[^<>]*>")


@dataclass(frozen=True, slots=True)
class _Word:
    start: int  # of the word's value (inside its quotes)
    end: int
    text: str
    separator: bool = False


@dataclass(frozen=True, slots=True)
class FlagRule:
    commands: tuple[tuple[str, ...], ...]  # each a command word and its subcommand words
    flag: str
    forms: frozenset[str]  # "attached", "separate", "equals", "after"
    split: str = ""
    prefix: str = ""
    option_list: bool = False
    type: str = FindingType.PASSWORD


@dataclass(frozen=True, slots=True)
class PositionalRule:
    commands: tuple[tuple[str, ...], ...]
    index: int
    option: str = ""
    split: str = ""
    after_share: bool = False
    type: str = FindingType.PASSWORD


@dataclass(frozen=True, slots=True)
class CommandRules:
    flags: tuple[FlagRule, ...]
    positionals: tuple[PositionalRule, ...]
    env_names: frozenset[str]
    anchors: tuple[str, ...]  # lower-case: each command's name (and subcommand), each variable's name
    by_name: dict[str, tuple[tuple[tuple[str, ...], FlagRule | PositionalRule], ...]]  # rules by command name
    lines: re.Pattern[str]  # a command's name or a variable's after a word's start, in the lowered text
    head: re.Pattern[str]  # the same at the text's start


def _commands(entry: dict[str, Any]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(command.split()) for command in entry["commands"])


@cache
def command_rules() -> CommandRules:
    """The table of data/cli_password_flags.toml, read once."""
    data = load_data(FLAGS_FILE)
    flags = tuple(
        FlagRule(
            _commands(entry),
            entry["flag"],
            frozenset(entry["forms"]),
            entry.get("split", ""),
            entry.get("prefix", ""),
            entry.get("option_list", False),
            entry.get("type", FindingType.PASSWORD),
        )
        for entry in data.get("flag", ())
    )
    positionals = tuple(
        PositionalRule(
            _commands(entry),
            entry["index"],
            entry.get("option", ""),
            entry.get("split", ""),
            entry.get("after_share", False),
            entry.get("type", FindingType.PASSWORD),
        )
        for entry in data.get("positional", ())
    )
    env_names = frozenset(name for entry in data.get("env", ()) for name in entry["names"])
    return _indexed(flags, positionals, env_names)


def _indexed(
    flags: tuple[FlagRule, ...], positionals: tuple[PositionalRule, ...], env_names: frozenset[str]
) -> CommandRules:
    rules: tuple[FlagRule | PositionalRule, ...] = (*flags, *positionals)
    by_name: dict[str, list[tuple[tuple[str, ...], FlagRule | PositionalRule]]] = {}
    for rule in rules:
        for command in rule.commands:
            by_name.setdefault(command[0].lower(), []).append((command, rule))
    # A command is followed by a blank before its arguments (`mysql `, `docker login `, `sqlcmd.exe `), a
    # variable by "=". These literals are both the prefilter's anchors and what `lines` looks for, so the
    # filter never skips a text the detector could find something in.
    commands = {command for rule in rules for command in rule.commands}
    literals = {" ".join(command).lower() + " " for command in commands}
    literals |= {command[0].lower() + ".exe " + " ".join(command[1:]) for command in commands}
    literals = {literal if literal.endswith(" ") else literal + " " for literal in literals}
    variables = {name.lower() + "=" for name in env_names}
    anchors = tuple(sorted(literals | variables))
    # A command word starts the text or follows a blank, a separator, a quote or a directory's "/".
    trie = literal_alternation(anchors)
    lines = re.compile("[\\s|;&(`'\"/$\\\\](?:" + trie + ")")
    head = re.compile(trie)
    rules_by_name = {name: tuple(found) for name, found in by_name.items()}
    return CommandRules(flags, positionals, env_names, anchors, rules_by_name, lines, head)


class CommandSecretDetector:
    name = "command_secrets"

    @property
    def anchors(self) -> tuple[str, ...]:
        """Every tool's name and every variable's: a line without one holds no command this table knows."""
        return command_rules().anchors

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text, lower = scan.text, scan.lower
        rules = command_rules()
        position = 0
        # One pass for the tools' names as words; each line holding one is read once, whole.
        hit = rules.head.match(lower)
        while hit is not None or (hit := rules.lines.search(lower, position)) is not None:
            line_start, line_end = line_bounds(lower, hit.start(), hit.end())
            for start, end, finding_type in _line_secrets(text, line_start, line_end, rules):
                yield Candidate(finding_type, start, end, 0.85, self.name)
            position, hit = line_end, None  # the newline itself precedes the next line's command


def _shell_words(text: str, start: int, end: int) -> list[_Word]:
    words = []
    for match in _WORD.finditer(text, start, end):
        group = next(index for index in (1, 2, 3, 4) if match.group(index) is not None)
        words.append(_Word(match.start(group), match.end(group), match.group(group), group == 4))
    return words


def _line_secrets(text: str, start: int, end: int, rules: CommandRules) -> Iterator[tuple[int, int, str]]:
    command: list[_Word] = []
    for word in (*_shell_words(text, start, end), _Word(end, end, ";", True)):
        if not word.separator:
            command.append(word)
            continue
        yield from _command_secrets(text, command, rules)
        command = []


def _command_secrets(
    text: str, words: Sequence[_Word], rules: CommandRules
) -> Iterator[tuple[int, int, str]]:
    """The secrets of one simple command: its environment assignments, flags and positional arguments."""
    yield from _environment(words, rules)
    names = [_base_name(word.text) for word in words]
    for at, name in enumerate(names):
        for command, rule in rules.by_name.get(name, ()):
            arguments = _arguments(names, at, command)
            if arguments is None:
                continue
            found = (
                _flag_values(words[arguments:], rule)
                if isinstance(rule, FlagRule)
                else _positional_value(words[arguments:], rule)
            )
            for start, end in found:
                if rule.type != FindingType.SECRET or _looks_like_key(text[start:end]):
                    yield start, end, rule.type


def _environment(words: Sequence[_Word], rules: CommandRules) -> Iterator[tuple[int, int, str]]:
    """`PGPASSWORD=x psql`, `SSHPASS="x y" sshpass -e`: the assignments before the command word."""
    for index, word in enumerate(words):
        assignment = _ENV_ASSIGNMENT.match(word.text)
        if assignment is None or any(char.isspace() for char in word.text):
            return  # the command word, or a whole quoted string that only starts like an assignment
        if word.text[: assignment.end() - 1] not in rules.env_names:
            continue
        start, end, value = word.start + assignment.end(), word.end, word.text[assignment.end() :]
        following = words[index + 1] if index + 1 < len(words) else None
        if not value and following is not None and following.start == word.end + 1:
            start, end, value = following.start, following.end, following.text  # VAR="quoted value"
        for found in _checked(start, end, value):
            yield (*found, FindingType.PASSWORD)


def _looks_like_key(value: str) -> bool:
    """Access keys and tokens carry digits, or are long and of mixed case: not `default_secret_key`."""
    has_digit = any(char.isdigit() for char in value)
    return has_digit or (len(value) >= 16 and value != value.lower() and value != value.upper())


def _base_name(word: str) -> str:
    """A command word without its directory (`/usr/bin/mysql`) or Windows extension (`sqlcmd.exe`)."""
    name = word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
    return name[:-4] if name.endswith(".exe") else name


def _arguments(names: Sequence[str], at: int, command: tuple[str, ...]) -> int | None:
    """Where the arguments of the command named at `at` start: after its subcommand words, which follow it
    (`docker login`; `docker --config d login` is not read, as the prefilter's anchor is `docker login `)."""
    end = at + len(command)
    return end if tuple(names[at:end]) == command else None


def _flag_values(arguments: Sequence[_Word], rule: FlagRule) -> Iterator[tuple[int, int]]:
    flag = rule.flag
    for index, word in enumerate(arguments):
        value: tuple[int, int, str] | None = None
        if rule.option_list:
            yield from _option_list_value(word, rule)
            continue
        if word.text == flag and "separate" in rule.forms and index + 1 < len(arguments):
            following = arguments[index + 1]
            value = (following.start, following.end, following.text)
        elif word.text.startswith(flag + "=") and "equals" in rule.forms:
            cut = len(flag) + 1
            value = (word.start + cut, word.end, word.text[cut:])
        elif word.text.startswith(flag) and len(word.text) > len(flag):
            if "attached" in rule.forms and not word.text.startswith(flag + "="):
                value = (word.start + len(flag), word.end, word.text[len(flag) :])
            elif "after" in rule.forms and index + 1 < len(arguments):
                following = arguments[index + 1]
                value = (following.start, following.end, following.text)
        if value is not None:
            yield from _secret_part(*value, rule.split, rule.prefix)


def _option_list_value(word: _Word, rule: FlagRule) -> Iterator[tuple[int, int]]:
    """`-o user=x,password=SECRET,vers=3.0`: the item that starts with the flag, up to the next comma."""
    offset = 0
    for item in word.text.split(","):
        if item.startswith(rule.flag) and len(item) > len(rule.flag):
            start = word.start + offset + len(rule.flag)
            yield from _checked(start, word.start + offset + len(item), item[len(rule.flag) :])
        offset += len(item) + 1


def _positional_value(arguments: Sequence[_Word], rule: PositionalRule) -> Iterator[tuple[int, int]]:
    options = "".join(word.text[1:] for word in arguments if word.text.startswith("-") and len(word.text) > 1)
    if rule.option and rule.option not in options:
        return
    plain = [word for word in arguments if not word.text.startswith("-") and not _is_switch(word.text)]
    if rule.after_share:  # `net use Z: \\server\share SECRET`: counted from the share
        shares = [index for index, word in enumerate(plain) if word.text.startswith("\\\\")]
        plain = plain[shares[0] :] if shares else []
    if rule.index < len(plain):
        word = plain[rule.index]
        yield from _secret_part(word.start, word.end, word.text, rule.split, "")


def _is_switch(text: str) -> bool:
    return _WINDOWS_SWITCH.fullmatch(text) is not None and "/" not in text[1:]


def _secret_part(start: int, end: int, value: str, split: str, prefix: str) -> Iterator[tuple[int, int]]:
    """The secret inside a flag's value: after `split` (user:SECRET) or after `prefix` (pass:SECRET)."""
    if prefix:
        if not value.startswith(prefix):
            return  # env:VAR, file:PATH, fd:N, stdin: where the secret is, not the secret
        start, value = start + len(prefix), value[len(prefix) :]
    if split:
        cut = value.find(split)
        if cut < 0:
            return  # no password given: the tool prompts for it
        stop = value.find("@", cut) if split == "/" else -1  # sqlplus user/SECRET@db
        value = value[cut + 1 : stop if stop >= 0 else len(value)]
        start += cut + 1
        end = start + len(value)
    yield from _checked(start, end, value)


def _checked(start: int, end: int, value: str) -> Iterator[tuple[int, int]]:
    """A literal value, not a prompt (`-`, `*`), a variable (`$PASS`, `%PASS%`), a substitution or a
    placeholder (`<password>`)."""
    if len(value) < _MIN_VALUE or value.startswith("$") or _NOT_LITERAL.fullmatch(value):
        return
    if is_placeholder_value(value):
        return
    yield start, end
