"""The person's timezone: the console's setting (an IANA name), else TZ, else the system's zone
(/etc/localtime), else UTC."""

from __future__ import annotations

import os
from datetime import UTC, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["person_timezone"]

_LOCALTIME = Path("/etc/localtime")


def _named(name: str) -> tzinfo | None:
    try:
        return ZoneInfo(name.removeprefix(":"))
    except (ZoneInfoNotFoundError, ValueError):
        return None


def person_timezone(setting: str) -> tzinfo:
    """Raises ValueError (a sentence) when the setting names no zone; never fails for the system's."""
    if setting:
        zone = _named(setting)
        if zone is None:
            raise ValueError(
                f"KRONII_CONSOLE_TIMEZONE {setting!r} is not a timezone name (e.g. Europe/Paris)"
            )
        return zone
    from_env = _named(os.environ.get("TZ", "")) if os.environ.get("TZ") else None
    if from_env is not None:
        return from_env
    try:
        target = str(_LOCALTIME.resolve())
        if "/zoneinfo/" in target and (zone := _named(target.split("/zoneinfo/", 1)[1])) is not None:
            return zone
        with _LOCALTIME.open("rb") as handle:
            return ZoneInfo.from_file(handle, key="localtime")
    except (OSError, ValueError):
        return UTC
