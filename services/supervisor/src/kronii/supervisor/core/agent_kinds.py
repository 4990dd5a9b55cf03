"""The per-agent-kind profiles: how to type into, submit to, resume and spawn Codex, Claude Code, a
REPL or any other agent, with the defaults and the operator's overrides (KindBook)."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

__all__ = ["DEFAULT_KINDS", "PLACEHOLDERS", "AgentKind", "KindBook", "render_argv"]

PLACEHOLDERS = frozenset({"session_id", "prompt", "agent_id", "workspace_id", "thread_id"})


_FIELD = re.compile(r"^[a-z_]+$")


def _placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


@dataclass(frozen=True, slots=True)
class AgentKind:
    """How to talk to one kind of agent (Codex, Claude Code, a REPL) through its terminal."""

    name: str
    # Named tmux keys sent to submit; a bare C-m does not submit in Codex or Claude Code.
    submit_keys: tuple[str, ...] = ("Enter",)
    # Pause between the text and the submit key: Codex treats fast input as a paste for 120 ms.
    submit_pause_secs: float = 0.1
    # What starts the agent's input line on screen ("\u203a" in Codex, ">>>" in Python).
    input_marker: str = ""
    # What starts each further line of a multi-line input ("..." in Python); Codex indents them.
    continuation_marker: str = ""
    # Argument vectors (never a shell) with {session_id}, {prompt}, {agent_id}, ... placeholders.
    resume_argv: tuple[str, ...] = ()
    spawn_argv: tuple[str, ...] = ()
    # Wait this long after the submit key before looking for typed-not-submitted text.
    verify_delay_secs: float = 0.15
    # Screen text (case-insensitive) that means the agent is busy with a prompt.
    working_patterns: tuple[str, ...] = ()
    # Screen text that means a dialog waits for a person: nothing is typed while it shows.
    blocked_patterns: tuple[str, ...] = ()
    # Regular expressions (case-insensitive, per screen line) that mean the agent is still starting
    # although its input box is drawn.
    starting_patterns: tuple[str, ...] = ()
    # A resumed or spawned agent must reach idle or working (or an exec-style resume exit 0)
    # within this long, else the step failed.
    start_timeout_secs: float = 10.0
    # "exec": the resume command runs the prompt and exits (codex exec resume); "interactive":
    # it opens the agent's own screen (claude --resume).
    resume_style: str = "exec"
    # The agent is a shell itself (bash as a command-line agent): its shell in front is the agent.
    # For every other kind a shell in front is what the agent exited back to, never typed into.
    shell_is_agent: bool = False
    # Where the agent itself records each prompt it takes, as paths with $VARIABLES of its own
    # environment (the first whose variables are all set): a new entry naming the prompt
    # acknowledges the delivery. `history_field` is the JSON field of a JSON-lines file ("" for
    # plain lines). None for `generic`: its screen is the only truth.
    history_files: tuple[str, ...] = ()
    history_field: str = ""

    def __post_init__(self) -> None:
        if self.submit_pause_secs < 0 or self.verify_delay_secs < 0:
            raise ValueError(f"agent kind {self.name}: pauses must not be negative")
        if not 0 < self.start_timeout_secs <= 600:
            raise ValueError(f"agent kind {self.name}: start_timeout_secs must be in (0, 600]")
        if self.resume_style not in ("exec", "interactive"):
            raise ValueError(f"agent kind {self.name}: resume_style must be 'exec' or 'interactive'")
        for pattern in self.starting_patterns:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"agent kind {self.name}: starting pattern {pattern!r}: {error}") from None
        if not self.submit_keys:
            raise ValueError(f"agent kind {self.name}: submit_keys must name at least one key")
        for template in (*self.resume_argv, *self.spawn_argv):
            unknown = _placeholders(template) - PLACEHOLDERS
            if unknown:
                raise ValueError(
                    f"agent kind {self.name}: unknown placeholder {sorted(unknown)[0]!r} in {template!r}; "
                    f"known: {', '.join(sorted(PLACEHOLDERS))}"
                )

    @property
    def can_resume(self) -> bool:
        return bool(self.resume_argv)

    @property
    def can_spawn(self) -> bool:
        return bool(self.spawn_argv)

    def with_overrides(self, overrides: Mapping[str, Any]) -> AgentKind:
        allowed = {"submit_keys", "submit_pause_secs", "input_marker", "resume_argv", "spawn_argv"}
        allowed |= {"verify_delay_secs", "working_patterns", "blocked_patterns", "start_timeout_secs"}
        allowed.add("starting_patterns")
        allowed.add("resume_style")
        allowed.add("continuation_marker")
        allowed |= {"shell_is_agent", "history_files", "history_field"}
        unknown = set(overrides) - allowed
        if unknown:
            raise ValueError(f"agent kind {self.name}: unknown field {sorted(unknown)[0]!r}")
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in overrides.items()}
        return replace(self, **values)


# Dialogs seen on Codex 0.169's screen (folder trust, sign-in, command and patch approval).
CODEX_DIALOGS = (
    "Trust this folder?",
    "Sign in with ChatGPT",
    "Press enter to continue",
    "Would you like to run the following command?",
    "Would you like to make the following edits?",
    "Allow Codex to",
)
# Claude Code's folder trust, permission and login prompts.
CLAUDE_DIALOGS = (
    "Do you trust the files in this folder?",
    "Do you want to proceed?",
    "Do you want to make this edit",
    "Select login method",
)

DEFAULT_KINDS: Mapping[str, AgentKind] = MappingProxyType(
    {
        "codex": AgentKind(
            name="codex",
            submit_pause_secs=0.15,
            input_marker="\u203a",
            resume_argv=("codex", "exec", "resume", "{session_id}", "{prompt}"),
            spawn_argv=("codex", "{prompt}"),
            working_patterns=("esc to interrupt",),
            blocked_patterns=CODEX_DIALOGS,
            # Its box shows before it can take a prompt: the header reads "loading", and a prompt
            # sent then waits in the box under "Waiting for startup".
            starting_patterns=(r"^\s*loading\s*$", r"Waiting for startup"),
            start_timeout_secs=10.0,
            # Codex appends {"session_id", "ts", "text"} to history.jsonl when a turn takes a prompt.
            history_files=("$CODEX_HOME/history.jsonl", "$HOME/.codex/history.jsonl"),
            history_field="text",
        ),
        # Read against its own idle screen (no input marker): its prompt glyph, placeholder and
        # cursor have changed between versions, and a kind tuned to one screen misreads the next.
        "claude": AgentKind(
            name="claude",
            submit_pause_secs=0.1,
            history_files=("$CLAUDE_CONFIG_DIR/history.jsonl", "$HOME/.claude/history.jsonl"),
            history_field="display",
            resume_argv=("claude", "--resume", "{session_id}", "{prompt}"),
            spawn_argv=("claude", "{prompt}"),
            working_patterns=("esc to interrupt",),
            blocked_patterns=CLAUDE_DIALOGS,
            start_timeout_secs=10.0,
            resume_style="interactive",
        ),
        "python": AgentKind(
            name="python",
            submit_pause_secs=0.02,
            input_marker=">>>",
            continuation_marker="...",
            start_timeout_secs=5.0,
        ),
        "generic": AgentKind(name="generic", submit_pause_secs=0.05, start_timeout_secs=5.0),
        # A shell taking a prompt as a command line: only when asked for by name.
        "shell": AgentKind(name="shell", submit_pause_secs=0.05, start_timeout_secs=5.0, shell_is_agent=True),
    }
)


def render_argv(template: tuple[str, ...], values: Mapping[str, str]) -> list[str]:
    """Fill a template's placeholders; each element stays one argument whatever the value holds."""
    out: list[str] = []
    for item in template:
        out.append(item.format_map({name: values.get(name, "") for name in PLACEHOLDERS}))
    return out


@dataclass(frozen=True, slots=True)
class KindBook:
    """The agent kinds in force: the defaults with the operator's overrides."""

    kinds: Mapping[str, AgentKind] = field(default_factory=lambda: DEFAULT_KINDS)

    def get(self, name: str) -> AgentKind:
        return self.kinds.get(name) or self.kinds.get("generic") or AgentKind(name="generic")

    @classmethod
    def from_overrides(cls, overrides: Mapping[str, Mapping[str, Any]]) -> KindBook:
        kinds = dict(DEFAULT_KINDS)
        for name, fields in overrides.items():
            if not _FIELD.match(name):
                raise ValueError(f"agent kind name {name!r} must be lower-case letters and underscores")
            base = kinds.get(name, AgentKind(name=name))
            kinds[name] = base.with_overrides(fields)
        return cls(MappingProxyType(kinds))
