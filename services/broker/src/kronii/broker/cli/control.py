"""`kronii control grant|renew|wait|interrupt|stop|status`: the desktop user's side of the input broker
(seed 004). The person grants an agent a lease on the desktop and may, at any time, WAIT (let it go
on), INTERRUPT (SAFE_INTERRUPT: it pauses at its next safe point) or STOP (STOP_NOW: its lease is
revoked and its queued input dropped); `status` shows who holds control and until when.

grant, renew and wait go through the broker's local socket only, with the TTY binding (see
kronii.broker.cli.http); stop, interrupt and status use the socket when it is there, else TCP.

Exit codes (kronii.launcher.cli.exits): 0 done; 1 the broker would not do it in the state it is in
(HTTP 409: no person attached, nothing to renew); 2 usage; 3 no such session, or no focused window;
4 refused (not the desktop user, no person present); 5 the broker (or, for `--window focused`, the
display) does not answer.

The settings, the HTTP client and Xlib load inside the commands: `kronii control --help` and shell
completion need only click."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import click
from click.shell_completion import CompletionItem
from kronii.broker.cli.http import Broker, Options
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError

__all__ = ["control_command", "focused_window", "local_time", "main", "state_json", "status_lines"]

SESSION = "current"
POLL_SECS = 0.5
FOCUSED = "focused"
_INTENTS = {"wait": "WAIT", "interrupt": "SAFE_INTERRUPT", "stop": "STOP_NOW"}
_SAID = {
    "WAIT": "WAIT: the agent may go on while its lease lasts",
    "SAFE_INTERRUPT": "SAFE_INTERRUPT: the agent pauses at its next safe point, then control is yours",
    "STOP_NOW": (
        "STOP_NOW: the agent is stopped, its lease revoked and its queued input dropped; control is yours"
    ),
}
_INTERACTIVE = {
    "viewer": "yes: a viewer is attached",
    "devices": "yes: your keyboard or mouse is present",
    "flag": "yes: the session is flagged interactive",
    "unknown": "unknown: the broker cannot see the viewers, so agents need your grant (`kronii status` says why)",
}


# ---- the state, for a person and for JSON ------------------------------------------------------


def _utc(stamp: Any) -> str | None:
    """An RFC 3339 time as UTC with a Z, or None when the broker sent none."""
    if not stamp:
        return None
    try:
        at = datetime.fromisoformat(str(stamp)).astimezone(UTC)
    except ValueError:
        return str(stamp)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def state_json(body: dict[str, Any]) -> dict[str, Any]:
    """The seed's control state model as the broker sent it, every field present: times in UTC (null
    when unset), the epoch and the window as numbers (proto JSON sends 64-bit numbers as strings)."""
    return {
        "session_id": str(body.get("session_id") or ""),
        "interactive": bool(body.get("interactive", False)),
        "interactive_reason": str(body.get("interactive_reason") or ""),
        "control_mode": str(body.get("control_mode") or "USER"),
        "holder": str(body.get("holder") or ""),
        "lease_expiry": _utc(body.get("lease_expiry")),
        "window": int(body.get("window") or 0),
        "user_intent": str(body.get("user_intent") or "WAIT"),
        "agent_status": str(body.get("agent_status") or "IDLE"),
        "epoch": int(body.get("epoch") or 0),
        "user_holds_until": _utc(body.get("user_holds_until")),
    }


def local_time(stamp: str | None) -> str:
    """A UTC time as a person reads it: local, to the second; the date only when it is not today."""
    if not stamp:
        return "-"
    try:
        at = datetime.fromisoformat(stamp).astimezone()
    except ValueError:
        return stamp
    if at.date() == datetime.now().astimezone().date():
        return at.strftime("%H:%M:%S")
    return at.strftime("%Y-%m-%d %H:%M:%S")


def _holder(state: dict[str, Any]) -> str:
    if state["control_mode"] == "AGENT" and state["holder"]:
        until = (
            f"until {local_time(state['lease_expiry'])}" if state["lease_expiry"] else "its lease has lapsed"
        )
        window = f", window {state['window']:#x}" if state["window"] else ", whichever window has the focus"
        return f"{state['holder']} (an agent), {until}{window}"
    if state["user_holds_until"]:
        until = local_time(state["user_holds_until"])
        return f"you (the desktop user); the mesh leaves the desktop alone until {until}"
    return "you (the desktop user)"


def status_lines(state: dict[str, Any]) -> list[str]:
    """The state as a person reads it: who holds control and until when (local time), the intent,
    the agent's status, and whether the session is interactive and why."""
    interactive = (
        _INTERACTIVE.get(state["interactive_reason"], "yes")
        if state["interactive"]
        else "no: nobody is attached"
    )
    rows = (
        ("control", _holder(state)),
        ("intent", _SAID.get(state["user_intent"], state["user_intent"])),
        ("agent", state["agent_status"]),
        ("interactive", interactive),
        ("session", f"{state['session_id']} (epoch {state['epoch']})"),
    )
    return [f"{label:<12} {value}" for label, value in rows]


