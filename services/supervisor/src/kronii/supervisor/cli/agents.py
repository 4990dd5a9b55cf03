"""`kronii agents ...`: start agents in tmux, list and trigger them, pause them, read their panes,
and acknowledge deliveries from an agent's own hooks.

`kronii` mounts the click group `agents_command` through its `kronii.commands` entry point;
`python -m kronii.supervisor.cli agents ...` runs the same command. Exit codes (kronii.launcher.cli.exits):
0 done (a trigger was delivered, deferred or is already active); 1 the trigger failed, timed out or
sits typed but not submitted; 2 bad arguments; 3 no such runtime, workspace or trigger; 4 refused
(no token, a scope it lacks, a human override, the server there is not this host's supervisor);
5 the supervisor is not running or does not answer.

The supervisor's address: --url, else $KRONII_SUPERVISOR_URL, else the running `kronii up`'s,
else KRONII_SUPERVISOR_HOST and KRONII_SUPERVISOR_HTTP_PORT (kronii.runtime.rendezvous). A token
minted here from the local secret is sent only to a server that proves it holds the same secret
(GET /v1/identity); a token given with --token or in the environment is sent as is (cli/http.py).
This module imports only click: `--help`, completion and `list`'s start-up stay quick."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import click
from click.shell_completion import CompletionItem
from kronii.launcher.cli import exits
from kronii.launcher.cli.tables import print_table
from kronii.supervisor.cli.http import SCOPES, Client, Connection, mint, user_subject

__all__ = ["agents_command", "main"]

# The kinds the supervisor ships with; it accepts others configured there, so these only complete.
KNOWN_KINDS = ("codex", "claude", "python", "generic", "shell")
# Trigger results that mean the prompt did not reach the agent: the command exits FAILED.
FAILED_RESULTS = frozenset({"timeout", "failed", "typed_not_submitted"})


def local_time(stamp: str) -> str:
    """An RFC 3339 time from the API as a person reads it: local, to the second; the date only when
    it is not today. An unreadable stamp is shown as it came."""
    try:
        at = datetime.fromisoformat(stamp).astimezone()
    except ValueError:
        return stamp
    if at.date() == datetime.now().astimezone().date():
        return at.strftime("%H:%M:%S")
    return at.strftime("%Y-%m-%d %H:%M:%S")


def _show(data: Any, as_json: bool, say: Callable[[Any], str]) -> None:
    """The supervisor's answer as JSON, or the sentence `say` makes of it."""
    click.echo(json.dumps(data, indent=2) if as_json else say(data))


RUNTIME_COLUMNS = ("RUNTIME", "WORKSPACE", "AGENT", "ROLE", "KIND", "STATUS", "STATE", "PANE", "PID", "FLAGS",
                   "SEEN")  # fmt: skip


def runtime_row(runtime: dict[str, Any]) -> tuple[str, ...]:
    flags = (("paused", runtime.get("paused")), ("busy", runtime.get("operator_busy")))
    seen = runtime.get("last_activity_at") or runtime.get("last_heartbeat_at") or ""
    return (
        runtime["runtime_id"], runtime["workspace_id"], runtime["agent_id"], runtime.get("role") or "-",
        runtime["kind"], runtime["status"], runtime.get("agent_state") or "-", runtime["pty_target"],
        str(runtime["pid"]), ",".join(flag for flag, on in flags if on) or "-",
        local_time(seen) if seen else "-",
    )  # fmt: skip


def _complete_kind(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(kind) for kind in KNOWN_KINDS if kind.startswith(incomplete)]


_JSON = click.option("--json", "as_json", is_flag=True, help="print the supervisor's answer as JSON")
_RUNTIME_FROM_ENV = click.option(
    "--runtime", default="", envvar="KRONII_RUNTIME_ID", show_envvar=True, help="the runtime (the hook's own)"
)


@click.group(
    "agents",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit codes: 0 done, 1 the trigger failed, 2 usage, 3 not found, 4 refused, 5 unreachable.",
)
@click.option(
    "--url",
    default=None,
    metavar="URL",
    help="the supervisor's HTTP address (default $KRONII_SUPERVISOR_URL, else the running `kronii up`'s, "
    "else KRONII_SUPERVISOR_HOST and KRONII_SUPERVISOR_HTTP_PORT)",
)
@click.option(
    "--token",
    default=None,
    help="a service token (default $KRONII_SUPERVISOR_TOKEN, $KRONII_RUNTIME_TOKEN, or one made from the "
    "local secret)",
)
@click.pass_context
def agents_command(ctx: click.Context, url: str | None, token: str | None) -> None:
    """Start, list, trigger and watch agents in tmux (the supervisor)."""
    ctx.obj = Connection(url, token)


