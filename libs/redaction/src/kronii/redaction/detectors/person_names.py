# ruff: noqa: RUF001, RUF002  (colons, commas and quotes of other scripts are meant)
"""Names of people, found by what introduces them, in some 30 languages and their scripts.

No named-entity model on PyPI qualified (docs/architecture.md, "Names of people and postal addresses"): the ones
that ship their weights cover one language each and tag company and place names made of family names, and the
multilingual ones load their weights from a hub at run time. A name is therefore reported where a cue makes it one:
- a phrase of prose ("my name is", "je m'appelle", "меня зовут", "我叫", "제 이름은");
- a field label or a key of structured data ("Name:", "氏名：", "Имя:", `"first_name": "Ada"`, `patient=...`);
- a courtesy title before it ("Mr", "Herr", "Mme", "Sra.", "السيد", "श्री") or an honorific after it ("さん", "様",
  "先生", "씨", "님");
- a mail address after it ("Jane Doe <jane@...>", as From:, Author: and Signed-off-by: lines write it);
- the closing formula of a letter on the line before it ("Best regards,\\nJane").
What counts as the name then depends on the script: capitalised words in scripts with capitals, words up to a stop
word in Arabic, Hebrew, Indic and Thai scripts, and a short run of Han, kana or Hangul (led by a common family name
for Chinese and Korean honorifics). The cues and word lists are data: data/person_names.toml, with their sources.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from .._types import FindingType
from ._base import (
    Candidate,
    CandidatePart,
    ScanText,
    line_local_findings,
    literal_alternation,
)
from ._fields import field_labels, key_forms, reversed_labels
from ._name_columns import name_column_cells
from ._name_shapes import (
    HAN_RUN,
    KATAKANA_RUN,
    cjk_name,
    is_branded,
    korean_name,
    reads_as_a_person,
    uncased_name,
)
from ._person_candidates import line_local_parts
from ._person_name_data import raw_lexicon

__all__ = ["PersonNameDetector"]

_CONFIDENCE = 0.8
_CASED_WORD = r"(?:[^\W\d_][^\W\d_]*(?:['’\-][^\W\d_]+)*\.?)"
_CJK = "\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_VALUE_END = re.compile(r"[ \t]*(?:[\"'<,;|&}\t\r\n]|\Z)")
_EMAIL_AFTER = re.compile(r"[ \t]*<[^<>\s@]+@[^<>\s]+>")


# What may stand before a cue (after it comes a space or the name): a line start, a space, a quote, a bracket,
# a separator. A pattern that opens with this class lets `re` skip to the next such character in C.
_BEFORE_CUE = "\\s\"'(>,;{\\-"
_NAME_SCRIPTS = "\u0e00-\u0e7f\uac00-\ud7a3" + _CJK
_AFTER_SEPARATOR = re.compile("[ \\t]*[\"']?[ \\t]*")


@dataclass(frozen=True)
class _Cues:
    """One family of cues as two scans: after a boundary for cues that open with an ASCII character, and anywhere
    for the others (their first characters are rare in mostly-ASCII text, so `re` skips to them in C)."""

    ascii_initial: re.Pattern[str]
    at_start: re.Pattern[str]
    other: re.Pattern[str] | None

    @classmethod
    def of(cls, cues: set[str], tail: str) -> _Cues:
        ascii_initial = literal_alternation(cue for cue in cues if cue[0].isascii())
        others = [cue for cue in cues if not cue[0].isascii()]
        return cls(
            re.compile(f"[{_BEFORE_CUE}](?:{ascii_initial}){tail}"),
            re.compile(f"(?:{ascii_initial}){tail}"),
            re.compile(f"(?:{literal_alternation(others)}){tail}") if others else None,
        )

    def found(self, text: str) -> Iterator[tuple[int, int]]:
        """(start of the cue, where the name after it would start), in no particular order."""
        first = self.at_start.match(text)
        if first is not None:
            yield 0, first.end()
        yield from ((match.start() + 1, match.end()) for match in self.ascii_initial.finditer(text))
        if self.other is not None and not text.isascii():
            for match in self.other.finditer(text):
                start = match.start()
                if start == 0 or not text[start - 1].isalnum() or text[start] >= "\u3000":
                    yield start, match.end()


@dataclass(frozen=True)
class _Lexicon:
    cues: _Cues  # the prose phrases and the titles, in lower case: one scan of the lowered text for both
    prose: frozenset[str]
    roles: frozenset[str]  # "issued to", "signed by": a full name after them, if it reads as a person's
    organisation_words: frozenset[str]  # "inc", "gmbh", "foundation": a run holding one names no person
    titles: frozenset[str]  # as written: "Mr" is a title, "mr" is not
    labels: re.Pattern[str]  # every label and key form, for field_labels
    label_forms: frozenset[str]
    generic_labels: frozenset[str]
    suffixes: re.Pattern[str]
    closings: frozenset[str]
    # A line of a closing formula alone, up to the start of the next line: the ASCII formulas, and all of them.
    closing_lines: tuple[re.Pattern[str], re.Pattern[str]]
    stop: frozenset[str]
    not_names: frozenset[str]
    particles: frozenset[str]
    zh_surnames: frozenset[str]
    ko_surnames: frozenset[str]


def _closing_lines(closings: set[str], *, ascii_only: bool = False) -> re.Pattern[str]:
    """A closing formula alone on its line. "\\n" first, a literal, and no indentation: `re` then jumps from line
    to line in C and tries the formulas at each line start only (an optional indent made it ten times slower)."""
    formulas = literal_alternation(closing for closing in closings if closing.isascii() or not ascii_only)
    return re.compile(f"\\n(?:{formulas})[ \\t]*[,.!\u3001\uff0c\u3002]?[ \\t]*\\r?\\n")


@cache
def _lexicon() -> _Lexicon:
    raw = raw_lexicon()
    languages = [table for table in raw.values() if "labels" in table]
    words = raw["words"]

    def every(field: str) -> set[str]:
        return {cue for table in languages for cue in table.get(field, ())}

    labels = every("labels")
    return _Lexicon(
        cues=_Cues.of(
            every("prose") | every("roles") | {title.lower() for title in every("titles")},
            f"(?:[ \\t]*[:,]?[ \\t]+|(?=[{_NAME_SCRIPTS}]))",
        ),
        prose=frozenset(every("prose")),
        roles=frozenset(every("roles")),
        organisation_words=frozenset(words["organisation_words"]),
        titles=frozenset(every("titles")),
        labels=reversed_labels(labels),
        label_forms=frozenset(key_forms(labels)),
        generic_labels=frozenset(words["generic_labels"]),
        suffixes=re.compile(literal_alternation(every("suffixes"))),
        closings=frozenset(every("closings")),
        # "\n" first, a literal: `re` then jumps from line to line in C.
        closing_lines=(_closing_lines(every("closings"), ascii_only=True), _closing_lines(every("closings"))),
        stop=frozenset(every("stop")),
        not_names=frozenset(words["not_names"]),
        particles=frozenset(words["particles"]),
        zh_surnames=frozenset(raw["surnames"]["zh"]),
        ko_surnames=frozenset(raw["surnames"]["ko"]),
    )


class PersonNameDetector:
    name = "person_names"

    @property
    def candidate_parts(self) -> tuple[CandidatePart, ...]:
        return line_local_parts()

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        lexicon = _lexicon()
        yield from line_local_findings(
            scan, lambda view: _in_order(_line_local(view, lexicon, self.name)), line_local_parts()
        )
        yield from _signatures(scan, lexicon, self.name)
        yield from _table_names(scan, lexicon, self.name)


def _in_order(found: Iterator[Candidate]) -> list[Candidate]:
    """Each span once, in text order (line_local_findings wants the order of the text)."""
    return sorted({(each.start, each.end): each for each in found}.values(), key=lambda each: each.start)


def _line_local(scan: ScanText, lexicon: _Lexicon, detector: str) -> Iterator[Candidate]:
    text = scan.text
    # (where a name would start, whether it must fill its field, how many words it needs at least)
    lower = scan.lower
    roles: list[int] = []
    starts: list[tuple[int, bool, int]] = []
    for cue, start in lexicon.cues.found(lower):
        kind = _cue_kind(text, lower, cue, start, lexicon)
        if kind == "role":
            roles.append(_past_titles(text, start, lexicon))
        elif kind is not None:
            starts.append((_past_titles(text, start, lexicon), False, 1))
    starts += _label_values(scan, lexicon)
    for start, whole_value, min_words in starts:
        span = _name_at(text, start, lexicon, whole_value=whole_value, min_words=min_words)
        if span is not None and not _an_identifier(text[span[0] : span[1]]):
            yield Candidate(FindingType.PERSON_NAME, span[0], span[1], _CONFIDENCE, detector)
    for start in roles:
        span = _name_at(text, start, lexicon, whole_value=False, min_words=2)
        if span is not None and reads_as_a_person(text[span[0] : span[1]], lexicon.organisation_words):
            yield Candidate(FindingType.PERSON_NAME, span[0], span[1], _CONFIDENCE, detector)
    yield from _before_suffixes(text, lexicon, detector)
    yield from _before_mail(text, lexicon, detector)


def _an_identifier(name: str) -> bool:
    """One CamelCase word (`DescribeCodeReview`, `TerminalReporter`): an identifier in code, not a name."""
    return len(name.split()) == 1 and is_branded(name)


def _cue_kind(text: str, lower: str, start: int, end: int, lexicon: _Lexicon) -> str | None:
    """`prose` for a prose phrase in any case, `role` for a role phrase ("issued to"), `title` for a title as
    it is written (`Mr`, `Frau`; not `mr`, `frau`), None for none of them."""
    cue = lower[start:end].rstrip(" \t:,")
    if cue in lexicon.prose:
        return "prose"
    if cue in lexicon.roles:
        return "role"
    # A title as written, and a space after it (Thai joins its titles to the name): `Pana, IL` is a place.
    after = text[start + len(cue) : start + len(cue) + 1]
    is_title = text[start : start + len(cue)] in lexicon.titles and (
        after in " \t" or "\u0e00" <= after <= "\u0e7f"
    )
    return "title" if is_title else None


def _past_titles(text: str, start: int, lexicon: _Lexicon) -> int:
    """Where the name starts after more titles: `Frau Dr. Sabine Krüger`, `Herr Prof. Dr. Klaus Becker`."""
    while True:
        word = _TITLE_WORD.match(text, start)
        if word is None or word.group(1) not in lexicon.titles:
            return start
        start = word.end()


_TITLE_WORD = re.compile(r"([^\W\d_]+\.?)[ \t]+")


def _label_values(scan: ScanText, lexicon: _Lexicon) -> list[tuple[int, bool, int]]:
    """Where the value of each `Label: value`, `key=value` or `"key": "value"` with a person's label starts."""
    lower, values = scan.lower, []
    for label_start, separator_end in field_labels(scan, lexicon.labels):
        if not _opens_field(lower, label_start):
            continue
        label = lower[label_start : separator_end - 1].strip(" \t\"'")
        value = _AFTER_SEPARATOR.match(lower, separator_end)
        start = value.end() if value else separator_end
        if label not in lexicon.generic_labels:
            values.append((start, True, 1))
        elif not _is_quoted(lower, separator_end, start):
            # `Name: Ada Lovelace` in a form; but in code and JSON a bare `name = "Pango Markup"` names a thing.
            values.append((start, True, 2))
    return values


