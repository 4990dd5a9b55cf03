"""The spool line format: any command text and directory round-trip; long ones are cut under the
line cap and marked; malformed lines raise MalformedLine; fish's coarse start is resolved."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kronii.critic.core.model import InvocationEvent
from kronii.critic.core.spool_line import (
    MAX_COMMAND_CHARS,
    MAX_CWD_CHARS,
    MAX_LINE_BYTES,
    TRUNCATED_MARK,
    MalformedLine,
    decode_line,
    encode_line,
    escape,
    started_ms,
    unescape,
)

READ_AT = 1_700_000_000_500


def _event(command: str, cwd: str = "/home/me/project", **overrides: object) -> InvocationEvent:
    values: dict[str, object] = {
        "shell": "bash",
        "session": "4242-98765",
        "tty": "/dev/pts/3",
        "cwd": cwd,
        "command_line": command,
        "exit_status": 1,
        "started_ms": 1_700_000_000_000,
        "duration_ms": 300,
    }
    values.update(overrides)
    return InvocationEvent(**values)  # type: ignore[arg-type]


# Text of any kind: tabs, newlines, backslashes, quotes, non-ASCII, other control characters.
_texts = st.lists(
    st.characters(exclude_categories=["Cs"]) | st.sampled_from(["\\", "\t", "\n", "\r", "\\t", "'"]),
    max_size=120,
).map("".join)


@given(command=_texts, cwd=_texts)
def test_any_command_and_directory_round_trip(command: str, cwd: str) -> None:
    event = _event(command, cwd or "/")
    line = encode_line(event)
    assert line.endswith("\n") and line.count("\n") == 1
    assert decode_line(line, read_at_ms=READ_AT).event == event


@given(text=_texts)
def test_escape_leaves_no_tab_or_newline_and_unescape_inverts_it(text: str) -> None:
    escaped = escape(text)
    assert "\t" not in escaped and "\n" not in escaped and "\r" not in escaped
    assert unescape(escaped) == text


@pytest.mark.parametrize(
    "command",
    [
        "printf 'a\\tb'\t| grep \"x\"",
        "echo 'multi\nline'\r",
        "ls ünïcödé/€ 😀",
        "echo \\\\ \\n \\",
        "",
    ],
)
def test_hard_commands_round_trip(command: str) -> None:
    event = _event(command)
    assert decode_line(encode_line(event), read_at_ms=READ_AT).event.command_line == command


@given(command=st.text(min_size=MAX_COMMAND_CHARS + 1, max_size=3000), cwd=st.text(max_size=600))
def test_a_long_line_is_cut_under_the_cap_and_marked(command: str, cwd: str) -> None:
    line = encode_line(_event(command, cwd))
    assert len(line.encode("utf-8", "surrogatepass")) < MAX_LINE_BYTES
    decoded = decode_line(line, read_at_ms=READ_AT)
    assert decoded.truncated
    assert decoded.event.command_line.endswith(TRUNCATED_MARK)
    kept = decoded.event.command_line[: -len(TRUNCATED_MARK)]
    assert command.startswith(kept)
    assert len(escape(kept)) <= MAX_COMMAND_CHARS


def test_a_cut_in_the_middle_of_an_escape_drops_the_half() -> None:
    command = "a" * (MAX_COMMAND_CHARS - 1) + "\\zzz"
    decoded = decode_line(encode_line(_event(command)), read_at_ms=READ_AT)
    assert decoded.event.command_line == "a" * (MAX_COMMAND_CHARS - 1) + TRUNCATED_MARK


def test_a_long_directory_is_cut_and_marked_but_the_command_is_whole() -> None:
    cwd = "/" + "d" * (MAX_CWD_CHARS * 2)
    decoded = decode_line(encode_line(_event("make", cwd)), read_at_ms=READ_AT)
    assert decoded.event.command_line == "make"
    assert decoded.event.cwd == cwd[:MAX_CWD_CHARS] + TRUNCATED_MARK


def test_a_line_as_the_bash_hook_writes_it_decodes() -> None:
    line = "k1\tbash\t15448-5251636\t/dev/pts/0\t/work\t127\t302\t1795554604441\t\techo $'a\\\\tb'\\tx\n"
    event = decode_line(line, read_at_ms=READ_AT).event
    assert (event.exit_status, event.duration_ms, event.started_ms) == (127, 302, 1795554604441)
    assert event.command_line == "echo $'a\\tb'\tx"


@pytest.mark.parametrize(
    "line",
    [
        "",
        "garbage",
        "k2\tbash\ts\t\t/\t0\t0\t0\t\tls",
        "k1\tbash\ts\t\t/\t0\t0\t0\tls",
        "k1\tbash\ts\t\t/\tnope\t0\t0\t\tls",
        "k1\tbash\ts\t\t/\t0\tslow\t0\t\tls",
        "k1\t\ts\t\t/\t0\t0\t0\t\tls",
    ],
)
def test_malformed_lines_raise(line: str) -> None:
    with pytest.raises(MalformedLine):
        decode_line(line, read_at_ms=READ_AT)


def test_fish_coarse_start_is_the_reading_time_when_fresh_and_the_second_when_stale() -> None:
    ended_second = READ_AT // 1000
    assert started_ms(f"~{ended_second}", 300, READ_AT) == READ_AT - 300
    stale = READ_AT + 3_600_000
    assert started_ms(f"~{ended_second}", 300, stale) == ended_second * 1000 + 999 - 300
    assert started_ms("", 300, READ_AT) == READ_AT - 300
    assert started_ms("1700000000000", 300, READ_AT) == 1_700_000_000_000
