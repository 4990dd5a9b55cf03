"""The person-name lexicon (data/person_names.toml), read once: the name detector's cues, labels and tables,
and the labels before a Han name, which the address detector reads too."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["han_name_labels", "raw_lexicon"]


@cache
def raw_lexicon() -> dict[str, Any]:
    return tomllib.loads(
        resources.files("kronii.redaction").joinpath("data", "person_names.toml").read_text("utf-8")
    )


@cache
def han_name_labels() -> tuple[str, ...]:
    """The labels put before a person's name in the languages written in Han characters (Chinese,
    Japanese), longest first: after one of them, two to four Han characters are a name, with no space
    between family and given name (the address detector reads a label, a name, then the address so)."""
    raw = raw_lexicon()
    labels = {label for code in ("zh", "ja") for label in raw[code]["labels"]}
    return tuple(sorted(labels, key=len, reverse=True))