def _is_quoted(text: str, separator_end: int, value_start: int) -> bool:
    return '"' in text[separator_end:value_start] or "'" in text[separator_end:value_start]


def _opens_field(lower: str, label_start: int) -> bool:
    """Whether a label opens its field: at a line start, or after a brace, a comma, a separator (spaces and
    quotes between). `Organization Name:` and `Host name =` are no person's name field."""
    position = label_start
    while position > 0 and lower[position - 1] in " \t\"'":
        position -= 1
    return position == 0 or lower[position - 1] in "\n{[(,;&?>*-"


def _name_at(
    text: str, start: int, lexicon: _Lexicon, *, whole_value: bool, min_words: int
) -> tuple[int, int] | None:
    """The name that starts at `start`, by the rules of its script; None when what is there is no name."""
    if start >= len(text):
        return None
    first = text[start]
    if "\uac00" <= first <= "\ud7a3":
        return korean_name(text, start, lexicon.ko_surnames, need_surname=False)
    if HAN_RUN.match(first) or KATAKANA_RUN.match(text, start):
        return cjk_name(text, start)
    if first.isalpha() and first.lower() == first and first.upper() == first:
        return uncased_name(text, start, lexicon.stop, whole_value=whole_value)
    return _cased_name(text, start, lexicon, whole_value=whole_value, min_words=min_words)


