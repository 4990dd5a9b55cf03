"""`kronii thread ...`: the threads agents and the person leave work on (the activation
orchestrator wakes whoever a message is for). An agent started by the supervisor has its own token
and address in its environment (KRONII_RUNTIME_TOKEN, KRONII_SUPERVISOR_URL, KRONII_WORKSPACE_ID),
so its instructions can say, from its pane:

    kronii thread read review --workspace W            # what is new for me (moves my cursor)
    kronii thread post review --workspace W --to reviewer --kind result "tests pass: ..."
    kronii thread wait review --workspace W --timeout 600

A person's own commands post as "person". Exit codes (kronii.launcher.cli.exits): 0 done; 1 `wait`
saw nothing addressed to the caller in time; 2 bad arguments; 3 no such thread; 4 refused; 5 the
supervisor is not running. Like `kronii agents`, this module imports only click."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError
from kronii.launcher.cli.tables import print_table
from kronii.supervisor.cli.agents import local_time
from kronii.supervisor.cli.http import Client, Connection
from kronii.supervisor.core.threads import POSTABLE, MessageKind

__all__ = ["thread_command"]

POSTABLE_KINDS = tuple(kind.value for kind in MessageKind if kind in POSTABLE)
# The server waits at most this long per request; `wait` asks again until its own timeout.
_WAIT_SLICE_SECS = 60

_WORKSPACE = click.option(
    "--workspace",
    envvar="KRONII_WORKSPACE_ID",
    required=True,
    help="the thread's workspace (default $KRONII_WORKSPACE_ID, set in the panes of agents kronii starts)",
)
_JSON = click.option("--json", "as_json", is_flag=True, help="print the supervisor's answer as JSON")


@click.group(
    "thread",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit codes: 0 done, 1 nothing arrived (wait), 2 usage, 3 not found, 4 refused, 5 unreachable.",
)
@click.option(
    "--url", default=None, metavar="URL", help="the supervisor's HTTP address (as `kronii agents --url`)"
)
@click.option(
    "--token",
    default=None,
    help="a token (default $KRONII_RUNTIME_TOKEN in an agent's pane, else the local one)",
)
@click.pass_context
def thread_command(ctx: click.Context, url: str | None, token: str | None) -> None:
    """Post to, read and wait on the threads agents and the person share."""
    ctx.obj = Connection(url, token)


@thread_command.command("post", short_help="post a message (the orchestrator wakes whom it is for)")
@click.argument("thread")
@click.argument("text")
@_WORKSPACE
@click.option(
    "--to", "to", multiple=True, help="whom it is for (repeat; default everyone else on the thread)"
)
@click.option("--kind", type=click.Choice(POSTABLE_KINDS), default="message", show_default=True,
              help="result and resolved count as progress; a finding repeated 3 times blocks the thread")  # fmt: skip
@click.option(
    "--finding", "finding_key", default="", help="what makes two findings the same (default: their words)"
)
@click.option("--dedupe", "dedupe_key", default="", help="a key: posting it again answers the first message")
@_JSON
@click.pass_obj
def post(connection: Connection, thread: str, text: str, workspace: str, to: tuple[str, ...], kind: str,
         finding_key: str, dedupe_key: str, as_json: bool) -> None:  # fmt: skip
    """Post TEXT to THREAD ("-" reads it from standard input)."""
    body = sys.stdin.read() if text == "-" else text
    answer = Client(connection).call(
        "POST",
        "/v1/threads/messages",
        json={
            "workspace_id": workspace,
            "thread_id": thread,
            "to": list(to),
            "kind": kind,
            "body": body,
            "finding_key": finding_key,
            "dedupe_key": dedupe_key,
        },
    )
    if as_json:
        click.echo(json.dumps(answer, indent=2))
        return
    message, thread_info = answer.get("message", {}), answer.get("thread", {})
    again = " (posted before with this --dedupe key)" if answer.get("duplicate") else ""
    click.echo(f"posted #{message.get('seq', '?')} to {thread}{again}")
    if thread_info.get("blocked"):
        click.echo(f"the thread is blocked: {thread_info.get('blocked_reason', '')}", err=True)


@thread_command.command("read", short_help="what is new for you on a thread (moves your cursor)")
@click.argument("thread")
@_WORKSPACE
@click.option("--all", "everything", is_flag=True, help="every message from the first")
@click.option("--peek", is_flag=True, help="do not move your cursor")
@click.option("--limit", type=click.IntRange(1, 500), default=100, show_default=True)
@_JSON
@click.pass_obj
def read(connection: Connection, thread: str, workspace: str, everything: bool, peek: bool, limit: int,
         as_json: bool) -> None:  # fmt: skip
    """Print the messages of THREAD you have not read, and move your read cursor past them."""
    answer = _read(Client(connection), workspace, thread, all=everything, peek=peek, limit=limit)
    _print_read(answer, thread, as_json)


@thread_command.command("wait", short_help="wait for a message addressed to you, then print what is new")
@click.argument("thread")
@_WORKSPACE
@click.option("--timeout", type=click.FloatRange(0.1, 86400), default=600, show_default=True, help="seconds")
@_JSON
@click.pass_obj
def wait(connection: Connection, thread: str, workspace: str, timeout: float, as_json: bool) -> None:
    """Wait until THREAD has a message for you; print it (and what else is new) and move your cursor."""
    import time

    client = Client(connection, timeout=_WAIT_SLICE_SECS + 30)
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        answer = _read(client, workspace, thread, wait_ms=int(min(left, _WAIT_SLICE_SECS) * 1000))
        if answer.get("messages"):
            _print_read(answer, thread, as_json)
            return
    raise CommandError(f"kronii: nothing addressed to you on {thread} in {timeout:g} s", exits.FAILED)


@thread_command.command("list", short_help="the threads, with who has unread messages")
@click.option("--workspace", default="", help="only this workspace's")
@click.option("--blocked", "blocked_only", is_flag=True, help="only threads the guard blocked")
@_JSON
@click.pass_obj
def list_threads(connection: Connection, workspace: str, blocked_only: bool, as_json: bool) -> None:
    """List threads, the most recently active first."""
    params = {"workspace_id": workspace, "blocked_only": str(blocked_only).lower()}
    answer = Client(connection).call("GET", "/v1/threads", params=params)
    threads = answer.get("threads", [])
    if as_json:
        click.echo(json.dumps(threads, indent=2))
        return
    if not threads:
        click.echo("no threads" + (" blocked" if blocked_only else ""))
        return
    print_table(
        ("WORKSPACE", "THREAD", "MESSAGES", "PARTICIPANTS (cursor)", "STATE", "ACTIVE"),
        [_thread_row(t) for t in threads],
    )


@thread_command.command("unblock", short_help="let agents be woken on a thread the guard blocked")
@click.argument("thread")
@_WORKSPACE
@click.option("--reason", default="", help="why, for the audit log")
@_JSON
@click.pass_obj
def unblock(connection: Connection, thread: str, workspace: str, reason: str, as_json: bool) -> None:
    """Clear THREAD's automatic block (THREAD_AUTO_BLOCKED); its counts start again."""
    answer = Client(connection).call(
        "POST", "/v1/threads/unblock", json={"workspace_id": workspace, "thread_id": thread, "reason": reason}
    )
    if as_json:
        click.echo(json.dumps(answer, indent=2))
        return
    click.echo(f"{thread} unblocked" if answer.get("was_blocked") else f"{thread} was not blocked")


