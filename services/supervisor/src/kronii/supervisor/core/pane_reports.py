"""What the supervisor's outside things report back, as its use cases read them: one look at a
pane (PaneProbe, Look), the transcript before a prompt is typed (Baseline), what a write did
(Written), and whether a resume or spawn started (StartCheck). Values only; the adapters make them."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.supervisor.core.agent_state import Reading
from kronii.supervisor.core.model import PaneFacts

__all__ = ["Baseline", "Look", "PaneProbe", "StartCheck", "Written"]


@dataclass(frozen=True, slots=True)
class PaneProbe:
    """One look at a pane, its session's clients and its screen."""

    pane_id: str
    pane_pid: int
    dead: bool
    cursor_y: int
    session: str
    current_command: str
    # Latest activity (epoch seconds) of each attached client that is not a control client and
    # looks at this pane (its keys go here).
    human_client_activity: tuple[float, ...]
    screen: tuple[str, ...]
    cursor_x: int = 0
    # The terminal shows the cursor (DECTCEM); a hidden one may be parked anywhere.
    cursor_visible: bool = True


@dataclass(frozen=True, slots=True)
class Look:
    facts: PaneFacts
    probe: PaneProbe | None
    reading: Reading | None = None


@dataclass(frozen=True, slots=True)
class Baseline:
    """The transcript just before the prompt is typed: how often its echo shows already, and
    whether the agent was busy. A later increase (or the start of work) is the agent taking it."""

    echoes: int = 0
    working: bool = False


@dataclass(frozen=True, slots=True)
class Written:
    # A retry found the text still in the box and only pressed the submit key.
    submit_only: bool
    # Nothing was sent: a retry found the box without the prompt (typing it again could send it
    # twice).
    nothing: bool = False
    # Why the typed text was taken back (as many backspaces as characters typed) instead of
    # submitted: it showed nowhere, or outside the input area, or a person typed meanwhile.
    removed: str = ""
    # The person's keys came while the text was being typed (removed and deferred, not failed).
    person_typed: bool = False


@dataclass(frozen=True, slots=True)
class StartCheck:
    ok: bool
    pane_id: str = ""
    pid: int = 0
    # What the new process showed: a state, "exited 1", "running".
    seen: str = ""
    detail: str = ""
