"""`kronii vision do|plans|show|approve|deny|context|setup`: the vision engine for a person.

- `do "INTENT"`: plan it on the screen as it is now and run it; when the safety layer flags an action,
  the plan is shown (every action, why it is flagged, every ambiguous name) and you answer on the
  keyboard (or with the desktop notification); an approval goes through the engine's local socket
  with this terminal's proof of presence, never over TCP.
- `plans`, `show PLAN`: the plans held and one plan whole. `approve PLAN` / `deny PLAN`.
- `context`: what a plan would see now (the pruned accessibility tree and redacted OCR text).
- `setup`: the engine's key and the two commands that let it read capture's redacted frames and ask
  the broker for the desktop.

Exit codes (kronii.launcher.cli.exits): 0 done; 1 failed or stopped; 2 usage; 3 no such plan; 4 refused
(blocked by the safety layer, denied, needs a person, the screen changed); 5 the engine is not running."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import click
from kronii.launcher.cli import exits
from kronii.launcher.cli.tables import print_table
from kronii.vision.cli.http import Options, Vision

__all__ = ["outcome_text", "plan_text", "vision_command"]

_WAITING = {"awaiting_confirmation", "ready", "executing"}
_FINAL_EXIT = {"done": exits.OK, "failed": exits.FAILED, "stopped": exits.FAILED, "expired": exits.FAILED,
               "denied": exits.REFUSED, "blocked": exits.REFUSED, "stale": exits.REFUSED}  # fmt: skip


def plan_text(plan: dict[str, Any]) -> str:
    """A plan as a person reads it: what it would do, why anything is flagged, what is ambiguous."""
    lines = [f"plan {plan.get('plan_id', '?')}: {plan.get('state', '?')} - “{plan.get('intent', '')}”"]
    for action in plan.get("actions", []):
        flag = " (needs your yes)" if action.get("require_confirmation") else ""
        why = (action.get("metadata") or {}).get("confirm_reason", "")
        lines.append(
            f"  • {action.get('description', action.get('type'))}{flag}" + (f": {why}" if why else "")
        )
    for amb in plan.get("ambiguities", []):
        where = ", ".join(
            f"{c.get('id')} {c.get('role')}"
            + (f" at {c['bounds'].get('x', 0)},{c['bounds'].get('y', 0)}" if c.get("bounds") else "")
            for c in amb.get("candidates", [])
        )
        lines.append(
            f"  ambiguous: “{amb.get('name')}” is {len(amb.get('candidates', []))} elements: {where}"
        )
    for dropped in plan.get("dropped", []):
        lines.append(f"  dropped: {dropped.get('reason')}")
    for key in ("blocked", "reason", "note"):
        if plan.get(key) and not (key == "reason" and plan.get(key) == plan.get("blocked")):
            lines.append(f"  {key}: {plan[key]}")
    for result in plan.get("results", []):
        lines.append(f"  ran: {result.get('action')} ({result.get('how')})")
    if plan.get("replanned_as"):
        lines.append(f"  planned again as {plan['replanned_as']}: kronii vision show {plan['replanned_as']}")
    return "\n".join(lines)


@click.group(
    "vision",
    help="Plan desktop actions from what is on the screen (do), approve or deny the flagged ones, "
    "and watch them run under the input broker's lease.",
)
@click.option(
    "--url", default=None, help="the engine's HTTP address (default: found like every kronii command)"
)
@click.option("--timeout", type=float, default=60.0, show_default=True, help="seconds each call may take")
@click.pass_context
def vision_command(ctx: click.Context, url: str | None, timeout: float) -> None:
    ctx.obj = Options(url, timeout)


def outcome_text(plan: dict[str, Any]) -> str:
    """How a plan already shown to the person ended: its state, what ran, why it stopped."""
    lines = [f"plan {plan.get('plan_id', '?')}: {plan.get('state', '?')}"]
    lines += [f"  ran: {r.get('action')} ({r.get('how')})" for r in plan.get("results", [])]
    if plan.get("reason"):
        lines.append(f"  reason: {plan['reason']}")
    if plan.get("replanned_as"):
        lines.append(f"  planned again as {plan['replanned_as']}: kronii vision show {plan['replanned_as']}")
    return "\n".join(lines)


def _finish(plan: dict[str, Any], as_json: bool, *, shown: bool = False) -> None:
    text = outcome_text(plan) if shown else plan_text(plan)
    click.echo(json.dumps(plan, indent=2) if as_json else text)
    code = _FINAL_EXIT.get(str(plan.get("state")), exits.OK)
    if code:
        sys.exit(code)


def _follow(vision: Vision, plan: dict[str, Any], wait_secs: float) -> dict[str, Any]:
    """Poll the plan until it ends (or waits for a person)."""
    deadline = time.monotonic() + wait_secs
    while plan.get("state") in ("ready", "executing") and time.monotonic() < deadline:
        time.sleep(0.2)
        plan = vision.call("GET", f"/v1/vision/plans/{plan['plan_id']}")
    return plan


@vision_command.command("do")
@click.argument("intent")
@click.option(
    "--yes", is_flag=True, help="approve a flagged plan without asking (you are the person at this terminal)"
)
@click.option("--json", "as_json", is_flag=True, help="print the final plan as JSON")
@click.option(
    "--wait", type=float, default=120.0, show_default=True, help="seconds to wait for the plan to run"
)
@click.pass_obj
def do(options: Options, intent: str, yes: bool, as_json: bool, wait: float) -> None:
    """Plan INTENT on the window in front now and run it; done only when its effect is seen.

    \b
    Without a model (the rules planner), INTENT is one or more steps joined by "then":
      click the Cancel button        press OK        click 7
      type hello into Name           type hello into the text field
      select Banana                  select the second row
      check Remember me              uncheck Bold    toggle Line Numbers
      open the File menu then click Save As
      open the main menu             open Firefox (an allowed app)
      wait 2 s
    """
    vision = Vision(options, "do")
    plan = vision.call("POST", "/v1/vision/plans", {"intent": intent, "execute": True})
    shown = plan.get("state") == "awaiting_confirmation"
    if shown:
        click.echo(plan_text(plan), err=True)
        if not (yes or click.confirm("Run this plan?", default=False, err=True)):
            plan = vision.call("POST", f"/v1/vision/plans/{plan['plan_id']}/deny")
            _finish(plan, as_json, shown=True)
        plan = Vision(options, "approve").as_person("POST", f"/v1/vision/plans/{plan['plan_id']}/approve")
    _finish(_follow(vision, plan, wait), as_json, shown=shown)


@vision_command.command("plans")
@click.option("--json", "as_json", is_flag=True, help="print the plans as JSON")
@click.pass_obj
def plans(options: Options, as_json: bool) -> None:
    """The plans the engine holds, newest first."""
    held = Vision(options, "plans").call("GET", "/v1/vision/plans").get("plans", [])
    if as_json:
        click.echo(json.dumps(held, indent=2))
        return
    rows = [
        [p.get("plan_id", ""), p.get("state", ""), str(len(p.get("actions", []))), p.get("intent", "")[:60]]
        for p in held
    ]
    print_table(["PLAN", "STATE", "ACTIONS", "INTENT"], rows)


@vision_command.command("show")
@click.argument("plan_id")
@click.option("--json", "as_json", is_flag=True, help="print the plan as JSON")
@click.pass_obj
def show(options: Options, plan_id: str, as_json: bool) -> None:
    """One plan whole: actions, flags, ambiguities, what ran."""
    plan = Vision(options, "show").call("GET", f"/v1/vision/plans/{plan_id}")
    click.echo(json.dumps(plan, indent=2) if as_json else plan_text(plan))


@vision_command.command("approve")
@click.argument("plan_id")
@click.option("--wait", type=float, default=120.0, show_default=True, help="seconds to wait for it to run")
@click.pass_obj
def approve(options: Options, plan_id: str, wait: float) -> None:
    """Approve PLAN_ID as the person at this terminal; it runs under the broker's lease."""
    plan = Vision(options, "approve").as_person("POST", f"/v1/vision/plans/{plan_id}/approve")
    _finish(_follow(Vision(options, "approve"), plan, wait), False)


