"""The critic's offer of a repeated failure to an agent (issue: sources of work besides agents):
which agent it goes to, what the agent is told, the words the person sees. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from kronii.supervisor.core.model import RuntimeRecord, RuntimeStatus

__all__ = ["FailureOffer", "choose_agent", "handoff_text", "handoff_thread", "offer_words"]


@dataclass(frozen=True, slots=True)
class FailureOffer:
    """Every text redacted by the critic before it was sent (and again before a thread stores it)."""

    offer_id: str
    command_line: str
    exit_code: int
    error_text: str
    cwd: str
    times: int
    failure_key: str
    at: float
    workspace_id: str = ""
    agent_id: str = ""
    accepted_at: float | None = None
    thread_id: str = ""
    seq: int = 0


# A redaction placeholder ("[USERNAME_1]"): the critic's cwd is redacted, the agent's is not.
_PLACEHOLDER = re.compile(r"\[[A-Z][A-Z0-9_]*_\d+\]")
# How much of a command the bubble shows (the pipeline takes a body of at most 2,000 characters).
_SHOWN_COMMAND_CHARS = 300


def _part_matches(redacted: str, plain: str) -> bool:
    """One directory name of the offer's (redacted) cwd against the agent's: a placeholder stands
    for whatever the redaction took out."""
    pieces = _PLACEHOLDER.split(redacted)
    if len(pieces) == 1:
        return redacted == plain
    return re.fullmatch(".+".join(re.escape(piece) for piece in pieces), plain) is not None


def _within(cwd: str, root: str) -> bool:
    """Whether the offer's directory `cwd` (redacted by the critic: /home/[USERNAME_1]/app) is
    `root`, the agent's working directory, or below it."""
    if not cwd or not root:
        return False
    inner, outer = PurePosixPath(cwd).parts, PurePosixPath(root).parts
    return len(inner) >= len(outer) and all(map(_part_matches, inner[: len(outer)], outer))


def choose_agent(offer: FailureOffer, runtimes: list[RuntimeRecord]) -> RuntimeRecord | None:
    """The agent named in the offer; else the live agent working deepest above the command's
    directory; else the only live agent there is. None: nobody to hand it to."""
    live = [r for r in runtimes if r.status not in (RuntimeStatus.OFFLINE, RuntimeStatus.SUPERSEDED)]
    if offer.agent_id:
        return next(
            (r for r in live if r.agent_id == offer.agent_id and offer.workspace_id in ("", r.workspace_id)),
            None,
        )
    holding = [r for r in live if _within(offer.cwd, r.cwd)]
    if holding:
        return max(holding, key=lambda r: (len(PurePosixPath(r.cwd).parts), r.registered_at))
    return live[0] if len(live) == 1 else None


def handoff_thread(agent_id: str) -> str:
    """The thread the person's hand-overs to one agent go to."""
    return f"handoff-{agent_id}"


def handoff_text(offer: FailureOffer) -> str:
    error = offer.error_text.strip() or "(it printed no error text kronii could read)"
    return (
        f"The person hands you a failure to look at: `{offer.command_line}` failed {offer.times} times the same "
        f"way in {offer.cwd or 'their shell'} (exit status {offer.exit_code}).\n"
        f"What it printed:\n{error}\n"
        "Find the cause and fix it if you can; post what you found to this thread."
    )


def offer_words(offer: FailureOffer, agent_id: str) -> tuple[str, str, str]:
    """(title, body, button label) of the bubble that asks the person."""
    command = " ".join(offer.command_line.split())
    if len(command) > _SHOWN_COMMAND_CHARS:
        command = command[: _SHOWN_COMMAND_CHARS - 1] + "…"
    return (
        f"hand this failure to {agent_id}?",
        f"`{command}` failed {offer.times} times the same way (exit {offer.exit_code}). "
        f"{agent_id} can look at it; nothing is sent unless you say yes.",
        f"Hand to {agent_id}",
    )
