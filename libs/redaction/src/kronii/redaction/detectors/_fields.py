"""Fields written `Label: value`, `key=value` or `"key": "value"`, found from their separators leftwards.

A list of labels tried at every position of a text costs a trie walk per character. Read backwards, every label
sits right after its separator, and a pattern that opens with the separator lets `re` skip from one ":" or "="
to the next in C: the reversed labels are tried there only. The lowered text reversed is made once per text and
shared by the detectors that read fields (person names, postal addresses).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ._base import ScanText, literal_alternation

__all__ = ["field_labels", "key_forms", "reversed_labels"]


def key_forms(labels: Iterable[str]) -> set[str]:
    """Each label as a form writes it and as a key does: `first name`, `first_name`, `first-name`, `firstname`."""
    forms = set(labels)
    for label in list(forms):
        if " " in label:
            forms.update(label.replace(" ", joiner) for joiner in ("_", "-", ""))
    return forms


def reversed_labels(labels: Iterable[str]) -> re.Pattern[str]:
    """A pattern for `field_labels`: a separator, then (leftwards) a quote or spaces and one of `labels` in any of
    its `key_forms`."""
    alternation = literal_alternation(label[::-1] for label in key_forms(labels))
    return re.compile(f"[:=\uff1a][ \\t]*[\"']?(?:{alternation})[\"']?")


def _reverse(text: str) -> str:
    return text[::-1]


def field_labels(scan: ScanText, labels: re.Pattern[str]) -> Iterator[tuple[int, int]]:
    """(where the label starts, where its separator ends) for each label of `labels` in the text, in any case."""
    backwards = scan.memo(_reverse, scan.lower)
    length = len(backwards)
    for match in labels.finditer(backwards):
        yield length - match.end(), length - match.start()