def change_line(state: dict[str, Any]) -> str:
    """One state on one line, for --watch: control first, so a script can cut it."""
    who = (
        f"AGENT {state['holder']} until {local_time(state['lease_expiry'])}"
        if state["control_mode"] == "AGENT"
        else "USER"
    )
    flag = (
        f"interactive ({state['interactive_reason'] or 'yes'})" if state["interactive"] else "not interactive"
    )
    return (
        f"{who}  intent {state['user_intent']}  agent {state['agent_status']}  {flag}  epoch {state['epoch']}"
    )


def _show(state: dict[str, Any], as_json: bool, sentence: str) -> None:
    if as_json:
        click.echo(json.dumps(state))
        return
    click.echo(sentence)


# ---- the window a grant names --------------------------------------------------------------------


def window_value(ctx: click.Context, param: click.Parameter, value: str | None) -> int | str | None:
    """--window as given: an X window id (0x1a00007 or decimal), `focused`, or None when not given."""
    if value is None:
        return None
    text = value.strip().lower()
    if text == FOCUSED:
        return FOCUSED
    try:
        number = int(text, 16) if text.startswith("0x") else int(text)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a window id (0x1a00007 or decimal) or `focused`"
        ) from None
    if not 0 < number < 1 << 32:
        raise click.BadParameter(f"{value!r} is not an X window id")
    return number


def _complete_window(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(FOCUSED)] if FOCUSED.startswith(incomplete.lower()) else []


def focused_window(display_name: str) -> int:
    """The window that has the focus on the broker's display now (adapters.x_focus)."""
    from kronii.broker.adapters.x_focus import FocusUnknown
    from kronii.broker.adapters.x_focus import focused_window as find

    try:
        window = find(display_name)
    except FocusUnknown as error:
        raise CommandError(
            f"kronii: control grant: {error}: name the window with --window ID", exits.UNREACHABLE
        ) from None
    if window:
        return window
    raise CommandError(
        "kronii: control grant: no window has the focus now: name one with --window ID", exits.NOT_FOUND
    )


# ---- the commands -------------------------------------------------------------------------------

_JSON = click.option(
    "--json", "as_json", is_flag=True, help="print the broker's state after it as JSON (UTC)"
)
_SECONDS = click.option(
    "--seconds", type=click.IntRange(min=1), default=None,
    help="how long the lease lasts (default: the broker's, KRONII_BROKER_DEFAULT_LEASE_SECS)",
)  # fmt: skip


@click.group(
    "control",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit codes: 0 done, 1 not done in the broker's current state, 2 usage, 3 not found, 4 refused, "
    "5 unreachable.",
)
@click.option(
    "--socket", type=click.Path(dir_okay=False), default=None,
    help="the broker's local socket (default: where the broker puts it)",
)  # fmt: skip
@click.option(
    "--url", default=None, metavar="URL",
    help="the broker's HTTP address, for stop, interrupt and status when there is no socket (default "
    "$KRONII_BROKER_URL, else the running `kronii up`'s, else KRONII_BROKER_HOST and "
    "KRONII_BROKER_HTTP_PORT)",
)  # fmt: skip
@click.option(
    "--timeout", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True,
    help="seconds per call",
)  # fmt: skip
@click.pass_context
def control_command(ctx: click.Context, socket: str | None, url: str | None, timeout: float) -> None:
    """Grant an agent the desktop, let it go on, interrupt or stop it (the input broker)."""
    ctx.obj = Options(socket, url, timeout)


def _grant(broker: Broker, agent: str, seconds: int | None, window: int) -> dict[str, Any]:
    body = {"agent": agent, "lease_seconds": seconds or 0, "window": window}
    return state_json(broker.as_person("POST", f"/sessions/{SESSION}/control/grant", body))


