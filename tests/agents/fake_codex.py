"""A stand-in for the Codex CLI, for tests and the benchmark.

Interactive (`codex [PROMPT]`): behaves like Codex's TUI where it matters to a supervisor. The
terminal is raw, bracketed paste is on, and there is an input line (marked U+203A) at the bottom. Six or
more characters arriving at most 8 ms apart are a paste burst, and for 120 ms after it an Enter
inserts a newline instead of submitting (codex-rs paste_burst.rs). A bracketed paste is inserted as
text. On submit, one JSON line goes to $FAKE_CODEX_LOG: the prompt, the raw bytes that built it,
and CLOCK_MONOTONIC times of its first byte and of the submit.

`codex exec resume SESSION PROMPT`: appends its argv and working directory to $FAKE_CODEX_ARGV_LOG,
waits the seconds in the file $FAKE_CODEX_RESUME_DELAY_FILE when it exists, and exits with
$FAKE_CODEX_RESUME_EXIT (default 0), or the number in the file $FAKE_CODEX_RESUME_EXIT_FILE
when it exists. With $FAKE_CODEX_FROZEN set, the TUI draws once and then hangs. A spawn (`codex PROMPT`) is recorded there too.
"""

from __future__ import annotations

import base64
import json
import os
import select
import sys
import termios
import time
import tty
from collections import deque

PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"
BURST_CHARS, BURST_GAP, BURST_WINDOW = 6, 0.008, 0.120
MARKER = "\u203a "


def _record_argv(kind: str) -> None:
    path = os.environ.get("FAKE_CODEX_ARGV_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            entry = {"kind": kind, "argv": sys.argv[1:], "cwd": os.getcwd(), "at": time.monotonic()}
            f.write(json.dumps(entry) + "\n")


class Tui:
    def __init__(self, log_path: str | None) -> None:
        self.log_path = log_path
        self.history: deque[str] = deque(maxlen=200)
        self.buffer = ""
        self.raw = bytearray()
        self.first_byte_at: float | None = None
        self.last_char_at = 0.0
        self.run = 0
        self.burst_until = 0.0
        self.in_paste = False
        self.pending = b""
        self.out = sys.stdout.buffer

    def draw(self) -> None:
        try:
            rows = os.get_terminal_size().lines
        except OSError:
            rows = 24
        box = (MARKER + self.buffer).split("\n")
        keep = max(0, rows - len(box) - 1)
        shown = list(self.history)[-keep:] if keep else []
        text = "\r\n".join([""] * (keep - len(shown)) + shown)
        body = "\r\n  ".join(box)
        self.out.write(b"\x1b[H\x1b[2J" + text.encode() + b"\r\n" + body.encode())
        self.out.flush()

    def submit(self, at: float) -> None:
        prompt = self.buffer.rstrip("\n")
        entry = {
            "prompt": prompt,
            "raw": base64.b64encode(bytes(self.raw)).decode(),
            "first_byte_at": self.first_byte_at,
            "submit_at": at,
        }
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")
        first = prompt.split("\n", 1)[0]
        self.history.append(f"submitted: {first[:60]}")
        self.history.append(f"working on it ({len(prompt)} chars)")
        self.buffer, self.raw, self.first_byte_at = "", bytearray(), None

    def feed(self, chunk: bytes, at: float) -> bool:
        if self.first_byte_at is None:
            self.first_byte_at = at
        self.raw += chunk
        data = self.pending + chunk
        self.pending = b""
        i = 0
        while i < len(data):
            if self.in_paste:
                end = data.find(PASTE_END, i)
                if end < 0:
                    self.buffer += data[i:].decode(errors="replace").replace("\r", "\n")
                    return True
                self.buffer += data[i:end].decode(errors="replace").replace("\r", "\n")
                self.in_paste = False
                i = end + len(PASTE_END)
                continue
            if data.startswith(PASTE_START, i):
                self.in_paste = True
                i += len(PASTE_START)
                continue
            if data[i : i + 1] == b"\x1b" and len(data) - i < len(PASTE_START):
                self.pending = data[i:]
                return True
            byte = data[i]
            i += 1
            if byte == 0x0D:  # Enter
                if at < self.burst_until:
                    self.buffer += "\n"
                elif self.buffer.strip():
                    self.raw = self.raw[: len(self.raw) - (len(data) - i)]
                    self.submit(at)
                    rest = data[i:]
                    if rest:
                        self.first_byte_at = at
                        self.raw = bytearray(rest)
                continue
            if byte == 0x04 and not self.buffer:
                return False
            if byte == 0x03:
                self.buffer = ""
                continue
            if byte == 0x7F:
                self.buffer = self.buffer[:-1]
                continue
            if byte < 0x20:
                continue
            self.run = self.run + 1 if at - self.last_char_at <= BURST_GAP else 1
            self.last_char_at = at
            if self.run >= BURST_CHARS:
                self.burst_until = at + BURST_WINDOW
            # Multi-byte UTF-8: take the whole character.
            start = i - 1
            while i < len(data) and 0x80 <= data[i] < 0xC0:
                i += 1
            self.buffer += data[start:i].decode(errors="replace")
        return True


def interactive(initial: str | None) -> int:
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    tui = Tui(os.environ.get("FAKE_CODEX_LOG"))
    sys.stdout.buffer.write(b"\x1b[?2004h")
    try:
        if initial:
            tui.buffer = initial
            tui.submit(time.monotonic())
        tui.draw()
        if os.environ.get("FAKE_CODEX_FROZEN"):
            # A hung agent: input is neither read nor echoed, the screen never changes.
            while True:
                time.sleep(3600)
        while True:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            at = time.monotonic()
            if not chunk or not tui.feed(chunk, at):
                return 0
            tui.draw()
    finally:
        sys.stdout.buffer.write(b"\x1b[?2004l")
        sys.stdout.flush()
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def main() -> int:
    args = sys.argv[1:]
    if args[:2] == ["exec", "resume"]:
        _record_argv("resume")
        delay_file = os.environ.get("FAKE_CODEX_RESUME_DELAY_FILE", "")
        if delay_file and os.path.exists(delay_file):
            with open(delay_file, encoding="utf-8") as f:
                time.sleep(float(f.read().strip() or "0"))
        exit_file = os.environ.get("FAKE_CODEX_RESUME_EXIT_FILE", "")
        if exit_file and os.path.exists(exit_file):
            with open(exit_file, encoding="utf-8") as f:
                return int(f.read().strip() or "0")
        return int(os.environ.get("FAKE_CODEX_RESUME_EXIT", "0"))
    if args:
        _record_argv("spawn")
    return interactive(args[0] if args else None)


if __name__ == "__main__":
    raise SystemExit(main())
