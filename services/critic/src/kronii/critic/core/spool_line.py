"""The one-line record a shell hook appends to the critic's spool, and its reading.

The hooks write it with shell builtins only (no process per command), so the format is what a shell
can produce with parameter expansion: tab-separated fields, one line, UTF-8 text as the shell has it::

    k1 <TAB> shell <TAB> session <TAB> tty <TAB> cwd <TAB> exit <TAB> duration_ms <TAB> started <TAB> flags <TAB> command

- Text fields (shell, session, tty, cwd, command) escape ``\\`` as ``\\\\``, TAB as ``\\t``, LF as ``\\n``
  and CR as ``\\r``; nothing else is touched (other control characters and non-ASCII pass as they are,
  bytes that are not UTF-8 are replaced when read).
- ``started`` is the start in ms since the epoch; or ``~S``, the second (from a file's mtime) the
  command ended in, when the shell has no finer clock (fish); or empty when unknown. Then the reader
  stamps it (see started_ms).
- ``flags``: ``t`` when the hook cut the command short to keep the line under MAX_LINE_BYTES, ``w`` when
  it cut the cwd; the text read back then ends with TRUNCATED_MARK.

The line stays under MAX_LINE_BYTES so that one ``>>`` append is one write(2): lines from several
shells appending at once never interleave. Pure: no I/O here."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.critic.core.model import InvocationEvent

__all__ = [
    "MAX_COMMAND_CHARS",
    "MAX_CWD_CHARS",
    "MAX_LINE_BYTES",
    "TAG",
    "TRUNCATED_MARK",
    "MalformedLine",
    "SpoolLine",
    "decode_line",
    "encode_line",
    "escape",
    "started_ms",
    "unescape",
]

TAG = "k1"
MAX_LINE_BYTES = 4000
# Caps on the escaped text, in characters, so that the line stays under MAX_LINE_BYTES even when every
# character takes four bytes: 4 * (800 + 150) plus the short fields is under 4000. The shell scripts
# get these numbers from here.
MAX_COMMAND_CHARS = 800
MAX_CWD_CHARS = 150
_MAX_SHORT_CHARS = 24  # shell, session and tty, each
TRUNCATED_MARK = " …"
_FIELDS = 10
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


class MalformedLine(ValueError):
    """A spool line that is not in this format (the reader counts and skips it)."""


@dataclass(frozen=True)
class SpoolLine:
    """A decoded line: the event, and how its start time is known (``started`` as written)."""

    event: InvocationEvent
    started: str
    truncated: bool


def escape(text: str) -> str:
    """What the hooks do to a text field: backslash, tab, newline and carriage return escaped."""
    return "".join(_ESCAPES.get(char, char) for char in text)


def unescape(text: str) -> str:
    """The inverse of escape. A lone backslash at the end (a cut in the middle of an escape) is
    dropped; an unknown escape keeps its character."""
    if "\\" not in text:
        return text
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char != "\\":
            out.append(char)
            index += 1
            continue
        if index + 1 == len(text):
            break
        following = text[index + 1]
        out.append(_UNESCAPES.get(following, following))
        index += 2
    return "".join(out)


def _cut(escaped: str, limit: int) -> tuple[str, bool]:
    if len(escaped) <= limit:
        return escaped, False
    cut = escaped[:limit]
    # An odd run of backslashes at the end means the cut split an escape pair: drop its first half.
    trailing = len(cut) - len(cut.rstrip("\\"))
    return (cut[:-1] if trailing % 2 else cut), True


def encode_line(event: InvocationEvent, *, started: str | None = None) -> str:
    """The line a hook writes for ``event`` (with its newline), cut like the hooks cut it. ``started``
    overrides the start field (``"~S"`` or ``""``, as fish writes it)."""
    command, cut_command = _cut(escape(event.command_line), MAX_COMMAND_CHARS)
    cwd, cut_cwd = _cut(escape(event.cwd), MAX_CWD_CHARS)
    short = [escape(value)[:_MAX_SHORT_CHARS] for value in (event.shell, event.session, event.tty)]
    fields = [
        TAG,
        *short,
        cwd,
        str(event.exit_status),
        str(event.duration_ms),
        str(event.started_ms) if started is None else started,
        ("t" if cut_command else "") + ("w" if cut_cwd else ""),
        command,
    ]
    return "\t".join(fields) + "\n"


def _integer(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise MalformedLine(f"{name} is not a number: {text[:20]!r}") from None


def started_ms(started: str, duration_ms: int, read_at_ms: int) -> int:
    """The start of a command from its line's ``started`` field and the time the line was read.
    Exact ms when the hook knew them; from fish's whole second ``~S`` it is the time of reading minus
    the duration when the line is fresh (read within that second or the next), else the end of that
    second minus the duration; with nothing, the time of reading minus the duration."""
    if started.isdigit():
        return int(started)
    estimate = read_at_ms - duration_ms
    if started.startswith("~") and started[1:].isdigit():
        ended_second_ms = int(started[1:]) * 1000
        if ended_second_ms <= read_at_ms < ended_second_ms + 2000:
            return estimate
        return ended_second_ms + 999 - duration_ms
    return estimate


def decode_line(line: str, *, read_at_ms: int) -> SpoolLine:
    """A spool line (with or without its newline) as an event; raises MalformedLine."""
    fields = line.rstrip("\n").split("\t")
    if len(fields) != _FIELDS or fields[0] != TAG:
        raise MalformedLine(f"expected {_FIELDS} tab-separated fields starting with {TAG!r}")
    _, shell, session, tty, cwd, exit_text, duration_text, started, flags, command = fields
    if not shell or not session:
        raise MalformedLine("shell and session must not be empty")
    duration = max(0, _integer(duration_text or "0", "duration"))
    command_line = unescape(command) + (TRUNCATED_MARK if "t" in flags else "")
    event = InvocationEvent(
        shell=unescape(shell),
        session=unescape(session),
        tty=unescape(tty),
        cwd=unescape(cwd) + (TRUNCATED_MARK if "w" in flags else ""),
        command_line=command_line,
        exit_status=_integer(exit_text, "exit status"),
        started_ms=started_ms(started, duration, read_at_ms),
        duration_ms=duration,
    )
    return SpoolLine(event=event, started=started, truncated="t" in flags or "w" in flags)
