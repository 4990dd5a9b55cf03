"""Section 11: a payload is text only. Control characters go (escape sequences whole), newlines
stay inside a multi-line prompt, trailing ones go (the submit key is sent separately), and the
size is bounded."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Payload", "PayloadError", "clean_prompt"]

# ESC sequences (CSI, OSC, two-byte) are removed whole so no "[31m" debris is left behind.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class PayloadError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Payload:
    text: str
    # One short line goes as literal keys; anything else through a named buffer and bracketed paste.
    literal: bool

    @property
    def last_line(self) -> str:
        lines = [line for line in self.text.split("\n") if line.strip()]
        return lines[-1] if lines else ""


def clean_prompt(raw: str, *, max_bytes: int, literal_max_chars: int) -> Payload:
    size = len(raw.encode("utf-8"))
    if size > max_bytes:
        raise PayloadError(f"the prompt is {size} bytes; the limit is {max_bytes}")
    text = raw.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    text = _ESCAPES.sub("", text)
    text = _CONTROLS.sub("", text)
    text = "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")
    if not text.strip():
        raise PayloadError("the prompt is empty once control characters are removed")
    literal = "\n" not in text and len(text) <= literal_max_chars
    return Payload(text=text, literal=literal)
