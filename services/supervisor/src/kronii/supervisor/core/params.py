"""Tunable numbers of the core, with seed 002's defaults (the agent kinds are in core/agent_kinds.py)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SupervisorParams"]


@dataclass(frozen=True, slots=True)
class SupervisorParams:
    # Section 12: acknowledgement and retries.
    ack_timeout_secs: float = 8.0
    ack_retries: int = 2
    # Section 12: resume/spawn defaults.
    resume_max_attempts: int = 2
    stale_session_secs: float = 12 * 3600.0
    crash_loop_failures: int = 3
    crash_loop_window_secs: float = 15 * 60.0
    # Sections 12 and 13.2: human-input collision.
    quiet_window_secs: float = 20.0
    recheck_secs: float = 5.0
    max_defer_secs: float = 60.0
    # Section 14: guardrails.
    rate_limit: int = 10
    rate_window_secs: float = 60.0
    # Cooldown: after `cooldown_failures` real failures of the agent's runtime in a row (typed and
    # not taken, stuck in its box, a write, resume or spawn that failed; never a person, a dialog or
    # a deferral), nothing is typed to that agent for `cooldown_secs`, doubling with each further
    # failure up to `cooldown_max_secs`. A delivery ends it. Other agents are never held by it.
    cooldown_failures: int = 3
    cooldown_secs: float = 15.0
    cooldown_max_secs: float = 60.0
    no_progress_turns: int = 20
    repeated_finding_cycles: int = 3
    # Section 11: payload rules. One short line goes by literal send-keys, the rest by paste.
    max_payload_bytes: int = 16 * 1024
    literal_max_chars: int = 200

    def __post_init__(self) -> None:
        for name in ("ack_timeout_secs", "recheck_secs", "rate_window_secs", "crash_loop_window_secs"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.max_defer_secs < self.recheck_secs:
            raise ValueError("max_defer_secs must be at least recheck_secs")
        for name in ("ack_retries", "resume_max_attempts", "rate_limit", "crash_loop_failures"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")
        if self.max_payload_bytes <= 0:
            raise ValueError("max_payload_bytes must be positive")
