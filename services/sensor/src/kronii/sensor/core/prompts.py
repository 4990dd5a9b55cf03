"""Is the focused window a prompt (a password or yes/no asked of the person) rather than an app?

What the window is decides, not its title: its WM_CLASS instance and class and the program that owns
it, looked up in the table of prompters (kronii.desktop.prompt_windows.PROMPTERS, which the scheduler
reads too), and its _NET_WM_WINDOW_TYPE for general dialog tools (zenity, yad) that are prompts only
as dialogs. Pure: the X11 adapter reads the facts and asks here.
"""

from __future__ import annotations

from dataclasses import dataclass

from kronii.desktop.prompt_windows import prompter_named

__all__ = ["DIALOG_TYPE", "WindowFacts", "prompt_kind"]

DIALOG_TYPE = "_NET_WM_WINDOW_TYPE_DIALOG"


@dataclass(frozen=True, slots=True)
class WindowFacts:
    """What the display and /proc say about a window, beyond its title."""

    instance: str = ""  # WM_CLASS instance ("gcr-prompter")
    klass: str = ""  # WM_CLASS class ("Gcr-prompter")
    program: str = ""  # basename of argv[0] of the window's _NET_WM_PID ("gcr-prompter")
    window_types: tuple[str, ...] = ()  # _NET_WM_WINDOW_TYPE atom names


def prompt_kind(facts: WindowFacts) -> str:
    """ "keyring", "polkit", "pinentry", "ssh-askpass", "dialog" or "kronii" for a prompt window; ""
    for an app window."""
    return prompter_named(
        (facts.instance, facts.klass, facts.program), dialog=DIALOG_TYPE in facts.window_types
    )
