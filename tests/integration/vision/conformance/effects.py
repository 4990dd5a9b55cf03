"""What each intent must have done, checked by the tester on the app itself (its output, its accessible
objects read by the tester's own reader), never on what the engine says. An effect is a function of
what was seen before the intent and after it: None when the effect is there, else what was seen."""

from __future__ import annotations

from collections.abc import Callable

from tests.integration.vision.conformance.apps import Seen

__all__ = [
    "Effect",
    "all_of",
    "changes",
    "exits",
    "nothing_happens",
    "printed",
    "state_on",
    "text_shows",
    "window_opens",
]

Effect = Callable[[Seen, Seen], str | None]
TEXTS = frozenset({"text", "text box", "entry", "paragraph", "document text", "editbar"})


def _new_lines(before: Seen, after: Seen) -> list[str]:
    return list(after.output[len(before.output) :])


Marked = tuple[str, str, str, tuple[str, ...]]
State = tuple[tuple[Marked, ...], tuple[str, ...], int | None]


def changes(seen: Seen) -> State:
    """What a person would call the app's state: texts, what is checked, selected or open, its windows,
    what it printed, whether it exited. Focus and carets are left out (they move on their own)."""
    marks = ("checked", "selected", "expanded", "pressed")
    state = tuple(
        (n.role, n.name, n.text, tuple(m for m in marks if m in n.states))
        for n in seen.nodes
        if seen.shown(n)
    )
    return (state, seen.output, seen.exit_code)


def printed(fragment: str) -> Effect:
    """The app printed a new line holding `fragment` (zenity's stdout, the page's console)."""

    def check(before: Seen, after: Seen) -> str | None:
        lines = _new_lines(before, after)
        if any(fragment in line for line in lines):
            return None
        return f"no line with {fragment!r} printed (new lines: {[line[-80:] for line in lines][-6:]})"

    return check


def exits(code: int, stdout: str | None = None) -> Effect:
    """The app ended with `code` and (when given) printed exactly the line `stdout`."""

    def check(before: Seen, after: Seen) -> str | None:
        if after.exit_code != code:
            return f"the app's exit code is {after.exit_code}, not {code}"
        if stdout is not None and stdout not in _new_lines(before, after):
            return f"it printed {_new_lines(before, after)[-6:]}, not {stdout!r}"
        return None

    return check


def text_shows(expected: str, *, roles: frozenset[str] = TEXTS, exact: bool = True) -> Effect:
    """A showing text object of the app holds `expected` (all of it, or within it)."""

    def check(before: Seen, after: Seen) -> str | None:
        texts = [t.strip() for t in after.texts(roles)]
        if any((t == expected) if exact else (expected in t) for t in texts):
            return None
        return f"the app's text fields hold {texts[:6]}, none {'is' if exact else 'has'} {expected!r}"

    return check


def state_on(name: str, state: str, *, roles: frozenset[str] | None = None, present: bool = True) -> Effect:
    """The object called `name` has (or, present=False, lacks) `state` after the intent."""

    def check(before: Seen, after: Seen) -> str | None:
        nodes = after.named(name, roles)
        if not nodes:
            return f"no object called {name!r} after the intent"
        if any((state in n.states) is present for n in nodes):
            return None
        return f"{name!r} is {'not ' if present else ''}{state}: {[sorted(n.states) for n in nodes][:2]}"

    return check


def window_opens(fragment: str) -> Effect:
    """A showing window, dialog or menu whose name holds `fragment` appeared (counted, so that one already
    there does not count). Any top-level object of the app counts as a window: GTK4's file chooser is
    a top-level "widget"."""
    kinds = frozenset({"frame", "dialog", "window", "file chooser", "alert", "popup menu", "menu"})

    def matching(seen: Seen) -> list[str]:
        return [
            f"{n.role} {n.name!r}"
            for n in seen.nodes
            if (n.role in kinds or n.depth == 1) and fragment.lower() in n.name.lower() and seen.shown(n)
        ]

    def check(before: Seen, after: Seen) -> str | None:
        if len(matching(after)) > len(matching(before)):
            return None
        return f"no new window called like {fragment!r}: before {matching(before)}, after {matching(after)}"

    return check


def item_showing(name: str) -> Effect:
    """A menu (or popover) is open: its item `name` now shows."""

    def check(before: Seen, after: Seen) -> str | None:
        if after.showing(name) and not before.showing(name):
            return None
        return f"the item {name!r} {'already showed' if before.showing(name) else 'does not show'}"

    return check


def nothing_happens(before: Seen, after: Seen) -> str | None:
    """The app is as it was: nothing typed, clicked, checked, opened or printed."""
    if changes(before) == changes(after):
        return None
    old, new = changes(before), changes(after)
    lines = _new_lines(before, after)
    gone = [x for x in old[0] if x not in new[0]][:3]
    came = [x for x in new[0] if x not in old[0]][:3]
    return f"the app changed: new lines {lines[-4:]}, exit {after.exit_code}, was {gone}, now {came}"


def all_of(*effects: Effect) -> Effect:
    def check(before: Seen, after: Seen) -> str | None:
        for effect in effects:
            if (missing := effect(before, after)) is not None:
                return missing
        return None

    return check
