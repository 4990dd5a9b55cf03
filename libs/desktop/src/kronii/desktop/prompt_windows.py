"""Which windows are prompts, not apps: the system's authentication and secret prompts and kronii's own.

A window that asks the person for a password or a yes (gnome-keyring's gcr-prompter, a polkit agent,
pinentry, ssh-askpass, a zenity/yad dialog, a kronii window) is not the person switching to an app:
the sensor reports it as a prompt shown over the app they were in, and the scheduler plans no app
cooldown or wake-up for it. One data table, read by both (the sensor's core adds the window type).

A window is told by what it is: its WM_CLASS instance or class, or the program that owns it (argv[0]
of its _NET_WM_PID), named in PROMPTERS; a general dialog tool (zenity, yad, kdialog) counts only
for a window of type _NET_WM_WINDOW_TYPE_DIALOG. The name "kronii", or one starting with "kronii-"
(a zenity started with `--class kronii-confirm`), is kronii's own window.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["KRONII_PREFIX", "PROMPTERS", "Prompter", "prompter_for_app", "prompter_named"]

KRONII_PREFIX = "kronii"


@dataclass(frozen=True)
class Prompter:
    """A class of programs whose windows are prompts. ``names`` are lower-case WM_CLASS instance or
    class names and program names; ``dialog_only`` marks general tools whose non-dialog windows may
    be something else."""

    kind: str
    names: frozenset[str]
    dialog_only: bool = False


PROMPTERS: tuple[Prompter, ...] = (
    Prompter(
        "keyring",
        frozenset(
            {
                "gcr-prompter",
                "gnome-keyring-prompt",
                "gnome-keyring-ask",
                "ksecretd",
                "kwalletd5",
                "kwalletd6",
            }
        ),
    ),
    Prompter(
        "polkit",
        frozenset(
            {
                "polkit-gnome-authentication-agent-1",
                "polkit-kde-authentication-agent-1",
                "polkit-mate-authentication-agent-1",
                "lxpolkit",
                "lxqt-policykit-agent",
                "xfce-polkit",
                "hyprpolkitagent",
                "soteria",
            }
        ),
    ),
    Prompter(
        "pinentry",
        frozenset(
            {
                "pinentry",
                "pinentry-gtk",
                "pinentry-gtk-2",
                "pinentry-gnome3",
                "pinentry-qt",
                "pinentry-qt5",
                "pinentry-fltk",
            }
        ),
    ),
    Prompter(
        "ssh-askpass",
        frozenset(
            {
                "ssh-askpass",
                "gnome-ssh-askpass",
                "gcr-ssh-askpass",
                "ksshaskpass",
                "x11-ssh-askpass",
                "lxqt-openssh-askpass",
                "ssh-askpass-fullscreen",
            }
        ),
    ),
    Prompter("dialog", frozenset({"zenity", "yad", "kdialog", "qarma"}), dialog_only=True),
)


def prompter_named(names: Iterable[str], *, dialog: bool) -> str:
    """The kind of prompt ("keyring", "polkit", ..., "kronii") a window with these names (WM_CLASS
    instance and class, program) is, or "" for an app window. ``dialog``: the window's type is
    _NET_WM_WINDOW_TYPE_DIALOG."""
    lowered = {name.strip().lower() for name in names if name and name.strip()}
    if any(name == KRONII_PREFIX or name.startswith(KRONII_PREFIX + "-") for name in lowered):
        return "kronii"
    for prompter in PROMPTERS:
        if lowered & prompter.names and (dialog or not prompter.dialog_only):
            return prompter.kind
    return ""


def prompter_for_app(app: str) -> str:
    """The kind of prompt an app name (the class part of WM_CLASS, as plans and triggers carry it)
    belongs to, or "" for an app. Without the window type a general dialog tool does not count."""
    return prompter_named([app], dialog=False)
