"""The person's choices for the critic (the seed's "Config & Policy"): UseAI, Verbosity,
RetentionDays, the trigger toggles, Do-Not-Disturb and a mute until a time. Read from a mapping
(the TOML file's table) with errors that name the key; the seed's CamelCase names and snake_case
both work (`RetentionDays`, `retention_days`)."""

from __future__ import annotations

import datetime as dt
import difflib
import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kronii.critic.core.model import Trigger

__all__ = [
    "TOGGLED_TRIGGERS",
    "Policy",
    "PolicyError",
    "Verbosity",
    "normalised",
    "parse_duration",
    "parse_policy",
    "policy_keys",
]

TOGGLED_TRIGGERS = (
    Trigger.ERROR,
    Trigger.COMMAND_NOT_FOUND,
    Trigger.SECRET,
    Trigger.DANGEROUS,
    Trigger.REPEATED_FAILURE,
)
_MAX_RETENTION_DAYS = 3650


class PolicyError(ValueError):
    """A value the critic cannot use; the message is a sentence naming the key."""


class Verbosity(enum.StrEnum):
    QUIET = "quiet"  # only what can hurt: a dangerous command, a secret typed
    NORMAL = "normal"
    VERBOSE = "verbose"  # also the critiques with little to say


@dataclass(frozen=True)
class Policy:
    use_ai: bool = False
    verbosity: Verbosity = Verbosity.NORMAL
    retention_days: int = 30
    triggers: frozenset[Trigger] = field(default_factory=lambda: frozenset(TOGGLED_TRIGGERS))
    do_not_disturb: bool = False
    mute_until_ms: int = 0

    def enabled(self, kind: Trigger) -> bool:
        return kind in self.triggers

    def silent_at(self, now_ms: int) -> bool:
        """Do-Not-Disturb, or muted until later than now."""
        return self.do_not_disturb or now_ms < self.mute_until_ms

    def muted_until(self, until_ms: int) -> Policy:
        return replace(self, mute_until_ms=until_ms)


def _canonical(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


_KEYS = {
    "useai": "use_ai",
    "verbosity": "verbosity",
    "retentiondays": "retention_days",
    "triggers": "triggers",
    "donotdisturb": "do_not_disturb",
    "muteuntil": "mute_until",
}
_TRIGGER_KEYS = {_canonical(kind.value): kind for kind in TOGGLED_TRIGGERS}


def _unknown(key: str, where: str, known: list[str]) -> PolicyError:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return PolicyError(f"{where}{key!r} is not a critic setting{hint}")


def _bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise PolicyError(f"{key} must be true or false, not {value!r}")
    return value


def _verbosity(value: Any) -> Verbosity:
    try:
        return Verbosity(str(value).lower())
    except ValueError:
        raise PolicyError(f"Verbosity must be Quiet, Normal or Verbose, not {value!r}") from None


def _retention(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_RETENTION_DAYS:
        raise PolicyError(f"RetentionDays must be a whole number of days from 1 to {_MAX_RETENTION_DAYS}")
    return value


def _triggers(value: Any) -> frozenset[Trigger]:
    if not isinstance(value, Mapping):
        raise PolicyError("Triggers must be a table of trigger names to true or false")
    enabled = set(TOGGLED_TRIGGERS)
    for name, on in value.items():
        kind = _TRIGGER_KEYS.get(_canonical(str(name)))
        if kind is None:
            raise _unknown(str(name), "Triggers: ", [kind.value for kind in TOGGLED_TRIGGERS])
        if _bool(f"Triggers.{name}", on):
            enabled.add(kind)
        else:
            enabled.discard(kind)
    return frozenset(enabled)


def _mute_until(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return int(value.timestamp() * 1000)
    raise PolicyError("MuteUntil must be a time with its offset (2025-10-01T18:00:00+02:00) or ms since 1970")


def policy_keys(document: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of a table that are policy keys (the shared file's [critic] table also holds the
    service's settings)."""
    return {key: value for key, value in document.items() if _canonical(str(key)) in _KEYS}


def normalised(document: Mapping[str, Any]) -> dict[str, Any]:
    """The same table with every known key in one spelling (`RetentionDays` -> `retention_days`,
    `Triggers.CommandNotFound` -> `triggers.command_not_found`), so two tables can be overlaid."""
    table: dict[str, Any] = {}
    for key, value in document.items():
        name = _KEYS.get(_canonical(str(key)), str(key))
        if name == "triggers" and isinstance(value, Mapping):
            value = {
                (kind.value if (kind := _TRIGGER_KEYS.get(_canonical(str(inner)))) else str(inner)): on
                for inner, on in value.items()
            }
        table[name] = value
    return table


def parse_policy(document: Mapping[str, Any]) -> Policy:
    """The policy a table sets; keys it leaves out keep their defaults; an unknown key is an error
    (filter a shared table with policy_keys first)."""
    values: dict[str, Any] = {}
    for key, value in document.items():
        name = _KEYS.get(_canonical(str(key)))
        if name is None:
            raise _unknown(str(key), "", sorted(_KEYS.values()))
        values[name] = value
    policy = Policy()
    if "use_ai" in values:
        policy = replace(policy, use_ai=_bool("UseAI", values["use_ai"]))
    if "verbosity" in values:
        policy = replace(policy, verbosity=_verbosity(values["verbosity"]))
    if "retention_days" in values:
        policy = replace(policy, retention_days=_retention(values["retention_days"]))
    if "triggers" in values:
        policy = replace(policy, triggers=_triggers(values["triggers"]))
    if "do_not_disturb" in values:
        policy = replace(policy, do_not_disturb=_bool("DoNotDisturb", values["do_not_disturb"]))
    if "mute_until" in values:
        policy = replace(policy, mute_until_ms=_mute_until(values["mute_until"]))
    return policy


_DURATION_PART = re.compile(r"(\d+)\s*([dhms])")
_UNIT_MS = {"d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1000}


def parse_duration(text: str) -> int:
    """`1h`, `90m`, `2h30m`, `1d`, `45s` -> milliseconds; a bare number is minutes."""
    spoken = text.strip().lower().replace(" ", "")
    if spoken.isdigit():
        return int(spoken) * 60_000
    parts = _DURATION_PART.findall(spoken)
    if not parts or "".join(number + unit for number, unit in parts) != spoken:
        raise PolicyError(f"{text!r} is not a duration: write it like 1h, 30m, 2h30m or 1d")
    return sum(int(number) * _UNIT_MS[unit] for number, unit in parts)
