"""Reading an xdotool command line (a chain of verbs) into broker input actions, for the shim.

Follows xdotool's own argument rules: options come first after each verb (long options with one
or two dashes, `--opt value` or `--opt=value`); `key` takes key sequences up to the next verb;
`type` types every remaining argument, one after the other with nothing between them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kronii.desktop.input_actions import MAX_TEXT, parse_action
from kronii.foundation.errors import KroniiError

__all__ = [
    "FOCUS_VERBS",
    "INPUT_VERBS",
    "READ_ONLY_VERBS",
    "TYPE_STEP_CHARS",
    "ClickHere",
    "MoveBy",
    "Planned",
    "Refused",
    "Send",
    "Sleep",
    "UsageError",
    "parse",
    "route",
]

READ_ONLY_VERBS = frozenset(
    {
        "getactivewindow", "getwindowfocus", "getwindowname", "getwindowclassname", "getwindowpid",
        "getwindowgeometry", "getdisplaygeometry", "getmouselocation", "search", "selectwindow",
        "get_desktop", "get_num_desktops", "get_desktop_for_window", "get_desktop_viewport",
        "version", "help", "--help", "-h", "--version", "-v",
    }
)  # fmt: skip
FOCUS_VERBS = frozenset(
    {
        "windowactivate", "windowfocus", "windowraise", "windowlower", "windowmap", "windowunmap",
        "windowminimize", "windowmove", "windowsize", "windowkill", "windowclose", "windowquit",
        "windowreparent", "windowstate", "set_window", "set_desktop", "set_desktop_for_window",
        "set_desktop_viewport", "set_num_desktops", "behave", "behave_screen_edge", "exec",
    }
)  # fmt: skip
HALF_ACTIONS = frozenset({"keydown", "keyup", "mousedown", "mouseup"})
INPUT_VERBS = frozenset({"key", "type", "click", "mousemove", "mousemove_relative", "sleep"})
ALL_VERBS = READ_ONLY_VERBS | FOCUS_VERBS | HALF_ACTIONS | INPUT_VERBS
# Per verb: its options and whether each takes a value.
_OPTIONS: dict[str, dict[str, bool]] = {
    "key": {"clearmodifiers": False, "delay": True, "window": True, "repeat": True, "repeat-delay": True},
    "type": {"clearmodifiers": False, "delay": True, "window": True, "file": True},
    "click": {"clearmodifiers": False, "delay": True, "window": True, "repeat": True},
    "mousemove": {"clearmodifiers": False, "polar": False, "screen": True, "window": True, "sync": False},
    "mousemove_relative": {"clearmodifiers": False, "polar": False, "sync": False},
    "sleep": {},
}
_SCROLL_BUTTONS = {4: (0, -1), 5: (0, 1), 6: (-1, 0), 7: (1, 0)}
# A long `type` is sent in pieces of this many characters, with the broker's safe point between them
# (xdotool_steps), so a pause or stop the person asks for lands within one piece, not one whole text.
TYPE_STEP_CHARS = 100


class UsageError(Exception):
    """The command line is not one the shim can read (exit 2)."""


class Refused(Exception):
    """A verb the shim will not run: it would move focus, change windows, or half-press (exit 1)."""


@dataclass(frozen=True)
class Send:
    body: dict[str, object]


@dataclass(frozen=True)
class ClickHere:
    """A click where the pointer is (xdotool's click takes no position)."""

    button: int


@dataclass(frozen=True)
class MoveBy:
    dx: int
    dy: int


@dataclass(frozen=True)
class Sleep:
    seconds: float


Planned = Send | ClickHere | MoveBy | Sleep


def route(argv: Sequence[str]) -> Literal["pass", "send"]:
    """ "pass" for a chain that only reads (run by the real xdotool), "send" for one that starts with
    input; Refused or UsageError for the rest."""
    if not argv or argv[0] in READ_ONLY_VERBS:
        # Lookup options are many (search alone has a dozen): a later verb is found by name.
        later = set(argv[1:])
        if later & (FOCUS_VERBS | HALF_ACTIONS):
            raise Refused(_refusal(sorted(later & (FOCUS_VERBS | HALF_ACTIONS))[0]))
        if later & (INPUT_VERBS - {"sleep"}):
            raise UsageError(
                "a chain of window lookups and input cannot go through the broker: run the lookup, "
                "then the input as its own xdotool command (it goes to the window the lease names)"
            )
        return "pass"
    if argv[0] in FOCUS_VERBS or argv[0] in HALF_ACTIONS:
        raise Refused(_refusal(argv[0]))
    if argv[0] not in INPUT_VERBS:
        raise UsageError(f"xdotool {argv[0]}: not a verb the kronii shadow of xdotool knows")
    return "send"


def _refusal(verb: str) -> str:
    if verb in HALF_ACTIONS:
        whole = "key ctrl+s" if verb.startswith("key") else "click 1"
        return (
            f"xdotool {verb} is refused: the broker injects whole key presses and clicks only "
            f"(use e.g. `xdotool {whole}`)"
        )
    return (
        f"xdotool {verb} is refused: automation may not change focus or windows on the desktop; "
        "the broker sends input to the window the desktop user's grant names"
    )


def parse(argv: Sequence[str]) -> list[Planned]:
    """Every action of a chain that starts with an input verb, checked before anything is sent."""
    plan: list[Planned] = []
    index = 0
    while index < len(argv):
        verb = argv[index]
        if verb in FOCUS_VERBS or verb in HALF_ACTIONS:
            raise Refused(_refusal(verb))
        if verb not in INPUT_VERBS:
            raise UsageError(f"xdotool {verb}: not an input verb the kronii shadow of xdotool can chain")
        options, index = _options(verb, argv, index + 1)
        if "window" in options:
            raise Refused(
                f"xdotool {verb} --window is refused: the broker sends input only to the window the "
                "desktop user's grant names, never to another one"
            )
        if "polar" in options or options.get("screen", "0") != "0":
            raise UsageError(f"xdotool {verb}: --polar and --screen are not supported through the broker")
        arguments, index = _arguments(verb, argv, index)
        plan.extend(_plan(verb, options, arguments))
    return plan


def _options(verb: str, argv: Sequence[str], index: int) -> tuple[dict[str, str], int]:
    known = _OPTIONS[verb]
    options: dict[str, str] = {}
    while index < len(argv):
        word = argv[index]
        if word == "--":
            return options, index + 1
        if not word.startswith("-") or len(word) < 2 or word[1:2].isdigit():
            break
        name, _, value = word.lstrip("-").partition("=")
        if name not in known:
            raise UsageError(f"xdotool {verb}: unknown option {word}")
        if known[name] and not value:
            index += 1
            if index >= len(argv):
                raise UsageError(f"xdotool {verb}: --{name} needs a value")
            value = argv[index]
        options[name] = value or "1"
        index += 1
    return options, index


def _arguments(verb: str, argv: Sequence[str], index: int) -> tuple[list[str], int]:
    if verb == "type":
        return list(argv[index:]), len(argv)
    if verb == "key":
        end = index
        while end < len(argv) and argv[end] not in ALL_VERBS:
            end += 1
        return list(argv[index:end]), end
    wanted = {"click": 1, "sleep": 1, "mousemove": 2, "mousemove_relative": 2}[verb]
    if verb == "mousemove" and index < len(argv) and argv[index] == "restore":
        raise UsageError("xdotool mousemove restore is not supported through the broker")
    arguments = list(argv[index : index + wanted])
    if len(arguments) < wanted:
        raise UsageError(f"xdotool {verb} needs {wanted} argument(s)")
    return arguments, index + wanted


def _plan(verb: str, options: dict[str, str], arguments: list[str]) -> list[Planned]:
    if verb == "key":
        if not arguments:
            raise UsageError("xdotool key needs at least one key sequence, such as ctrl+s")
        chords = [_checked({"kind": "key", "keys": chord}) for chord in arguments]
        return _repeated(chords, options, "repeat-delay")
    if verb == "type":
        return _typing(options, arguments)
    if verb == "sleep":
        return [Sleep(_seconds(arguments[0]))]
    if verb == "click":
        return _repeated([_click(arguments[0])], options, "delay")
    x, y = (_whole(verb, value) for value in arguments)
    if verb == "mousemove_relative":
        return [MoveBy(x, y)]
    return [_checked({"kind": "move", "x": x, "y": y})]


def _typing(options: dict[str, str], arguments: list[str]) -> list[Planned]:
    text = "".join(arguments)
    if "file" in options:
        source = options["file"]
        try:
            text = _read_stdin() if source == "-" else Path(source).read_text()
        except OSError as error:
            raise UsageError(f"xdotool type --file: cannot read {source}: {error.strerror}") from None
    if not text:
        raise UsageError("xdotool type needs something to type")
    step = min(TYPE_STEP_CHARS, MAX_TEXT)
    return [_checked({"kind": "type", "text": text[at : at + step]}) for at in range(0, len(text), step)]


def _read_stdin() -> str:
    import sys

    return sys.stdin.read()


def _click(argument: str) -> Planned:
    button = _whole("click", argument)
    if button in _SCROLL_BUTTONS:
        dx, dy = _SCROLL_BUTTONS[button]
        return _checked({"kind": "scroll", "dx": dx, "dy": dy})
    if button not in (1, 2, 3):
        raise UsageError(f"xdotool click {button}: the broker clicks buttons 1 to 3 and scrolls with 4 to 7")
    return ClickHere(button)


def _repeated(actions: Sequence[Planned], options: dict[str, str], pause_option: str) -> list[Planned]:
    times = _whole("--repeat", options.get("repeat", "1"))
    if not 1 <= times <= 100:
        raise UsageError("--repeat must be between 1 and 100")
    # Between repeats: click's --delay; key's --delay is between keystrokes, its --repeat-delay between repeats.
    pause_ms = _whole(f"--{pause_option}", options.get(pause_option, "0"))
    plan: list[Planned] = []
    for count in range(times):
        if count and pause_ms > 0:
            plan.append(Sleep(pause_ms / 1000))
        plan.extend(actions)
    return plan


def _whole(what: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"xdotool {what}: {text!r} is not a whole number") from None


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise UsageError(f"xdotool sleep: {text!r} is not a number of seconds") from None
    if not 0 <= seconds <= 3600:
        raise UsageError("xdotool sleep: seconds must be between 0 and 3600")
    return seconds


def _checked(body: dict[str, object]) -> Send:
    try:
        parse_action(body)
    except KroniiError as error:
        raise UsageError(f"xdotool: {error.message}") from None
    return Send(body)
