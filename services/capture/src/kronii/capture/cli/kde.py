"""`kronii capture kde allow|status|revoke`: the person's grant that lets capture take frames on KDE
Plasma. KWin gives frames (ScreenShot2) only to an executable a desktop file authorises, so `allow`
copies the interpreter kronii runs in to $XDG_DATA_HOME/kronii/kwin-screenshot/kronii-capture and
writes a desktop file authorising that copy alone (kronii.desktop.kwin_screenshot); `revoke` removes
both. Any program you run could run that copy too, as it could any program you authorise for
ScreenShot2: the grant is yours to give and take back.

Exit codes (kronii.launcher.cli.exits): 0 done (status: the grant holds); 1 status: it does not hold;
3 revoke: there was none."""

from __future__ import annotations

import os

import click
from kronii.desktop.kwin_screenshot import SCREENSHOT_INTERFACE, grant_for
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError

__all__ = ["kde_command"]


@click.group("kde", short_help="let capture take frames on KDE Plasma (KWin's ScreenShot2)")
def kde_command() -> None:
    """Your grant for capture on KDE Plasma: KWin gives frames only to a program you authorise."""


@kde_command.command("allow")
def allow() -> None:
    """Authorise kronii's own copy of its interpreter for KWin's ScreenShot2."""
    grant = grant_for(os.environ)
    try:
        grant.write()
    except OSError as error:
        raise CommandError(f"cannot write the grant: {error}", exits.FAILED) from None
    click.echo(f"copied {grant.original} to {grant.interpreter}")
    click.echo(f"wrote {grant.desktop_file} ({SCREENSHOT_INTERFACE})")
    click.echo("KWin reads it within seconds; capture takes the focused window's frames from then on.")


@kde_command.command("status")
def status() -> None:
    """Whether the grant holds."""
    grant = grant_for(os.environ)
    problem = grant.problem()
    click.echo(f"interpreter copy: {grant.interpreter}")
    click.echo(f"desktop file: {grant.desktop_file}")
    if problem:
        raise CommandError(problem, exits.FAILED)
    click.echo("the grant holds")


@kde_command.command("revoke")
def revoke() -> None:
    """Remove the copy and its desktop file."""
    grant = grant_for(os.environ)
    if not grant.remove():
        raise CommandError(f"no grant to revoke ({grant.desktop_file})", exits.NOT_FOUND)
    click.echo("removed kronii's interpreter copy and its desktop file; KWin refuses it from now on")
