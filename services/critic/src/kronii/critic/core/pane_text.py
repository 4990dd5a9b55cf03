"""What a failing command printed, found in the text of the pane it ran in (tmux capture-pane, wrapped
lines joined): the lines after the prompt line that holds the command, up to the end, the shell's
next prompt left out, cut to the last few KB.

The prompt itself is unknown (any PS1), so the prompt line is the last line that ends with the
command, except a shell's report that names it ("zsh: command not found: foo", "fish: Unknown
command: foo"): there the text before the command ends with a colon, which a prompt does not. A
right-hand prompt (zsh RPROMPT) on the command's line hides it: the answer is then "", never
another command's text."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["MAX_ERROR_TEXT_BYTES", "text_after_command"]

# An error's summary needs its last lines; a build log's megabytes stay out of memory.
MAX_ERROR_TEXT_BYTES = 4096


def _prompt_line_index(lines: Sequence[str], command: str) -> int | None:
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if line.endswith(command) and not _before(line, command).endswith(":"):
            return index
    return None


def _before(line: str, command: str) -> str:
    return line[: len(line) - len(command)].rstrip()


def _is_next_prompt(line: str, prompt: str) -> bool:
    """The shell's next prompt, drawn before the capture: the same as the one before, or the same
    but for a part that changes (fish shows the last status: "me@vm /src [2]#", then "[1]#")."""
    if not prompt or not line:
        return False
    if line == prompt:
        return True
    mark = prompt[-1]
    return not mark.isalnum() and line[-1] == mark and line.split()[0] == prompt.split()[0]


def _without_next_prompt(after: list[str], prompt: str) -> list[str]:
    while after and not after[-1]:
        after.pop()
    if after and _is_next_prompt(after[-1], prompt):
        after.pop()
        while after and not after[-1]:
            after.pop()
    return after


def _last_bytes(text: str, limit: int) -> str:
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text
    # A character cut in two at the start is dropped rather than shown as a replacement mark.
    return encoded[-limit:].decode("utf-8", errors="ignore")


def text_after_command(
    captured: Sequence[str], command_line: str, limit_bytes: int = MAX_ERROR_TEXT_BYTES
) -> str:
    """The text printed after ``command_line`` in the captured pane lines; "" when the command is
    not on them (scrolled away, or typed differently from how the shell reported it)."""
    command_lines = command_line.strip("\n").split("\n")
    first = command_lines[0].strip()
    if not first:
        return ""
    lines = [line.rstrip() for line in captured]
    index = _prompt_line_index(lines, first)
    if index is None:
        return ""
    # A command of several lines continues under the prompt line, one screen line per line.
    start = min(len(lines), index + len(command_lines))
    after = _without_next_prompt(lines[start:], _before(lines[index], first))
    return _last_bytes("\n".join(after), limit_bytes)
