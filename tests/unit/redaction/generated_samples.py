"""The labelled sample of the generated corpus (generated_corpus.py): a short document and its value spans."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Label:
    start: int
    end: int
    family: str  # NATIONAL_ID, TAX_ID, BANK_ACCOUNT, DEVICE_ID, PHONE, PASSWORD, SECRET, ..., HARMLESS
    kind: str  # what it is, without the value: "stdnum:dk.cpr formatted valid", "prose:de password", ...
    find: bool = True  # False: must be left alone (a harmless look-alike, an invalid checked id)


@dataclass(frozen=True)
class Sample:
    group: str
    text: str
    labels: tuple[Label, ...]
    suffix: str = ".txt"  # the file name's extension a file scanner (detect-secrets) is given