@vision_command.command("deny")
@click.argument("plan_id")
@click.pass_obj
def deny(options: Options, plan_id: str) -> None:
    """Deny PLAN_ID: it never runs."""
    plan = Vision(options, "deny").call("POST", f"/v1/vision/plans/{plan_id}/deny")
    click.echo(plan_text(plan))


@vision_command.command("context")
@click.option("--json", "as_json", is_flag=True, help="print the context as JSON")
@click.pass_obj
def context(options: Options, as_json: bool) -> None:
    """What a plan would see now: the window in front, its pruned tree, redacted OCR text."""
    seen = Vision(options, "context").call("GET", "/v1/vision/context")
    if as_json:
        click.echo(json.dumps(seen, indent=2))
        return
    x_window = seen.get("window") or {}
    where = f" ({x_window.get('app')}, pid {x_window.get('pid')}, X window {x_window.get('x_id', 0):#x})"
    click.echo(f"window: {seen.get('focused_title') or '-'}" + (where if x_window else ""))
    rows = [[n.get("id", ""), n.get("role", ""), n.get("name", ""), "yes" if n.get("focused") else ""]
            for n in seen.get("tree", [])]  # fmt: skip
    print_table(["ID", "ROLE", "NAME", "FOCUSED"], rows)
    for note in seen.get("notes", []):
        click.echo(f"note: {note}")
    timings = seen.get("timings_ms", {})
    click.echo("built in " + ", ".join(f"{part} {ms} ms" for part, ms in timings.items()))


@vision_command.command("setup")
@click.option("--yes", "-y", is_flag=True, help="register the key with capture and the broker without asking")
@click.option("--print-only", is_flag=True, help="only print the commands that register the key")
def setup(yes: bool, print_only: bool) -> None:
    """The engine's key, registered with capture (to read redacted frames) and the broker (to ask for
    the desktop). Asks before it registers; says so when both already know the key."""
    from kronii.foundation.settings import load_settings
    from kronii.vision.adapters.capture_frames import ensure_key
    from kronii.vision.cli.registration import Registration
    from kronii.vision.settings import VisionSettings

    settings = load_settings(VisionSettings)
    public = ensure_key(settings.key_file())
    click.echo(f"the vision engine's public key: {public}")
    registration = Registration(settings.client_id, public)
    missing = registration.missing()
    if not missing:
        click.echo(f"capture and the broker both know {settings.client_id}'s key: nothing to do")
        return
    commands = [registration.command(service) for service in missing]
    click.echo(f"{' and '.join(missing)} do not know this key yet; the command(s) that register it:")
    for command in commands:
        click.echo(f"  {' '.join(command)}")
    if print_only or not (yes or (sys.stdin.isatty() and click.confirm("run them now?", default=True))):
        return
    for service in missing:
        registration.register(service)
        click.echo(f"{service}: registered {settings.client_id}")