_CASED_WORD_AT = re.compile(f"{_CASED_WORD}")
_GAP = re.compile(r"[ \t]+")


def _cased_name(
    text: str, start: int, lexicon: _Lexicon, *, whole_value: bool, min_words: int
) -> tuple[int, int] | None:
    """Capitalised words (or words in capitals), with particles between them: `Pieter van der Berg`."""
    position, end, words = start, start, 0
    while words < 5:
        word = _CASED_WORD_AT.match(text, position)
        if word is None:
            break
        kind = _word_kind(word.group(), lexicon, first=words == 0)
        if kind is None:
            break
        if kind != "particle":
            words += 1
            end = word.end() if kind == "initial" else word.start() + len(word.group().rstrip("."))
            if kind == "name" and word.group().endswith("."):
                break  # a sentence ends here ("written by Peter Deutsch. Thanks"); an initial's stop does not
        gap = _GAP.match(text, word.end())
        if gap is None:
            break
        position = gap.end()
    if words < min_words:
        return None
    if whole_value and not (_VALUE_END.match(text, end) or _EMAIL_AFTER.match(text, end)):
        return None  # a label's value holds more than a name: "Name: Web Server v2", "To: all staff"
    return start, end


def _word_kind(value: str, lexicon: _Lexicon, *, first: bool) -> str | None:
    """What a word is in a name: `name`, `initial` (the Q. of John Q. Public), `particle` (van, de), or None."""
    bare = value.rstrip(".")
    lowered = bare.lower()
    if lowered in lexicon.particles and not first:
        return "particle"
    if not bare[0].isupper() or lowered in lexicon.not_names:
        return None
    if len(bare) == 1:
        return "initial" if value.endswith(".") and not first else None
    return "name"


