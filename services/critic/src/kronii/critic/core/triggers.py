"""The seed's TriggerEvaluator and its extension surface: a rule matches a record against what the
memory knows and produces critiques. Built in: Error (what worked last time), CommandNotFound (the
close name, the package), Secret (typed on the command line), Dangerous (core.dangerous) and
RepeatedFailure (offer the workspace's agent, never run anything). Every text a rule reads is
already redacted, so every line it writes is too."""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from kronii.critic.core.dangerous import dangers_in
from kronii.critic.core.model import InvocationRecord, Trigger
from kronii.critic.core.suggest import close_command, debian_package
from kronii.redaction import Category, category_of

__all__ = [
    "BUILT_IN_RULES",
    "MAX_LINE_CHARS",
    "CommandNotFoundRule",
    "Critique",
    "DangerousRule",
    "ErrorRule",
    "Evaluation",
    "MemoryView",
    "RepeatedFailureRule",
    "SecretRule",
    "Severity",
    "TriggerEvaluator",
    "TriggerRule",
    "clip",
    "failure_key",
    "is_failure",
    "strongest",
]

MAX_LINE_CHARS = 100
REPEAT_THRESHOLD = 3
REPEAT_WINDOW_MS = 3_600_000
# How long after a failure a success still counts as its fix.
FIX_WINDOW_MS = 30 * 60_000
# Ctrl-C, a closed pipe and Ctrl-Z end a command without it having failed.
_NOT_FAILURES = frozenset({130, 141, 148})
# Looking around is not a fix.
_NOT_FIXES = frozenset({"ls", "ll", "cd", "pwd", "clear", "echo", "cat", "less", "more", "man", "history"})
_PLACEHOLDER = re.compile(r"\[([A-Z][A-Z0-9_]*)_\d+\]")
_NOT_FOUND_NAME = re.compile(r"^(\S+): command not found")


class Severity(enum.IntEnum):
    INFO = 1  # shown only when Verbose
    NOTICE = 2  # shown at Normal
    WARNING = 3
    CRITICAL = 4


# Between critiques of one severity, the kind that matters more wins the prompt line.
_KIND_RANK = {
    Trigger.OK: 0,
    Trigger.ERROR: 1,
    Trigger.COMMAND_NOT_FOUND: 2,
    Trigger.REPEATED_FAILURE: 3,
    Trigger.SECRET: 4,
    Trigger.DANGEROUS: 5,
}


@dataclass(frozen=True)
class Critique:
    """``line`` goes to the prompt (at most MAX_LINE_CHARS), ``text`` to a notification;
    ``dedup_key`` is equal for critiques that say the same thing about the same failure; ``times``
    is how often a repeated failure was seen (0 for the other kinds)."""

    kind: Trigger
    line: str
    text: str
    severity: Severity
    dedup_key: str
    times: int = 0


@dataclass(frozen=True)
class MemoryView:
    """What the rules may know of the past, filled by the orchestration from the real memory:
    the last records, records of the same program, records the retrieval found similar, and the
    program names on PATH. The current record is not expected in it (and is ignored if it is)."""

    now_ms: int
    recent: tuple[InvocationRecord, ...] = ()
    same_command: tuple[InvocationRecord, ...] = ()
    similar_errors: tuple[InvocationRecord, ...] = ()
    path_commands: frozenset[str] = frozenset()

    def history(self, current: InvocationRecord) -> list[InvocationRecord]:
        """Every known record but the current one, oldest first, each once."""
        seen: dict[str, InvocationRecord] = {}
        for record in (*self.recent, *self.same_command, *self.similar_errors):
            if record.record_id != current.record_id:
                seen.setdefault(record.record_id, record)
        return sorted(seen.values(), key=lambda record: (record.timestamp_ms, record.record_id))


class TriggerRule(Protocol):
    """The seed's ITrigger. ``produce`` is called only after ``match`` said yes, and may still
    return nothing (a match with nothing useful to say)."""

    @property
    def kind(self) -> Trigger: ...

    def match(self, record: InvocationRecord, memory: MemoryView) -> bool: ...

    def produce(self, record: InvocationRecord, memory: MemoryView) -> list[Critique]: ...


