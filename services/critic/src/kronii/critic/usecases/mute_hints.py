"""`kronii critic mute`: no hints for a while (the commands are still remembered)."""

from __future__ import annotations

from kronii.critic.ports import PolicyStore
from kronii.foundation.clock import Clock

__all__ = ["MuteHints"]


class MuteHints:
    def __init__(self, policy: PolicyStore, clock: Clock) -> None:
        self._policy = policy
        self._clock = clock

    def __call__(self, seconds: int) -> int:
        """Mute hints for ``seconds`` (0 unmutes); the time they are muted until, in ms since the
        epoch (0 when not muted)."""
        until = self._clock.wall_ms() + seconds * 1000 if seconds else 0
        self._policy.write_mute(until)
        return until