def _read(client: Client, workspace: str, thread: str, **options: Any) -> dict[str, Any]:
    body = {"workspace_id": workspace, "thread_id": thread, **{k: v for k, v in options.items() if v}}
    return client.call("POST", "/v1/threads/read", json=body)


def _print_read(answer: dict[str, Any], thread: str, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(answer, indent=2))
        return
    messages = answer.get("messages", [])
    if not messages:
        click.echo(f"nothing new on {thread}")
        return
    for message in messages:
        to = ", ".join(message.get("to", [])) or "everyone"
        stamp = local_time(message.get("at", ""))
        click.echo(
            f"#{message.get('seq')} {message.get('author')} -> {to} [{message.get('kind', 'message')}] {stamp}"
        )
        for line in str(message.get("body", "")).splitlines() or [""]:
            click.echo(f"    {line}")
    info = answer.get("thread", {})
    if info.get("blocked"):
        click.echo(f"(the thread is blocked: {info.get('blocked_reason', '')})")


def _thread_row(thread: dict[str, Any]) -> tuple[str, ...]:
    people = ", ".join(f"{p.get('name')} ({p.get('cursor', 0)})" for p in thread.get("participants", []))
    state = f"BLOCKED: {thread.get('blocked_reason', '')}" if thread.get("blocked") else "open"
    return (
        thread.get("workspace_id", ""),
        thread.get("thread_id", ""),
        str(thread.get("last_seq", 0)),
        people,
        state,
        local_time(thread.get("updated_at", "")),
    )
