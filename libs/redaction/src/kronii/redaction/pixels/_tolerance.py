"""Making up for what OCR gets wrong, so a misread value is still masked.

Tesseract inserts, drops and confuses characters and splits long tokens in two; a text detector that wants
exact lengths then misses the value, or masks half of it. Three remedies, each measured by
bench/redaction_image.py:

- `normalize_line`: in words that are mostly digits, letters that OCR confuses with digits are read as
  those digits (O->0, l/I/|->1, S->5, B->8), and a single unknown glyph as a digit: one character for
  one, so word offsets do not move;
- `OCR_PATTERNS`: patterns given to the engine as hints, lenient on length and on confused characters:
  a private key's armour, vendor prefixes followed by a token-shaped run, the shape of an AWS key id,
  card numbers whose check digit a misread broke, and any long word mixing letters and digits that reads
  like a token rather than a word;
- `widen`: a finding's mask grows over neighbouring words on its line that look like pieces of the same
  token (digits, mixed case, capitals, glyphs OCR writes when unsure), e.g. the second half of a split
  GitHub token, or an address split after its dot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .._lines import LineSpan
from .._policy import CustomPattern, PolicyHints
from .._types import FindingType
from ._layout import OcrLine

__all__ = ["OCR_PATTERNS", "normalize_line", "widen", "with_ocr_patterns"]

_DIGIT_LOOKALIKES = str.maketrans(
    {
        "O": "0",
        "o": "0",
        "D": "0",
        "l": "1",
        "I": "1",
        "|": "1",
        "!": "1",
        "S": "5",
        "s": "5",
        "B": "8",
        "Z": "2",
    }
)
_WORD = re.compile(r"\S+")
_STRUCTURAL = frozenset("+-.()/:,#")  # what separates groups of digits in numbers, dates and times
_RUN_CHARS = r"[A-Za-z0-9_\-+/=|\[\]!]"

_LOOKALIKE = r"[A-Za-z0-9|\[\]!]"
OCR_PATTERNS: tuple[CustomPattern, ...] = (
    # A private key's armour, whatever OCR made of its dashes: the key's lines below it are garbled past
    # recognition, so the header alone marks the frame (PRIVATE_KEY is red: the frame is withheld).
    CustomPattern(
        FindingType.PRIVATE_KEY, r"BEGIN[ _]+(?:[A-Z0-9]+[ _]+){0,3}PRIVATE[ _]+KEY", confidence=0.9
    ),
    # Vendor prefixes followed by a few token characters: `widen` then takes in the rest of a split token.
    CustomPattern(
        FindingType.AWS_ACCESS_KEY_ID,
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9|\[\]!]{2,}",
        confidence=0.8,
    ),
    # The shape of an AWS key id (20 capitals and digits from an A) when OCR misread its prefix.
    CustomPattern(
        FindingType.AWS_ACCESS_KEY_ID,
        r"(?<![A-Za-z0-9])(?=[A-Z]*[0-9])A[A-Z0-9]{18,20}(?![A-Za-z0-9])",
        confidence=0.6,
    ),
    CustomPattern(
        FindingType.GITHUB_TOKEN,
        r"(?<![A-Za-z0-9])(?:gh[pousr]|github_pat)(?:[_\-] ?| )" + _LOOKALIKE + "{4,}",
        confidence=0.8,
    ),
    CustomPattern(
        FindingType.SLACK_TOKEN, r"(?<![A-Za-z0-9])xox[abposr]-" + _RUN_CHARS + "{6,}", confidence=0.8
    ),
    CustomPattern(
        FindingType.SECRET,
        r"(?<![A-Za-z0-9])(?:sk|rk|pk)[_\-](?:live|test|proj|ant)[_\-]" + _RUN_CHARS + "{6,}",
        confidence=0.8,
    ),
    # A card number whose check digit fails because OCR misread a digit (DejaVu Mono's dotted 0 reads as 6).
    CustomPattern(
        FindingType.PAYMENT_CARD,
        r"(?<![0-9])(?:[0-9]{4}[ \-]){3}[0-9]{1,7}(?![0-9])|(?<![0-9])[0-9]{4}[ \-][0-9]{6}[ \-][0-9]{5}(?![0-9])"
        r"|(?<![0-9])[2-6][0-9]{14,15}(?![0-9])",
        confidence=0.6,
    ),
    # An e-mail address whose dot OCR read as a comma, or with a space around its @ or dot (small bitmap
    # fonts); `widen` takes in a local part split in two.
    CustomPattern(
        FindingType.EMAIL,
        r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{1,64} ?[@®©] ?[A-Za-z0-9\-]{1,63}"
        r"(?: ?[.,] ?[A-Za-z0-9\-]{1,63})* ?[.,] ?[A-Za-z]{2,12}(?![A-Za-z])",
        confidence=0.7,
    ),
    # A secret assigned to a name that says so (AWS_SECRET_ACCESS_KEY=, password:, api_key = ...): OCR
    # garbles such values past any token shape, so everything after the sign on that line is masked.
    CustomPattern(
        FindingType.SECRET,
        r"(?im)(?:secret|passw(?:or)?d|passwd|pwd|token|api[_\- ]?key|access[_\- ]?key|private[_\- ]?key"
        r"|credentials?|auth[_\- ]?key)[A-Za-z0-9_\-]*[\"']? ?[:=] ?(?P<value>[^\s\[].*?) *$",
        confidence=0.7,
    ),
    # A Mailgun key whose 32 characters OCR split in two (`key-3ax6xnjp 29jd6f...`): `widen` takes the rest.
    CustomPattern(
        FindingType.MAILGUN_KEY, r"(?<![A-Za-z0-9])key-(?=[a-z0-9]*[0-9])[a-z0-9|]{6,}", confidence=0.8
    ),
    # An Azure SAS signature that OCR split or garbled: everything after `sig=` up to the next space, and
    # `widen` takes the pieces after it.
    CustomPattern(FindingType.AZURE_KEY, r"(?i)[?&]sig ?= ?(?P<value>[^\s&]{4,})", confidence=0.8),
    # An IPv6 address (or a MAC) whose colons OCR spaced out or misread (`85a3: : 8a2e`, `85a3:-8a2e`):
    # four groups of hex digits or more; a time of day has three at most.
    CustomPattern(
        FindingType.IP_ADDRESS,
        r"(?<![0-9A-Za-z:])[0-9A-Fa-f]{1,4}(?: ?[:;](?: ?[:\-])? ?[0-9A-Fa-f]{1,4}){3,7}(?![0-9A-Za-z:])",
        confidence=0.6,
    ),
    # A long word with letters and digits, in two cases or mostly capitals: a token, not a word.
    CustomPattern(
        FindingType.HIGH_ENTROPY,
        r"(?<!\S)(?=\S*[0-9]\S*[0-9])(?=\S*[A-Z])(?:(?=\S*[a-z])|(?=(?:\S*[A-Z]){8}))"
        + _RUN_CHARS
        + r"{16,}(?!\S)",
        confidence=0.6,
    ),
)


def with_ocr_patterns(hints: PolicyHints | None) -> PolicyHints:
    """The caller's hints, plus the OCR-tolerant patterns."""
    if hints is None:
        return PolicyHints(patterns=OCR_PATTERNS)
    return PolicyHints(
        patterns=(*hints.patterns, *OCR_PATTERNS),
        deny_terms=hints.deny_terms,
        spans=hints.spans,
        red_reason=hints.red_reason,
    )