def clip(text: str, limit: int = MAX_LINE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def is_failure(record: InvocationRecord) -> bool:
    return record.exit_status != 0 and record.exit_status not in _NOT_FAILURES


# How much of a command a hint names when it cannot show under that command.
_NAMED_CHARS = 32


def named(record: InvocationRecord, text: str) -> str:
    """`text` as a prompt line. The hooks wait for a hint only after a failure; the hint for a command
    that succeeded is read at the prompt after the next command, under that command's output, so it
    names the command it is about (its first characters, redacted like the record)."""
    if is_failure(record):
        return clip(text)
    command = " ".join(record.command_line.split())
    short = command if len(command) <= _NAMED_CHARS else command[: _NAMED_CHARS - 1] + "…"
    return clip(f"`{short}`: {text}")


def _normalised(text: str) -> str:
    return " ".join(re.sub(r"\d+", "#", text.lower()).split())


def failure_key(record: InvocationRecord) -> str:
    """What makes two failures "the same error": the error's type and message when the error text
    was captured (numbers ignored: line numbers, pids), else the command line and exit status."""
    if record.error_type or record.error_message:
        return f"error:{_normalised(record.error_type)}:{_normalised(record.error_message)}"
    return f"command:{record.exit_status}:{' '.join(record.command_line.split())}"


def _ago(now_ms: int, then_ms: int) -> str:
    minutes = max(0, now_ms - then_ms) // 60_000
    if minutes < 60:
        return f"{minutes} min ago"
    if minutes < 48 * 60:
        return f"{minutes // 60} h ago"
    return f"{minutes // (24 * 60)} days ago"


class ErrorRule:
    """A failure seen before: what worked after it last time."""

    kind = Trigger.ERROR

    def match(self, record: InvocationRecord, memory: MemoryView) -> bool:
        return is_failure(record) and bool(self._earlier(record, memory))

    def produce(self, record: InvocationRecord, memory: MemoryView) -> list[Critique]:
        history = memory.history(record)
        earlier = self._earlier(record, memory)
        for failure in earlier:
            fix = _fix_after(failure, history)
            if fix is not None:
                when = _ago(memory.now_ms, fix.timestamp_ms)
                return [
                    Critique(
                        self.kind,
                        clip(f"failed like this before; what worked then: {fix.command_line}"),
                        f"`{record.command_line}` failed like this before ({len(earlier)}x). "
                        f"What worked after it {when}: `{fix.command_line}` (in {fix.cwd}).",
                        Severity.NOTICE,
                        f"error:fix:{failure_key(record)}:{fix.command_line}",
                    )
                ]
        last = max(past.timestamp_ms for past in earlier)
        return [
            Critique(
                self.kind,
                clip(f"failed like this {len(earlier)}x before; no fix found in history"),
                f"`{record.command_line}` failed the same way {len(earlier)} time(s) before, last "
                f"{_ago(memory.now_ms, last)}; no later success was recorded.",
                Severity.INFO,
                f"error:seen:{failure_key(record)}",
            )
        ]

    @staticmethod
    def _earlier(record: InvocationRecord, memory: MemoryView) -> list[InvocationRecord]:
        """Earlier failures like this one, the closest likeness first, then the newest: the same
        error, then one the retrieval found similar, then the same program with the same status
        (only when no error text was captured: with one, the error itself must match)."""
        key = failure_key(record)
        similar = {hit.record_id for hit in memory.similar_errors}
        has_text = bool(record.error_type or record.error_message)
        ranked: list[tuple[int, int, InvocationRecord]] = []
        for past in memory.history(record):
            if past.timestamp_ms > record.timestamp_ms or not is_failure(past):
                continue
            if failure_key(past) == key:
                likeness = 3
            elif past.record_id in similar:
                likeness = 2
            elif not has_text and past.command_name == record.command_name:
                likeness = 1 if past.exit_status == record.exit_status else 0
            else:
                likeness = 0
            if likeness:
                ranked.append((likeness, past.timestamp_ms, past))
        ranked.sort(key=lambda entry: (entry[0], entry[1]), reverse=True)
        return [past for _likeness, _at, past in ranked]


def _fix_after(failure: InvocationRecord, history: Sequence[InvocationRecord]) -> InvocationRecord | None:
    """The success that followed `failure` in its session: the same program preferred, else the
    first one that is not just looking around."""
    following = [
        later
        for later in history
        if later.session == failure.session
        and failure.timestamp_ms < later.timestamp_ms <= failure.timestamp_ms + FIX_WINDOW_MS
        and later.exit_status == 0
        and later.command_name not in _NOT_FIXES
    ]
    same_program = [later for later in following if later.command_name == failure.command_name]
    chosen = same_program or following
    return chosen[0] if chosen else None


class CommandNotFoundRule:
    """Exit 127 or "command not found": the name that was probably meant, and the Debian package."""

    kind = Trigger.COMMAND_NOT_FOUND

    def match(self, record: InvocationRecord, memory: MemoryView) -> bool:
        return record.exit_status == 127 or "command not found" in record.error_message.lower()

    def produce(self, record: InvocationRecord, memory: MemoryView) -> list[Critique]:
        named = _NOT_FOUND_NAME.match(record.error_message)
        missing = named.group(1) if named else record.command_name
        if not missing:
            return []
        used = [past.command_name for past in memory.history(record) if past.exit_status == 0]
        meant = close_command(missing, used, memory.path_commands)
        package = debian_package(missing)
        if meant is None and package is None:
            return []
        advice = []
        if meant is not None:
            advice.append(f"did you mean `{meant}`?")
        if package is not None:
            advice.append(f"install it: sudo apt install {package.name}")
        line = clip(f"{missing}: not found; " + "; or ".join(advice))
        text = f"`{missing}` is not a command here. " + " ".join(advice)
        if package is not None and package.binary != missing:
            text += f" (the package's command is `{package.binary}`)"
        return [Critique(self.kind, line, text, Severity.NOTICE, f"command_not_found:{missing}")]


class SecretRule:
    """A secret in the command line itself: the redaction put a secret placeholder there."""

    kind = Trigger.SECRET

    def match(self, record: InvocationRecord, memory: MemoryView) -> bool:
        return record.redactions > 0 and bool(_secret_types(record.command_line))

    def produce(self, record: InvocationRecord, memory: MemoryView) -> list[Critique]:
        kinds = ", ".join(sorted(_secret_types(record.command_line)))
        return [
            Critique(
                self.kind,
                named(
                    record,
                    "a secret was typed on the command line (redacted in memory): use an env var or a file",
                ),
                f"A secret ({kinds}) was typed on the command line. kronii kept it redacted, but the "
                "shell's own history file has it: remove it there (history -d), put the value in an "
                "environment variable or a file, and rotate it if it may have leaked.",
                Severity.WARNING,
                f"secret:{record.record_id}",
            )
        ]


def _secret_types(command_line: str) -> set[str]:
    return {
        found.group(1)
        for found in _PLACEHOLDER.finditer(command_line)
        if category_of(found.group(1)) is Category.SECRET
    }


class DangerousRule:
    kind = Trigger.DANGEROUS

    def match(self, record: InvocationRecord, memory: MemoryView) -> bool:
        return bool(dangers_in(record.command_line, record.cwd))

    def produce(self, record: InvocationRecord, memory: MemoryView) -> list[Critique]:
        return [
            Critique(
                self.kind,
                named(record, f"dangerous: {row.reason}"),
                f"`{record.command_line}`: {row.reason}.",
                Severity.CRITICAL,
                f"dangerous:{row.name}:{' '.join(record.command_line.split())}",
            )
            for row in dangers_in(record.command_line, record.cwd)
        ]


class RepeatedFailureRule:
    """The same error a third time within the hour, in one session or one directory: offer the
    workspace's agent (the critic sends the supervisor an offer; the person's yes hands it over).
    Only words: the critic never runs anything."""

    kind = Trigger.REPEATED_FAILURE

    def match(self, record: InvocationRecord, memory: MemoryView) -> bool:
        return is_failure(record) and len(self._same(record, memory)) + 1 >= REPEAT_THRESHOLD

    def produce(self, record: InvocationRecord, memory: MemoryView) -> list[Critique]:
        times = len(self._same(record, memory)) + 1
        return [
            Critique(
                self.kind,
                clip(f"same failure {times}x in the last hour: hand it to your agent? (kronii agents hand)"),
                f"`{record.command_line}` failed the same way {times} times in the last hour. The "
                "workspace's agent could look at it: kronii offers it on the desktop, and your yes (the "
                "bubble's button, or kronii agents hand) hands the command and its error, redacted, to the "
                "agent's thread. Nothing is sent without it, and nothing is run.",
                Severity.WARNING,
                f"repeated_failure:{failure_key(record)}",
                times,
            )
        ]

    @staticmethod
    def _same(record: InvocationRecord, memory: MemoryView) -> list[InvocationRecord]:
        key = failure_key(record)
        since = record.timestamp_ms - REPEAT_WINDOW_MS
        return [
            past
            for past in memory.history(record)
            if since <= past.timestamp_ms <= record.timestamp_ms
            and (past.session == record.session or past.cwd == record.cwd)
            and is_failure(past)
            and failure_key(past) == key
        ]


BUILT_IN_RULES: tuple[TriggerRule, ...] = (
    DangerousRule(),
    SecretRule(),
    RepeatedFailureRule(),
    CommandNotFoundRule(),
    ErrorRule(),
)


@dataclass(frozen=True)
class Evaluation:
    critiques: tuple[Critique, ...]
    # Rules that raised (their kind); a broken third-party rule costs its own critique only.
    failed: tuple[Trigger, ...] = ()


class TriggerEvaluator:
    def __init__(self, rules: Iterable[TriggerRule] = BUILT_IN_RULES) -> None:
        unique: list[TriggerRule] = []
        for rule in rules:
            if all(rule is not known for known in unique):
                unique.append(rule)
        self._rules = tuple(unique)

    def evaluate(
        self, record: InvocationRecord, memory: MemoryView, enabled: Callable[[Trigger], bool]
    ) -> Evaluation:
        """Each enabled rule once, in order; critiques with a key seen already are left out."""
        critiques: dict[str, Critique] = {}
        failed: list[Trigger] = []
        for rule in self._rules:
            if not enabled(rule.kind):
                continue
            try:
                produced = rule.produce(record, memory) if rule.match(record, memory) else []
            except Exception:  # a rule is an extension point: one broken rule must not stop the intake
                failed.append(rule.kind)
                continue
            for critique in produced:
                critiques.setdefault(critique.dedup_key, critique)
        return Evaluation(tuple(critiques.values()), tuple(failed))


def strongest(critiques: Iterable[Critique]) -> Critique | None:
    return max(critiques, key=lambda critique: (critique.severity, _KIND_RANK[critique.kind]), default=None)
