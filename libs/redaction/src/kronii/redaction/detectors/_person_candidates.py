"""Where the person-name detector's line-local step could find a name: its candidate part for the compiled scan
(see `CandidatePart` in `_base.py`), built from the same lexicon (data/person_names.toml)."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources

from ._base import CandidatePart, hyperscan_literal
from ._fields import key_forms

__all__ = ["line_local_parts"]


@cache
def line_local_parts() -> tuple[CandidatePart, CandidatePart]:
    """What `person_names._line_local` starts from: a cue with the space, separator or name letter after it, an
    honorific, a "<" with an "@" after it; and a label (cues and labels lower-case, in the lower-case view; the
    honorifics as written, as `_before_suffixes` reads them). Two parts, two databases: hyperscan compiled the
    cues and labels together four times as long as apart."""
    raw = tomllib.loads(
        resources.files("kronii.redaction").joinpath("data", "person_names.toml").read_text("utf-8")
    )
    languages = [table for table in raw.values() if "labels" in table]

    def every(field: str) -> set[str]:
        return {cue for table in languages for cue in table.get(field, ())}

    def alternation(words: set[str]) -> str:
        return "|".join(hyperscan_literal(word) for word in sorted(words))

    cues = every("prose") | every("roles") | {title.lower() for title in every("titles")}
    cue_part = CandidatePart(
        "person_names.cues",
        # An honorific; a "<" before an "@" (`_before_mail` wants it within 64 characters: this reads further).
        (f"(?:{alternation(every('suffixes'))})", "<[^\n]*@"),
        # Byte-wise: any non-ASCII character (a name's script) opens with a byte above 0x7f.
        (f"(?:{alternation(cues)})[ \t:,\\x80-\\xff]",),
    )
    # The labels alone: with the separator after them, hyperscan compiled this part ten times as long (a fifth of
    # a second) for a tenth of this detector's time.
    label_part = CandidatePart(
        "person_names.labels",
        (),
        tuple(hyperscan_literal(label) for label in sorted(key_forms(every("labels")))),
    )
    return cue_part, label_part
