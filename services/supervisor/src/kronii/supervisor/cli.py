"""`kronii agents ...`: start agents in tmux, list and trigger them, pause them, read their panes,
and acknowledge deliveries from an agent's own hooks.

The main `kronii` CLI mounts this with `add_agents_parser(subparsers)` and `run_agents(args)`;
`python -m kronii.supervisor.cli agents ...` runs it alone. Exit codes (kronii.common.cli.exits):
0 done (a trigger was delivered, deferred or is already active); 1 the trigger failed, timed out or
sits typed but not submitted; 2 bad arguments; 3 no such runtime, workspace or trigger; 4 refused
(no token, a scope it lacks, a human override, the server there is not this host's supervisor);
5 the supervisor is not running or does not answer.

The supervisor's address: --url, else $KRONII_SUPERVISOR_URL, else the running `kronii up`'s,
else KRONII_SUPERVISOR_HOST and KRONII_SUPERVISOR_HTTP_PORT (kronii.common.rendezvous). A token
minted here from the local secret is sent only to a server that proves it holds the same secret
(GET /v1/identity); a token given with --token or in the environment is sent as is."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
from kronii.common.cli import exits

__all__ = ["add_agents_parser", "main", "run_agents"]


class CliError(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def add_agents_parser(subparsers: Any) -> argparse.ArgumentParser:
    agents: argparse.ArgumentParser = subparsers.add_parser(
        "agents", help="start, list, trigger and watch agents in tmux (the supervisor)"
    )
    agents.add_argument(
        "--url",
        default=None,
        help=(
            "the supervisor's HTTP address (default $KRONII_SUPERVISOR_URL, else the running "
            "`kronii up`'s, else KRONII_SUPERVISOR_HOST and KRONII_SUPERVISOR_HTTP_PORT)"
        ),
    )
    agents.add_argument(
        "--token",
        default=None,
        help="a service token (default $KRONII_SUPERVISOR_TOKEN, $KRONII_RUNTIME_TOKEN, or one made from the local secret)",
    )
    sub = agents.add_subparsers(dest="agents_command", metavar="ACTION")
    sub.required = True

    spawn = sub.add_parser("spawn", help="start an agent in its workspace's tmux session and register it")
    spawn.add_argument("--workspace", required=True)
    spawn.add_argument("--agent", required=True)
    spawn.add_argument("--role", default="", help="window name in the session (exec, review, sec, ...)")
    spawn.add_argument(
        "--kind", default="", help="codex, claude, python or generic (default: from the command)"
    )
    spawn.add_argument("--session-id", default="", help="the agent's logical session, for `resume`")
    spawn.add_argument("--cwd", default="", help="working directory (default: the supervisor's)")
    spawn.add_argument(
        "command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]: run directly, no shell"
    )

    listing = sub.add_parser("list", help="the registered runtimes")
    listing.add_argument("--workspace", default="")
    listing.add_argument("--agent", default="")
    listing.add_argument("--all", action="store_true", help="include offline runtimes")
    listing.add_argument("--json", action="store_true")

    trigger = sub.add_parser("trigger", help="wake an agent with a prompt (typed into its pane, or resumed)")
    trigger.add_argument("--workspace", required=True)
    trigger.add_argument("--agent", required=True)
    trigger.add_argument("--thread", default="")
    trigger.add_argument(
        "--trigger-id", default="", help="repeat one to get its first outcome (default: new)"
    )
    trigger.add_argument("--ack-timeout-ms", type=int, default=0)
    trigger.add_argument("--force", action="store_true", help="type even over a person (needs --reason)")
    trigger.add_argument("--reason", default="", help="why; with --force it starts with human_override:")
    trigger.add_argument("--json", action="store_true")
    trigger.add_argument("prompt", help="the prompt, or - to read it from standard input")

    for name, text in (("pause", "hold triggers for a runtime"), ("resume", "let triggers through again")):
        action = sub.add_parser(name, help=text)
        action.add_argument("runtime")
        action.add_argument("--reason", default="")

    logs = sub.add_parser("logs", help="a runtime's recent pane lines (redacted)")
    logs.add_argument("runtime")
    logs.add_argument("-n", "--lines", type=int, default=50)

    ack = sub.add_parser(
        "ack", help="acknowledge a delivery (for agents' hooks: Claude Code hooks, Codex notify)"
    )
    ack.add_argument(
        "--runtime", default=os.environ.get("KRONII_RUNTIME_ID", ""), help="default $KRONII_RUNTIME_ID"
    )
    ack.add_argument("--trigger", default="")
    ack.add_argument("payload", nargs="*", help="ignored (Codex's notify passes a JSON argument)")

    beat = sub.add_parser("heartbeat", help="report a runtime alive (for agents' hooks)")
    beat.add_argument(
        "--runtime", default=os.environ.get("KRONII_RUNTIME_ID", ""), help="default $KRONII_RUNTIME_ID"
    )
    beat.add_argument("--status", choices=("active", "idle"), default="active")

    force = sub.add_parser("force", help="deliver a deferred trigger now (explicit operator intent)")
    force.add_argument("trigger")
    force.add_argument("--reason", required=True, help="starts with human_override: or coordinator_override:")

    unblock = sub.add_parser("unblock", help="clear a thread's automatic block")
    unblock.add_argument("--agent", required=True)
    unblock.add_argument("--thread", required=True)
    unblock.add_argument("--reason", default="")

    token = sub.add_parser("token", help="print a service token signed with this host's supervisor secret")
    token.add_argument("--subject", default="", help="the caller's identity (default cli:<user>)")
    token.add_argument(
        "--workspace", action="append", default=[], help="allowed workspace (repeat; default all)"
    )
    token.add_argument("--scope", action="append", choices=("trigger", "operate", "read"), default=[])
    token.add_argument("--ttl", type=int, default=3600, help="seconds")
    agents.set_defaults(handler=run_agents)
    return agents


def _local_secret() -> bytes:
    from kronii.common.settings import load_settings
    from kronii.supervisor.settings import SupervisorSettings

    settings = load_settings(SupervisorSettings)
    if settings.token_secret is not None:
        return settings.token_secret.get_secret_value().encode()
    path = settings.token_key_file
    if not path.exists():
        raise CliError(
            f"kronii: the supervisor has not run here yet ({path} does not exist): start it with `kronii up`, "
            "or set KRONII_SUPERVISOR_TOKEN to reach one elsewhere",
            exits.UNREACHABLE,
        )
    return path.read_bytes().strip()


def _mint(
    subject: str, scopes: set[str], workspaces: set[str], ttl: float, secret: bytes | None = None
) -> str:
    from kronii.supervisor.core.tokens import issue_token

    return issue_token(
        secret if secret is not None else _local_secret(),
        subject=subject, scopes=scopes, workspaces=workspaces, now=time.time(), ttl_secs=ttl,
    )  # fmt: skip


def _given_token(args: argparse.Namespace) -> str | None:
    """A token the caller chose: --token, $KRONII_SUPERVISOR_TOKEN or $KRONII_RUNTIME_TOKEN."""
    given = args.token or os.environ.get("KRONII_SUPERVISOR_TOKEN") or os.environ.get("KRONII_RUNTIME_TOKEN")
    return str(given) if given else None


# The identity check is one small request; a server that does not answer it soon is not trusted.
IDENTITY_TIMEOUT_SECS = 10.0
# How each source of the address (kronii.common.rendezvous.service_http_url) reads in a message.
_SOURCES = {
    "flag": "--url",
    "env url": "KRONII_SUPERVISOR_URL",
    "kronii up": "the running `kronii up`",
    "settings": "KRONII_SUPERVISOR_HOST and KRONII_SUPERVISOR_HTTP_PORT",
}


class _Client:
    def __init__(self, args: argparse.Namespace, timeout: float = 120.0) -> None:
        from kronii.common.rendezvous import service_http_url
        from kronii.supervisor.settings import SupervisorSettings

        address = service_http_url("supervisor", SupervisorSettings, flag=args.url)
        self.url = address.url
        self.source = address.source
        self.http = httpx.Client(base_url=self.url, timeout=timeout)
        token = _given_token(args)
        if token is None:
            # Minted from this host's secret: only for a server that proves it holds that secret.
            secret = _local_secret()
            self._check_identity(secret, min(timeout, IDENTITY_TIMEOUT_SECS))
            token = _mint(f"cli:{getpass.getuser()}", {"trigger", "operate", "read"}, {"*"}, 600, secret)
        self.http.headers["authorization"] = f"Bearer {token}"

    def _unreachable(self, error: Exception) -> CliError:
        return CliError(
            f"kronii: the supervisor is not reachable at {self.url} (address from "
            f"{_SOURCES.get(self.source, self.source)}; {error}): start it with `kronii up`",
            exits.UNREACHABLE,
        )

    def _check_identity(self, secret: bytes, timeout: float) -> None:
        from kronii.supervisor.identity import new_nonce, proof_matches

        nonce = new_nonce()
        try:
            response = self.http.get("/v1/identity", params={"nonce": nonce}, timeout=timeout)
        except httpx.TransportError as error:
            raise self._unreachable(error) from None
        try:
            body = response.json() if response.status_code == 200 else None
        except ValueError:
            body = None
        if not (
            isinstance(body, dict)
            and body.get("service") == "supervisor"
            and proof_matches(secret, nonce, body.get("proof"), _dialled_port(self.url))
        ):
            raise CliError(
                f"kronii: the server at {self.url} is not this host's supervisor (its identity proof "
                "does not match the local secret); refusing to send it a token. "
                "Set KRONII_SUPERVISOR_URL or --url",
                exits.REFUSED,
            )

    def call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.TransportError as error:
            raise self._unreachable(error) from None
        try:
            body = response.json()
        except ValueError:
            body = {"detail": response.text}
        if response.status_code >= 400:
            detail = body.get("detail") if isinstance(body, dict) else body
            raise CliError(
                f"kronii: the supervisor refused: {detail} (HTTP {response.status_code})",
                _exit_for_status(response.status_code),
            )
        out: dict[str, Any] = body
        return out


def _exit_for_status(status: int) -> int:
    """The exit code for an HTTP refusal: what was wrong, in the vocabulary of every kronii command."""
    if status in (400, 422):
        return exits.USAGE
    if status == 404:
        return exits.NOT_FOUND
    if status in (401, 403, 409, 423, 429):
        return exits.REFUSED
    if status in (502, 503, 504):
        return exits.UNREACHABLE
    return exits.FAILED


def _dialled_port(url: str) -> int:
    parts = urlsplit(url)
    return parts.port or (443 if parts.scheme == "https" else 80)


def _print_runtimes(runtimes: list[dict[str, Any]]) -> None:
    header = ("RUNTIME", "WORKSPACE", "AGENT", "ROLE", "KIND", "STATUS", "STATE", "PANE", "PID", "FLAGS")
    rows = [header]
    for r in runtimes:
        flags = (
            ",".join(f for f, on in (("paused", r.get("paused")), ("busy", r.get("operator_busy"))) if on)
            or "-"
        )
        rows.append((r["runtime_id"], r["workspace_id"], r["agent_id"], r.get("role") or "-", r["kind"], r["status"],
                     r.get("agent_state") or "-", r["pty_target"], str(r["pid"]), flags))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def run_agents(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except CliError as error:
        print(error.message, file=sys.stderr)
        return error.code


def _run(args: argparse.Namespace) -> int:
    command = args.agents_command
    if command == "token":
        scopes = set(args.scope or ("trigger", "operate", "read"))
        print(
            _mint(args.subject or f"cli:{getpass.getuser()}", scopes, set(args.workspace or ["*"]), args.ttl)
        )
        return 0
    if command in ("ack", "heartbeat"):
        return _hook(args)
    client = _Client(args)
    if command == "spawn":
        argv = list(args.command)
        if argv[:1] == ["--"]:
            argv = argv[1:]
        if not argv:
            raise CliError(
                "kronii: give the agent's command after --, e.g. kronii agents spawn --workspace w --agent a -- codex",
                2,
            )
        kind = args.kind or _guess_kind(argv[0])
        body = client.call("POST", "/v1/runtimes/spawn", json={
            "workspace_id": args.workspace, "agent_id": args.agent, "role": args.role, "kind": kind,
            "command": argv, "session_id": args.session_id, "cwd": args.cwd or os.getcwd(),
        })  # fmt: skip
        runtime = body["runtime"]
        print(
            f"started {runtime['agent_id']} ({kind}) as {runtime['runtime_id']} in pane {runtime['pty_target']}, pid {runtime['pid']}"
        )
        print(f"watch it: {body['attach_command']}")
        return 0
    if command == "list":
        params = {
            "workspace_id": args.workspace,
            "agent_id": args.agent,
            "include_offline": str(args.all).lower(),
        }
        runtimes = client.call("GET", "/v1/runtimes", params=params).get("runtimes", [])
        if args.json:
            print(json.dumps(runtimes, indent=2))
        elif runtimes:
            _print_runtimes(runtimes)
        else:
            print("no runtimes registered")
        return 0
    if command == "trigger":
        prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
        body = {
            "trigger_id": args.trigger_id or f"cli-{uuid.uuid4().hex[:12]}", "agent_id": args.agent,
            "workspace_id": args.workspace, "thread_id": args.thread, "prompt": prompt,
            "ack_timeout_ms": args.ack_timeout_ms, "force_override": args.force, "reason": args.reason,
        }  # fmt: skip
        outcome = client.call("POST", "/v1/triggers", json=body)
        if args.json:
            print(json.dumps(outcome, indent=2))
        else:
            parts = [f"{outcome['trigger_id']}: {outcome['result']}"]
            if outcome.get("delivery_backend"):
                parts.append(f"via {outcome['delivery_backend']}")
            if outcome.get("error_code"):
                parts.append(f"({outcome['error_code']})")
            if outcome.get("deferred_until"):
                parts.append(f"until {outcome['deferred_until']}")
            print(" ".join(parts))
            if outcome.get("detail"):
                print(f"  {outcome['detail']}")
        return 1 if outcome["result"] in ("timeout", "failed", "typed_not_submitted") else 0
    if command in ("pause", "resume"):
        runtime = client.call("POST", f"/v1/runtimes/{args.runtime}/{command}", json={"reason": args.reason})
        print(f"{runtime['runtime_id']}: {'paused' if runtime['paused'] else 'running'}")
        return 0
    if command == "logs":
        if not 1 <= args.lines <= 2000:
            raise CliError("kronii: --lines must be between 1 and 2000", 2)
        body = client.call("GET", f"/v1/runtimes/{args.runtime}/logs", params={"lines": args.lines})
        print("\n".join(body.get("lines", [])))
        return 0
    if command == "force":
        outcome = client.call("POST", f"/v1/triggers/{args.trigger}/force", json={"reason": args.reason})
        print(f"{outcome['trigger_id']}: {outcome['result']}")
        return 1 if outcome["result"] in ("timeout", "failed") else 0
    if command == "unblock":
        body = client.call(
            "POST",
            "/v1/threads/unblock",
            json={"agent_id": args.agent, "thread_id": args.thread, "reason": args.reason},
        )
        print("unblocked" if body.get("was_blocked") else "the thread was not blocked")
        return 0
    raise CliError(f"kronii: unknown agents action {command!r}", 2)


def _hook(args: argparse.Namespace) -> int:
    """ack and heartbeat run inside agents' hooks: quick, and never fatal to the agent."""
    client = _Client(args, timeout=3.0)
    if args.agents_command == "ack":
        if not args.runtime and not args.trigger:
            raise CliError("kronii: give --runtime or --trigger (or set KRONII_RUNTIME_ID)", 2)
        body = client.call("POST", "/v1/acks", json={"runtime_id": args.runtime, "trigger_id": args.trigger})
        print(f"acknowledged {body.get('trigger_id') or args.runtime or args.trigger}")
        return 0
    if not args.runtime:
        raise CliError("kronii: give --runtime (or set KRONII_RUNTIME_ID)", 2)
    runtime = client.call("POST", f"/v1/runtimes/{args.runtime}/heartbeat", json={"status": args.status})
    print(f"{runtime['runtime_id']}: {runtime['status']}")
    return 0


def _guess_kind(program: str) -> str:
    name = os.path.basename(program)
    if name.startswith("codex"):
        return "codex"
    if name.startswith("claude"):
        return "claude"
    if name.startswith("python"):
        return "python"
    return "generic"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="kronii", description="kronii agents: the PTY supervisor's command line"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    add_agents_parser(sub)
    args = parser.parse_args(argv)
    return run_agents(args)


if __name__ == "__main__":
    raise SystemExit(main())
