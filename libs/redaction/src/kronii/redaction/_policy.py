"""The user's redaction policy (a TOML file) and the per-call hints that plugins add to it.

```toml
red_share_threshold = 0.5        # more than this share of characters masked -> red
red_share_min_chars = 200        # ... for texts at least this long (a short title is often mostly a name)
max_masked_area = 0.35           # images: more than this share of the frame masked -> reject (capture)
phone_regions = ["US", "GB"]     # how national-format phone numbers are read
red_types = ["PRIVATE_KEY", "PASSWORD"]
disabled_detectors = []          # detector names, e.g. "ip_address"
min_confidence = 0.0

[allow]                          # never masked
values = ["ci@example.com"]
patterns = ['10\\.0\\.0\\.\\d+']   # matched against a whole finding

[deny]                           # always masked, case-insensitively, wherever they appear
terms = ["Project Nightingale"]

[apps]                           # content from these apps is always red (globs on the app id, any case)
red = ["*keepassxc*"]

[[custom_patterns]]
type = "TICKET_ID"
pattern = 'ACME-\\d{6}'
red = false
```
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from ._types import FindingType, is_valid_type_name

__all__ = ["CustomPattern", "HintSpan", "PolicyError", "PolicyHints", "RedactionPolicy"]

DEFAULT_RED_APPS: tuple[str, ...] = (
    "*keepass*",
    "*1password*",
    "*bitwarden*",
    "*lastpass*",
    "*enpass*",
    "*dashlane*",
    "*proton*pass*",
    "seahorse",
    "*gnome-keyring*",
    "*kwalletmanager*",
    "*passwordsafe*",
    "*gopass*",
)


class PolicyError(ValueError):
    """A policy file or hint that cannot be used. The message names the setting, never a value."""


@dataclass(frozen=True, slots=True)
class CustomPattern:
    """A regex whose matches are masked as `type`; `red` makes any match turn the level red.

    When the regex has a group named `value`, only that group is masked (the key stays readable)."""

    type: str
    pattern: str
    red: bool = False
    confidence: float = 0.9

    def __post_init__(self) -> None:
        if not is_valid_type_name(self.type):
            raise PolicyError(f"custom pattern type {self.type!r} must be upper snake case")
        try:
            re.compile(self.pattern)
        except re.error as error:
            raise PolicyError(f"custom pattern {self.type}: invalid regex ({error.msg})") from None

    @property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern)  # the re module caches compiled patterns


@dataclass(frozen=True, slots=True)
class HintSpan:
    """A plugin's own knowledge that text[start:end] is sensitive (e.g. a password field's contents)."""

    start: int
    end: int
    type: str = FindingType.SECRET
    red: bool = False

    def __post_init__(self) -> None:
        if not is_valid_type_name(self.type):
            raise PolicyError(f"hint span type {self.type!r} must be upper snake case")
        if self.start > self.end:
            raise PolicyError("hint span must not end before it starts")


@dataclass(frozen=True, slots=True)
class PolicyHints:
    """What a plugin adds for one call. Hints can only add masking or raise the level, never lower it."""

    patterns: tuple[CustomPattern, ...] = ()
    deny_terms: tuple[str, ...] = ()
    spans: tuple[HintSpan, ...] = ()
    red_reason: str | None = None  # set to force red, e.g. "banking app in focus"


@dataclass(frozen=True, slots=True)
class RedactionPolicy:
    allow_values: frozenset[str] = frozenset()
    allow_patterns: tuple[str, ...] = ()
    deny_terms: tuple[str, ...] = ()
    custom_patterns: tuple[CustomPattern, ...] = ()
    red_apps: tuple[str, ...] = DEFAULT_RED_APPS
    red_types: frozenset[str] = frozenset({FindingType.PRIVATE_KEY, FindingType.PASSWORD})
    red_share_threshold: float = 0.5
    red_share_min_chars: int = 200
    max_masked_area: float = 0.35
    phone_regions: tuple[str, ...] = ("US", "GB")
    disabled_detectors: frozenset[str] = frozenset()
    min_confidence: float = 0.0
    _allow_regexes: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("red_share_threshold", "max_masked_area", "min_confidence"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise PolicyError(f"{name} must be between 0 and 1")
        if self.red_share_min_chars < 0:
            raise PolicyError("red_share_min_chars must not be negative")
        try:
            regexes = tuple(re.compile(pattern) for pattern in self.allow_patterns)
        except re.error as error:
            raise PolicyError(f"allow pattern: invalid regex ({error.msg})") from None
        object.__setattr__(self, "_allow_regexes", regexes)

    @classmethod
    def load(cls, path: str | Path) -> RedactionPolicy:
        with Path(path).open("rb") as handle:
            try:
                data = tomllib.load(handle)
            except tomllib.TOMLDecodeError as error:
                raise PolicyError(f"policy file is not valid TOML: {error}") from None
        return cls.from_mapping(data)

    @staticmethod
    def sets(path: str | Path, key: str) -> bool:
        """Whether the policy file at `path` gives `key` itself (rather than leaving the default)."""
        with Path(path).open("rb") as handle:
            return key in tomllib.load(handle)

    @classmethod
    def from_mapping(cls, data: Mapping[str, object]) -> RedactionPolicy:
        reader = _Reader(data)
        allow = reader.table("allow", {"values", "patterns"})
        deny = reader.table("deny", {"terms"})
        apps = reader.table("apps", {"red"})
        policy = cls(
            allow_values=frozenset(allow.strings("values")),
            allow_patterns=allow.strings("patterns"),
            deny_terms=deny.strings("terms"),
            custom_patterns=reader.custom_patterns(),
            red_apps=apps.strings("red", DEFAULT_RED_APPS),
            red_types=frozenset(reader.strings("red_types", (FindingType.PRIVATE_KEY, FindingType.PASSWORD))),
            red_share_threshold=reader.number("red_share_threshold", 0.5),
            red_share_min_chars=int(reader.number("red_share_min_chars", 200)),
            max_masked_area=reader.number("max_masked_area", 0.35),
            phone_regions=reader.strings("phone_regions", ("US", "GB")),
            disabled_detectors=frozenset(reader.strings("disabled_detectors")),
            min_confidence=reader.number("min_confidence", 0.0),
        )
        reader.reject_unknown()
        return policy

    def is_allowed(self, value: str) -> bool:
        return value in self.allow_values or any(regex.fullmatch(value) for regex in self._allow_regexes)

    def is_red_app(self, app: str | None) -> bool:
        if not app:
            return False
        lowered = app.lower()
        return any(fnmatchcase(lowered, pattern.lower()) for pattern in self.red_apps)


class _Reader:
    """Typed access to a TOML mapping, with errors that name the setting."""

    def __init__(self, data: Mapping[str, object], where: str = "") -> None:
        self._data = data
        self._where = where
        self._used: set[str] = set()

    def table(self, key: str, allowed: set[str]) -> _Reader:
        value = self._take(key, {})
        if not isinstance(value, Mapping):
            raise PolicyError(f"{self._where}{key} must be a table")
        unknown = set(value) - allowed
        if unknown:
            raise PolicyError(f"unknown setting(s) in [{key}]: {', '.join(sorted(unknown))}")
        return _Reader(value, f"{key}.")

    def strings(self, key: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        value = self._take(key, default)
        if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
            raise PolicyError(f"{self._where}{key} must be a list of strings")
        return tuple(value)

    def number(self, key: str, default: float) -> float:
        value = self._take(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise PolicyError(f"{self._where}{key} must be a number")
        return float(value)

    def custom_patterns(self) -> tuple[CustomPattern, ...]:
        entries = self._take("custom_patterns", [])
        if not isinstance(entries, list):
            raise PolicyError("custom_patterns must be an array of tables")
        patterns = []
        for entry in entries:
            if not isinstance(entry, Mapping) or not {"type", "pattern"} <= set(entry):
                raise PolicyError("each custom pattern needs a type and a pattern")
            unknown = set(entry) - {"type", "pattern", "red", "confidence"}
            if unknown:
                raise PolicyError(f"unknown setting(s) in custom_patterns: {', '.join(sorted(unknown))}")
            type_name, pattern, red = entry["type"], entry["pattern"], entry.get("red", False)
            confidence = entry.get("confidence", 0.9)
            if not isinstance(type_name, str) or not isinstance(pattern, str) or not isinstance(red, bool):
                raise PolicyError("custom pattern type and pattern must be strings, red a boolean")
            if not isinstance(confidence, int | float):
                raise PolicyError("custom pattern confidence must be a number")
            patterns.append(CustomPattern(type_name, pattern, red, float(confidence)))
        return tuple(patterns)

    def reject_unknown(self) -> None:
        unknown = set(self._data) - self._used
        if unknown:
            raise PolicyError(f"unknown policy setting(s): {', '.join(sorted(unknown))}")

    def _take(self, key: str, default: object) -> object:
        self._used.add(key)
        return self._data.get(key, default)
