# ruff: noqa: RUF001  (the punctuation of other scripts is meant)
"""The shapes a person's name takes in each kind of script (person_names.py finds where one starts): words up to a
stop word in scripts without capitals, two to four Han characters or katakana, a Hangul name with its particle cut
off; and whether capitalised words after a role phrase read as a person's name rather than an organisation's."""

from __future__ import annotations

import re
from collections.abc import Set

__all__ = [
    "HAN_RUN",
    "KATAKANA_RUN",
    "cjk_name",
    "is_branded",
    "korean_name",
    "reads_as_a_person",
    "uncased_name",
]

HAN_RUN = re.compile(r"[\u3005\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{1,4}")
KATAKANA_RUN = re.compile(r"[\u30a1-\u30fa\u30fc]{2,8}(?:[・\u30fb ][\u30a1-\u30fa\u30fc]{2,8})?")
_HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]{2,6}")
_KO_ENDINGS = (
    "입니다",
    "이에요",
    "예요",
    "이라고",
    "라고",
    "이고",
    "씨",
    "님",
    "은",
    "는",
    "이",
    "가",
    "을",
    "를",
    "의",
    "에게",
)
_UNCASED_WORD = re.compile(r"[^\s\d_.,;:!?()\[\]{}<>\"'،؛。、，：；！？「」।॥]+")
_GAP = re.compile(r"[ \t]+")


# A capital inside a person's name comes after these (McDonald, MacArthur, O'Brien, DiCaprio, LeBlanc,
# VanDyke) or after a hyphen or an apostrophe; inside any other word it marks a brand (GitHub, OpenAI).
_INNER_CAPITAL_PREFIXES = (
    "Mc",
    "Mac",
    "O'",
    "O’",
    "D'",
    "D’",
    "Di",
    "De",
    "Da",
    "La",
    "Le",
    "Van",
    "Von",
    "Fitz",
)


def reads_as_a_person(name: str, organisation_words: Set[str]) -> bool:
    """Whether capitalised words after a role phrase are a person's full name rather than an organisation's
    or a product's: no organisation word (Inc, GmbH, Foundation, Team), no brand capital inside a word,
    no contraction (Let's), no acronym leading title-case words (IBM Research; JEAN DUPONT is a name)."""
    words = name.split()
    if any(word.rstrip(".,").lower() in organisation_words for word in words):
        return False
    for word in words:
        if is_branded(word) or re.search(r"['’][sS]$", word):
            return False
    capitals = [word.isupper() and len(word) > 1 for word in words]
    return not (capitals[0] and not all(capitals))


def is_branded(word: str) -> bool:
    """A capital inside the word that no name puts there: `GitHub`, `DescribeCodeReview` (not McDonald, O'Brien,
    Jean-Pierre, LeBlanc, or a word in capitals)."""
    for part in re.split(r"[-'’]", word):
        if len(part) < 2 or part.isupper() or not any(c.isupper() for c in part[1:]):
            continue
        prefix = next((p for p in _INNER_CAPITAL_PREFIXES if part.startswith(p)), "")
        # the one capital a name has inside comes right after its prefix: Mc|Donald, Di|Caprio, not De|scribeCode
        rest = part[len(prefix) :]
        if not prefix or not rest[:1].isupper() or any(c.isupper() for c in rest[1:]):
            return True
    return False


def uncased_name(text: str, start: int, stop: Set[str], *, whole_value: bool) -> tuple[int, int] | None:
    """Words of a script without capitals (Arabic, Hebrew, Indic, Thai), up to a stop word or punctuation."""
    limit = 2 if "\u0e00" <= text[start] <= "\u0e7f" else 3
    position, end, words = start, start, 0
    while words < (4 if whole_value else limit):
        word = _UNCASED_WORD.match(text, position)
        if word is None or word.group().lower() in stop:
            break
        words, end = words + 1, word.end()
        gap = _GAP.match(text, end)
        if gap is None:
            break
        position = gap.end()
    return (start, end) if words else None


def cjk_name(text: str, start: int) -> tuple[int, int] | None:
    """Two to four Han characters (a space may part family and given name), or katakana with a middle dot."""
    katakana = KATAKANA_RUN.match(text, start)
    if katakana is not None:
        return start, katakana.end()
    han = HAN_RUN.match(text, start)
    if han is None:
        return None
    end = han.end()
    if end - start <= 2 and text.startswith((" ", "\u3000"), end):
        given = HAN_RUN.match(text, end + 1)
        if given is not None:
            end = given.end()
    return (start, end) if end - start >= 2 else None


def korean_name(text: str, start: int, surnames: Set[str], *, need_surname: bool) -> tuple[int, int] | None:
    run = _HANGUL_RUN.match(text, start)
    if run is None:
        return None
    name = run.group()
    for ending in _KO_ENDINGS:
        if name.endswith(ending) and len(name) - len(ending) >= 2:
            name = name[: -len(ending)]
            break
    if not 2 <= len(name) <= 4 or (need_surname and name[0] not in surnames):
        return None
    return start, start + len(name)