def _before_suffixes(text: str, lexicon: _Lexicon, detector: str) -> Iterator[Candidate]:
    """A name right before an honorific: `山田太郎さん`, `王先生`, `김민준 씨`."""
    if text.isascii():
        return
    for match in lexicon.suffixes.finditer(text):
        span = _name_before(text, match.start(), match.group(), lexicon)
        if span is not None:
            yield Candidate(FindingType.PERSON_NAME, span[0], span[1], _CONFIDENCE, detector)


# Words before a Japanese or Korean honorific that name a role, not a person: お客様, 皆様, 神様, 고객님, 선생님.
_HONORIFIC_NOT_NAMES = frozenset(
    [
        "お客",
        "皆",
        "神",
        "王",
        "奥",
        "姫",
        "各位",
        "会員",
        "利用者",
        "管理者",
        "担当者",
        "関係者",
        "고객",
        "선생",
        "사장",
        "부장",
        "과장",
        "팀장",
        "회장",
        "교수",
        "관리자",
        "사용자",
        "손님",
        "여러분",
        "기사",
        "작가",
        "대표",
        "이사",
    ]
)
_ZH_HONORIFICS = frozenset(["先生", "女士", "小姐", "老师", "老師"])


def _name_before(text: str, end: int, suffix: str, lexicon: _Lexicon) -> tuple[int, int] | None:
    name_end = end - 1 if end and text[end - 1] in " \u3000" else end
    if suffix in ("씨", "님"):
        return _korean_name_before(text, name_end, lexicon)
    start = name_end
    while start > 0 and (HAN_RUN.match(text[start - 1]) or KATAKANA_RUN.match(text[start - 1] * 2)):
        start -= 1
    start = max(start, name_end - (8 if KATAKANA_RUN.match(text, max(start, name_end - 2)) else 4))
    name = text[start:name_end]
    if suffix in _ZH_HONORIFICS:  # 王先生: a Chinese family name, alone or with the given name
        return (start, name_end) if name and name[0] in lexicon.zh_surnames else None
    if len(name) < 2 or name in _HONORIFIC_NOT_NAMES:
        return None
    return start, name_end


