"""`kronii doctor`: which desktop session this is, and what each host agent can do in it, a sentence each.

It asks the session itself (kronii.desktop.session), not the services: it answers before `kronii up`,
and says why a host agent would sense, capture or act on nothing here."""

from __future__ import annotations

import json

import click
from kronii.launcher.cli import exits

__all__ = ["doctor"]

_COLUMNS = ("AGENT", "CAPABILITY", "WORKS", "HOW OR WHY NOT")


def _session_line(facts: object) -> str:
    from kronii.desktop.session import SessionFacts

    assert isinstance(facts, SessionFacts)
    if facts.kind == "wayland":
        line = f"session: Wayland, {facts.name}, socket {facts.wayland_socket}"
        if facts.x_display:
            line += f" (DISPLAY={facts.x_display} is XWayland's: its windows are not the session's focus)"
        return line
    if facts.kind == "x11":
        return f"session: X11, DISPLAY={facts.x_display}"
    return f"session: none ({facts.problem})"


@click.command("doctor", help="the desktop session and what each host agent can do in it (exit 1 if not all)")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
def doctor(as_json: bool) -> None:
    from kronii.desktop.session import assess, probe
    from kronii.launcher.cli.tables import print_table

    facts = probe()
    capabilities = assess(facts)
    if as_json:
        body = {
            "session": {
                "kind": facts.kind,
                "compositor": facts.name,
                "family": facts.family,
                "wayland_socket": str(facts.wayland_socket or ""),
                "x_display": facts.x_display,
                "problem": facts.problem,
            },
            "capabilities": [
                {"agent": item.agent, "capability": item.name, "works": item.ok, "detail": item.detail}
                for item in capabilities
            ],
        }
        click.echo(json.dumps(body, indent=2))
    else:
        click.echo(_session_line(facts))
        rows = [(item.agent, item.name, "yes" if item.ok else "NO", item.detail) for item in capabilities]
        print_table(_COLUMNS, rows)
    raise SystemExit(exits.OK if all(item.ok for item in capabilities) else exits.FAILED)