@agents_command.command(
    "spawn",
    # Everything from the agent's command on is the agent's, even what looks like our options.
    context_settings={"allow_interspersed_args": False},
    short_help="start an agent in its workspace's tmux session and register it",
)
@click.option("--workspace", required=True, help="the workspace (its tmux session is agents_<workspace>)")
@click.option("--agent", required=True, help="the agent's id")
@click.option("--role", default="", help="window name in the session (exec, review, sec, ...)")
@click.option(
    "--kind", default="", shell_complete=_complete_kind, help="codex, claude, python, generic (any line-editing "
    "agent), shell (a shell taking prompts as command lines) or one configured (default: from the command)",
)  # fmt: skip
@click.option("--session-id", default="", help="the agent's logical session, for `resume`")
@click.option(
    "--cwd", default="", type=click.Path(file_okay=False), help="working directory (default: this one)"
)
@_JSON
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="-- COMMAND [ARGS]...")
@click.pass_obj
def spawn(
    connection: Connection, workspace: str, agent: str, role: str, kind: str, session_id: str, cwd: str,
    as_json: bool, command: tuple[str, ...],
) -> None:  # fmt: skip
    """Start an agent in its workspace's tmux session and register it. The agent's command comes
    after --, and runs directly, without a shell."""
    if not command:
        raise click.UsageError(
            "give the agent's command after --, e.g. kronii agents spawn --workspace w --agent a -- codex"
        )
    kind = kind or guess_kind(command[0])
    body = Client(connection).call("POST", "/v1/runtimes/spawn", json={
        "workspace_id": workspace, "agent_id": agent, "role": role, "kind": kind, "command": list(command),
        "session_id": session_id, "cwd": cwd or os.getcwd(),
    })  # fmt: skip
    _show(
        body,
        as_json,
        lambda answer: _started(answer["runtime"], kind) + f"\nwatch it: {answer['attach_command']}",
    )


def _started(runtime: dict[str, Any], kind: str) -> str:
    where = f"{runtime['runtime_id']} in pane {runtime['pty_target']}, pid {runtime['pid']}"
    return f"started {runtime['agent_id']} ({kind}) as {where}"


@agents_command.command("list", short_help="the registered runtimes")
@click.option("--workspace", default="", help="only this workspace's")
@click.option("--agent", default="", help="only this agent's")
@click.option("--all", "include_offline", is_flag=True, help="include offline runtimes")
@click.option("--json", "as_json", is_flag=True, help="print a JSON array of the runtimes")
@click.pass_obj
def list_runtimes(
    connection: Connection, workspace: str, agent: str, include_offline: bool, as_json: bool
) -> None:
    """The registered runtimes: where each runs, its status (`superseded`: a fresh session replaced
    it and it still runs), its state, and when it was last seen (local time)."""
    params = {"workspace_id": workspace, "agent_id": agent, "include_offline": str(include_offline).lower()}
    runtimes = Client(connection).call("GET", "/v1/runtimes", params=params).get("runtimes", [])
    if as_json:
        click.echo(json.dumps(runtimes, indent=2))
    elif runtimes:
        print_table(RUNTIME_COLUMNS, [runtime_row(runtime) for runtime in runtimes])
    else:
        click.echo("no runtimes registered")


def outcome_line(outcome: dict[str, Any]) -> str:
    parts = [f"{outcome['trigger_id']}: {outcome['result']}"]
    if outcome.get("delivery_backend"):
        parts.append(f"via {outcome['delivery_backend']}")
    if outcome.get("error_code"):
        parts.append(f"({outcome['error_code']})")
    if outcome.get("deferred_until"):
        parts.append(f"until {local_time(outcome['deferred_until'])}")
    return " ".join(parts) + (f"\n  {outcome['detail']}" if outcome.get("detail") else "")