def _korean_name_before(text: str, name_end: int, lexicon: _Lexicon) -> tuple[int, int] | None:
    """`김민준 씨`: two to four syllables led by a family name, a word of their own."""
    start = name_end
    while start > 0 and _is_hangul(text[start - 1]) and name_end - start < 4:
        start -= 1
    if start > 0 and _is_hangul(text[start - 1]):
        return None  # part of a longer word
    span = korean_name(text, start, lexicon.ko_surnames, need_surname=True)
    if span is None or span[1] != name_end or text[start:name_end] in _HONORIFIC_NOT_NAMES:
        return None
    return span


def _is_hangul(char: str) -> bool:
    return "\uac00" <= char <= "\ud7a3"


def _before_mail(text: str, lexicon: _Lexicon, detector: str) -> Iterator[Candidate]:
    """`Jane Doe <jane@...>`: two to four name words right before a mail address in angle brackets."""
    at = text.find("@")
    while at >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        open_bracket = text.rfind("<", max(line_start, at - 64), at)
        if open_bracket > line_start:
            end = open_bracket
            while end > line_start and text[end - 1] in " \t\"'":
                end -= 1
            span = _trailing_name(text, max(line_start, end - 80), end, lexicon)
            if span is not None:
                yield Candidate(FindingType.PERSON_NAME, span[0], span[1], _CONFIDENCE, detector)
        at = text.find("@", at + 1)


_WORD_STARTS = re.compile(r"(?<![^\s\"'(:,])\S")


def _trailing_name(text: str, start: int, end: int, lexicon: _Lexicon) -> tuple[int, int] | None:
    """The longest run of name words that ends exactly at `end`: `Author: Jane Doe` gives `Jane Doe`."""
    for word in _WORD_STARTS.finditer(text, start, end):
        span = _cased_name(text, word.start(), lexicon, whole_value=False, min_words=2)
        if span is not None and span[1] == end:
            return span
    return None


def _signatures(scan: ScanText, lexicon: _Lexicon, detector: str) -> Iterator[Candidate]:
    """The line after a letter's closing formula, when it holds a name and nothing else."""
    text, lower = scan.text, scan.lower
    closing_lines = lexicon.closing_lines[0 if lower.isascii() else 1]
    found = closing_lines.finditer(lower)
    first = closing_lines.match("\n" + lower[:200])
    for match_end in ([first.end() - 1] if first else []) + [match.end() for match in found]:
        line_end = text.find("\n", match_end)
        value = text[match_end : len(text) if line_end < 0 else line_end]
        indent = len(value) - len(value.lstrip())
        value = value.strip()
        if not value or value.rstrip(",.!").lower() in lexicon.closings:
            continue
        span = _name_at(text, match_end + indent, lexicon, whole_value=True, min_words=1)
        if span is not None and span[1] == match_end + indent + len(value):
            yield Candidate(FindingType.PERSON_NAME, span[0], span[1], _CONFIDENCE, detector)


def _table_names(scan: ScanText, lexicon: _Lexicon, detector: str) -> Iterator[Candidate]:
    """Names in a table's column headed by a person's label (CSV, TSV, psql, Markdown)."""

    def is_name(text: str, start: int, end: int, generic: bool) -> bool:
        cell = text[start:end]
        span = _name_at(cell, 0, lexicon, whole_value=True, min_words=2 if generic else 1)
        return span is not None and span[1] == len(cell)

    for start, end in name_column_cells(
        scan.text, scan.lower, lexicon.label_forms, lexicon.generic_labels, is_name
    ):
        yield Candidate(FindingType.PERSON_NAME, start, end, _CONFIDENCE, detector)