def _granted(verb: str, state: dict[str, Any]) -> str:
    window = f"window {state['window']:#x}" if state["window"] else "whichever window has the focus"
    return f"{verb} {state['holder']} the desktop until {local_time(state['lease_expiry'])} ({window})"


@control_command.command("grant", short_help="give an agent the desktop for a while (a lease)")
@click.argument("agent")
@_SECONDS
@click.option(
    "--window", default=None, metavar="ID|focused", callback=window_value, shell_complete=_complete_window,
    help="the one window its keys may reach: an id (0x1a00007 or decimal) or `focused` (the window "
    "focused now); default: the window that has the focus when the broker grants it",
)  # fmt: skip
@_JSON
@click.pass_obj
def grant(options: Options, agent: str, seconds: int | None, window: int | str | None, as_json: bool) -> None:
    """Grant AGENT (its registered client id: `vision` for the vision engine) a lease on the desktop. The
    agent may act while you watch until the lease ends; your own key or click takes it back at once.
    Only from this desktop: through the broker's local socket, from your terminal (or polkit asks you)."""
    broker = Broker(options, "grant")
    number = focused_window(broker.settings().display) if window == FOCUSED else int(window or 0)
    state = _grant(broker, agent, seconds, number)
    _show(state, as_json, _granted("granted", state))


@control_command.command("renew", short_help="extend the lease of the agent that holds the desktop")
@_SECONDS
@_JSON
@click.pass_obj
def renew(options: Options, seconds: int | None, as_json: bool) -> None:
    """Give the agent that holds the desktop more time: the same grant (its queued input and a pending
    interrupt stay as they are). Exit 1 when no agent holds the desktop."""
    broker = Broker(options, "renew")
    body: dict[str, Any] = {"lease_seconds": seconds} if seconds else {}
    state = state_json(broker.as_person("POST", f"/sessions/{SESSION}/control/extend", body))
    _show(state, as_json, _granted("renewed", state))


def _intent_command(name: str, text: str) -> click.Command:
    intent = _INTENTS[name]

    @click.command(name, help=f"{text} ({intent})", short_help=text)
    @_JSON
    @click.pass_obj
    def command(options: Options, as_json: bool) -> None:
        broker = Broker(options, name)
        call = broker.as_person if intent == "WAIT" else broker.as_anyone
        state = state_json(call("POST", f"/sessions/{SESSION}/user_intent", {"intent": intent}))
        _show(state, as_json, "\n".join([_SAID[intent], *status_lines(state)[:1]]))

    return command


control_command.add_command(_intent_command("wait", "let the agent go on; lifts an interrupt"))
control_command.add_command(_intent_command("interrupt", "ask the agent to pause at its next safe point"))
control_command.add_command(_intent_command("stop", "stop the agent now and take the desktop back"))


@control_command.command("status", short_help="who holds control, until when, and why")
@click.option("--watch", is_flag=True, help="keep going: print each change (Ctrl-C ends)")
@click.option("--json", "as_json", is_flag=True, help="JSON (UTC); with --watch one object per change")
@click.pass_obj
def status(options: Options, watch: bool, as_json: bool) -> None:
    """Who holds control and until when (local time), your intent, the agent's status, and whether
    the session is interactive and why."""
    broker = Broker(options, "status")
    if watch:
        _watch(broker, as_json)
        return
    state = state_json(broker.as_anyone("GET", f"/sessions/{SESSION}"))
    _show(state, as_json, "\n".join(status_lines(state)))


def _watch(broker: Broker, as_json: bool) -> None:
    """Poll the state and print each change, with when it was seen."""
    previous: dict[str, Any] | None = None
    while True:
        state = state_json(broker.as_anyone("GET", f"/sessions/{SESSION}"))
        if state != previous:
            seen = datetime.now(UTC)
            if as_json:
                at = seen.isoformat(timespec="milliseconds").replace("+00:00", "Z")
                click.echo(json.dumps({"at": at, **state}))
            else:
                click.echo(f"{seen.astimezone():%H:%M:%S}  {change_line(state)}")
            sys.stdout.flush()
            previous = state
        time.sleep(POLL_SECS)


def main(argv: Sequence[str] | None = None) -> int:
    """`kronii control ...` as `kronii` runs it (same errors and exit codes); a leading "control" is
    optional."""
    from kronii.launcher.cli.main import main as kronii_main

    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["control"]:
        arguments = arguments[1:]
    return kronii_main(["control", *arguments])