@agents_command.command("trigger", short_help="wake an agent with a prompt (typed into its pane, or resumed)")
@click.option("--workspace", required=True, help="the agent's workspace")
@click.option("--agent", required=True, help="the agent to wake")
@click.option("--thread", default="", help="the conversation thread the prompt belongs to")
@click.option("--trigger-id", default="", help="repeat one to get its first outcome (default: new)")
@click.option("--ack-timeout-ms", type=click.IntRange(min=0), default=0, help="wait this long for the agent")
@click.option("--force", is_flag=True, help="type even over a person (needs --reason)")
@click.option("--reason", default="", help="why; with --force it starts with human_override:")
@_JSON
@click.argument("prompt")
@click.pass_obj
def trigger(
    connection: Connection, workspace: str, agent: str, thread: str, trigger_id: str, ack_timeout_ms: int,
    force: bool, reason: str, as_json: bool, prompt: str,
) -> None:  # fmt: skip
    """Wake an agent with PROMPT (- reads it from standard input). Exit 1 when it was not delivered."""
    import uuid

    text = sys.stdin.read() if prompt == "-" else prompt
    outcome = Client(connection).call("POST", "/v1/triggers", json={
        "trigger_id": trigger_id or f"cli-{uuid.uuid4().hex[:12]}", "agent_id": agent, "workspace_id": workspace,
        "thread_id": thread, "prompt": text, "ack_timeout_ms": ack_timeout_ms, "force_override": force,
        "reason": reason,
    })  # fmt: skip
    _show(outcome, as_json, outcome_line)
    if outcome["result"] in FAILED_RESULTS:
        raise SystemExit(exits.FAILED)


def _pause_command(action: str, text: str) -> click.Command:
    @click.command(action, help=f"{text} (RUNTIME: its id, from `kronii agents list`)", short_help=text)
    @click.argument("runtime")
    @click.option("--reason", default="", help="why, for the audit log")
    @_JSON
    @click.pass_obj
    def command(connection: Connection, runtime: str, reason: str, as_json: bool) -> None:
        answer = Client(connection).call("POST", f"/v1/runtimes/{runtime}/{action}", json={"reason": reason})
        _show(answer, as_json, lambda it: f"{it['runtime_id']}: {'paused' if it['paused'] else 'running'}")

    return command


agents_command.add_command(_pause_command("pause", "hold triggers for a runtime"))
agents_command.add_command(_pause_command("resume", "let triggers through again"))


@agents_command.command("logs", short_help="a runtime's recent pane lines (redacted)")
@click.argument("runtime")
@click.option("-n", "--lines", type=click.IntRange(1, 2000), default=50, show_default=True, help="how many")
@click.option("--json", "as_json", is_flag=True, help="print the lines as a JSON object")
@click.pass_obj
def logs(connection: Connection, runtime: str, lines: int, as_json: bool) -> None:
    """A runtime's recent pane lines, redacted."""
    body = Client(connection).call("GET", f"/v1/runtimes/{runtime}/logs", params={"lines": lines})
    _show(body, as_json, lambda answer: "\n".join(answer.get("lines", [])))


# ack and heartbeat run inside agents' hooks: a short timeout, so a stopped supervisor never holds an agent.
_HOOK_TIMEOUT_SECS = 3.0


@agents_command.command(
    "ack",
    # Codex's notify appends a JSON argument; nothing a hook appends may turn into a usage error.
    context_settings={"ignore_unknown_options": True},
    short_help="acknowledge a delivery (for agents' hooks: Claude Code hooks, Codex notify)",
)
@_RUNTIME_FROM_ENV
@click.option("--trigger", default="", help="the trigger delivered")
@_JSON
@click.argument("payload", nargs=-1, type=click.UNPROCESSED)
@click.pass_obj
def ack(connection: Connection, runtime: str, trigger: str, as_json: bool, payload: tuple[str, ...]) -> None:
    """Acknowledge a delivery, from an agent's hook. PAYLOAD is ignored (Codex's notify passes one)."""
    if not runtime and not trigger:
        raise click.UsageError("give --runtime or --trigger (or set KRONII_RUNTIME_ID)")
    body = Client(connection, timeout=_HOOK_TIMEOUT_SECS).call(
        "POST", "/v1/acks", json={"runtime_id": runtime, "trigger_id": trigger}
    )
    _show(body, as_json, lambda answer: f"acknowledged {answer.get('trigger_id') or runtime or trigger}")


@agents_command.command("heartbeat", short_help="report a runtime alive (for agents' hooks)")
@_RUNTIME_FROM_ENV
@click.option("--status", type=click.Choice(["active", "idle"]), default="active", show_default=True)
@_JSON
@click.pass_obj
def heartbeat(connection: Connection, runtime: str, status: str, as_json: bool) -> None:
    """Report a runtime alive, from an agent's hook."""
    if not runtime:
        raise click.UsageError("give --runtime (or set KRONII_RUNTIME_ID)")
    answer = Client(connection, timeout=_HOOK_TIMEOUT_SECS).call(
        "POST", f"/v1/runtimes/{runtime}/heartbeat", json={"status": status}
    )
    _show(answer, as_json, lambda it: f"{it['runtime_id']}: {it['status']}")