def _digit_heavy(word: str) -> bool:
    digits = sum(char.isdigit() for char in word)
    return len(word) >= 2 and digits * 2 >= len(word)


def _as_digits(word: str) -> str:
    word = word.translate(_DIGIT_LOOKALIKES)
    odd = [n for n, char in enumerate(word) if not char.isdigit() and char not in _STRUCTURAL]
    if len(odd) == 1 and len(word) >= 3:  # one glyph OCR could not place, in a group of digits: a digit
        word = word[: odd[0]] + "0" + word[odd[0] + 1 :]
    return word


def normalize_line(text: str) -> str:
    """The line with digit look-alikes read as digits inside mostly-digit words (and a single unknown glyph
    among digits read as a digit); one character for one, so offsets do not move."""
    return _WORD.sub(lambda m: _as_digits(m.group()) if _digit_heavy(m.group()) else m.group(), text)


_MAX_PIECES = 3  # words taken in on each side of a finding, at most
_JOIN_END = tuple(".@_-+")
_JOIN_START = tuple(".@_-")


def _token_like(word: str) -> bool:
    """Digits, glyphs OCR writes when unsure, mixed case past the first letter, or all capitals."""
    if any(char.isdigit() for char in word) or any(char in "|[]{}\\_!" for char in word):
        return True
    capitals = sum(char.isupper() for char in word[1:])
    return capitals > 0 and (any(char.islower() for char in word) or capitals + 1 == len(word))


def _joined(left: str, right: str) -> bool:
    """Whether two neighbouring words look like one token that OCR split: both are token-like, or they
    meet at a character that joins the parts of an address or a token (`maria. keller@...`)."""
    return (
        left.endswith(_JOIN_END)
        or right.startswith(_JOIN_START)
        or (_token_like(left) and _token_like(right))
    )


def widen(spans: Iterable[LineSpan], lines: Sequence[OcrLine]) -> list[LineSpan]:
    """Each span grown over the neighbouring words on its line that look like pieces of the same token."""
    grown = []
    for span in spans:
        line = lines[span.line]
        covered = line.words_within(span.start, span.end)
        if not covered:
            grown.append(span)
            continue
        first, last = covered[0], covered[-1]
        words = line.words
        for _ in range(_MAX_PIECES):
            if first == 0 or not _joined(words[first - 1], words[first]):
                break
            first -= 1
        for _ in range(_MAX_PIECES):
            if last + 1 == len(words) or not _joined(words[last], words[last + 1]):
                break
            last += 1
        start = min(span.start, line.spans[first][0])
        end = max(span.end, line.spans[last][1])
        grown.append(LineSpan(span.line, start, end, span.finding))
    return grown
