"""What an agent asks the input broker to do on the desktop: one input action, validated before it is
queued. Pure values and rules, shared by the broker (its core and API) and its agents' client
(kronii.agents.broker_client), so both refuse a malformed action with the same sentence.

The broker's X adapter turns them into XTEST events through the broker's own master device."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from kronii.foundation.errors import InvalidArgument

__all__ = ["MAX_TEXT", "InputAction", "InputKind", "parse_action"]

InputKind = Literal["key", "type", "click", "move", "scroll"]
KINDS: tuple[InputKind, ...] = ("key", "type", "click", "move", "scroll")
MAX_TEXT = 10_000  # an agent may type a long block in one action; the broker checks each key (issue 30)
MAX_COORD = 32767
# "ctrl+shift+t", "Return", "alt+F4": X keysym names joined by "+".
_CHORD = re.compile(r"^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+){0,5}$")


@dataclass(frozen=True)
class InputAction:
    """One action. ``keys`` for key (a chord like "ctrl+s"), ``text`` for type, ``x``/``y`` for move
    and click (root-window pixels), ``button`` for click (1 left, 2 middle, 3 right), ``dx``/``dy``
    for scroll (notches; dy > 0 scrolls down)."""

    kind: InputKind
    keys: str = ""
    text: str = ""
    x: int = 0
    y: int = 0
    button: int = 1
    dx: int = 0
    dy: int = 0

    def describe(self) -> str:
        """For logs: never the typed text itself, only its length."""
        if self.kind == "type":
            return f"type {len(self.text)} character(s)"
        if self.kind == "key":
            return f"key {self.keys}"
        if self.kind == "scroll":
            return f"scroll {self.dx},{self.dy}"
        return f"{self.kind} {self.x},{self.y}"


def _int(body: dict[str, object], name: str, default: int, low: int, high: int) -> int:
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name} must be a whole number", field=name)
    if not low <= value <= high:
        raise InvalidArgument(f"{name} must be between {low} and {high}", field=name)
    return value


def parse_action(body: dict[str, object]) -> InputAction:
    """An InputAction from a request body, or InvalidArgument with a sentence naming the field."""
    kind = body.get("kind")
    if kind not in KINDS:
        raise InvalidArgument(f"kind must be one of {', '.join(KINDS)}", field="kind")
    if kind == "key":
        keys = body.get("keys")
        if not isinstance(keys, str) or not _CHORD.match(keys):
            raise InvalidArgument('keys must be a key chord such as "ctrl+s" or "Return"', field="keys")
        return InputAction("key", keys=keys)
    if kind == "type":
        text = body.get("text")
        if not isinstance(text, str) or not text:
            raise InvalidArgument("text must be a non-empty string", field="text")
        if len(text) > MAX_TEXT:
            raise InvalidArgument(f"text must be at most {MAX_TEXT} characters", field="text")
        return InputAction("type", text=text)
    if kind == "scroll":
        dx = _int(body, "dx", 0, -50, 50)
        dy = _int(body, "dy", 0, -50, 50)
        if dx == 0 and dy == 0:
            raise InvalidArgument("scroll needs dx or dy", field="dy")
        return InputAction("scroll", dx=dx, dy=dy)
    x = _int(body, "x", 0, 0, MAX_COORD)
    y = _int(body, "y", 0, 0, MAX_COORD)
    if kind == "move":
        return InputAction("move", x=x, y=y)
    return InputAction("click", x=x, y=y, button=_int(body, "button", 1, 1, 3))