@agents_command.command("force", short_help="deliver a deferred trigger now (explicit operator intent)")
@click.argument("trigger")
@click.option("--reason", required=True, help="starts with human_override: or coordinator_override:")
@_JSON
@click.pass_obj
def force(connection: Connection, trigger: str, reason: str, as_json: bool) -> None:
    """Deliver the deferred TRIGGER now. Exit 1 when it still was not delivered."""
    outcome = Client(connection).call("POST", f"/v1/triggers/{trigger}/force", json={"reason": reason})
    _show(outcome, as_json, lambda it: f"{it['trigger_id']}: {it['result']}")
    if outcome["result"] in ("timeout", "failed"):
        raise SystemExit(exits.FAILED)


@agents_command.command("unblock", short_help="clear a thread's automatic block")
@click.option("--agent", required=True, help="the agent")
@click.option("--thread", required=True, help="the blocked thread")
@click.option("--reason", default="", help="why, for the audit log")
@_JSON
@click.pass_obj
def unblock(connection: Connection, agent: str, thread: str, reason: str, as_json: bool) -> None:
    """Clear a thread's automatic block."""
    body = Client(connection).call(
        "POST", "/v1/threads/unblock", json={"agent_id": agent, "thread_id": thread, "reason": reason}
    )
    _show(body, as_json, lambda it: "unblocked" if it.get("was_blocked") else "the thread was not blocked")


@agents_command.command("hand", short_help="say yes to the critic's offer: hand a failure to an agent")
@click.argument("offer_id", default="")
@click.option("--agent", default="", help="hand it to this agent instead of the one offered")
@click.option("--workspace", default="", help="that agent's workspace (default the offer's)")
@_JSON
@click.pass_obj
def hand(connection: Connection, offer_id: str, agent: str, workspace: str, as_json: bool) -> None:
    """Hand the critic's offered failure (OFFER_ID, default the latest still open) to its agent: the
    redacted command, exit status and error text are posted to the agent's hand-over thread and the
    orchestrator wakes it."""
    body = Client(connection).call(
        "POST", "/v1/offers/hand", json={"offer_id": offer_id, "agent_id": agent, "workspace_id": workspace}
    )

    def said(it: dict[str, Any]) -> str:
        again = " (it was handed over before)" if it.get("duplicate") else ""
        return (
            f"handed offer {it.get('offer_id')} to {it.get('agent_id')}{again}: thread {it.get('thread_id')} "
            f"#{it.get('seq')} in workspace {it.get('workspace_id')}; `kronii thread read {it.get('thread_id')} "
            f"--workspace {it.get('workspace_id')} --peek --all` shows it"
        )

    _show(body, as_json, said)


@agents_command.command("token", short_help="print a service token signed with this host's supervisor secret")
@click.option("--subject", default="", help="the caller's identity (default cli:<user>)")
@click.option("--workspace", "workspaces", multiple=True, help="allowed workspace (repeat; default all)")
@click.option(
    "--scope", "scopes", multiple=True, type=click.Choice(SCOPES), help="a scope (repeat; default all)"
)
@click.option(
    "--runtime",
    default="",
    help="a registered runtime's own token (with its one --workspace): it acks, heartbeats and uses "
    "`kronii thread` as that runtime's agent, as the panes kronii starts do with KRONII_RUNTIME_TOKEN",
)
@click.option("--ttl", type=click.IntRange(min=1), default=3600, show_default=True, help="seconds")
def token(subject: str, workspaces: tuple[str, ...], scopes: tuple[str, ...], runtime: str, ttl: int) -> None:
    """Print a service token signed with this host's supervisor secret (for hooks and scripts)."""
    if runtime:
        if len(workspaces) != 1 or scopes or subject:
            raise click.UsageError(
                "--runtime takes the runtime's one --workspace, and no --scope or --subject"
            )
        click.echo(mint(f"runtime:{runtime}", {f"runtime:{runtime}"}, set(workspaces), ttl))
        return
    click.echo(mint(subject or user_subject(), set(scopes or SCOPES), set(workspaces or ["*"]), ttl))


def guess_kind(program: str) -> str:
    name = os.path.basename(program)
    for kind in ("codex", "claude", "python"):
        if name.startswith(kind):
            return kind
    return "generic"


def main(argv: Sequence[str] | None = None) -> int:
    """`kronii agents ...` as `kronii` runs it (same errors and exit codes); a leading "agents" is optional."""
    from kronii.launcher.cli.main import main as kronii_main

    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["agents"]:
        arguments = arguments[1:]
    return kronii_main(["agents", *arguments])
