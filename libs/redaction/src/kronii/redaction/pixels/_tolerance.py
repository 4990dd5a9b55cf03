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
# Glyphs OCR writes for a letter it misreads in a token: a serif `f` or `t` as a pound sign, `e` or `c` as a
# euro or cent sign, `S` or `8` as a section sign.
_GLYPHS = "£€¢§"
_RUN_CHARS = r"[A-Za-z0-9_\-+/=|\[\]!" + _GLYPHS + "]"

_LOOKALIKE = r"[A-Za-z0-9|\[\]!" + _GLYPHS + "]"
# One group of an IPv6 address as OCR may read it: hex digits with a look-alike letter (`1` read as `l` or
# `i`, `5` as `S`), or two groups whose colon it dropped.
_V6_GROUP = r"[0-9A-Za-z]{1,8}"
_V6_COLON = r" ?[:;](?: ?[:;\-]){0,2} ?"
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
    # An e-mail address whose last dot OCR read as a space (`lars.smith@acme io`): only before a common
    # top-level domain, so the word after an address with its dot is not taken for one.
    CustomPattern(
        FindingType.EMAIL,
        r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{1,64} ?[@®©] ?[A-Za-z0-9\-]{1,63}"
        r" (?:com|org|net|io|me|de|uk|fr|es|it|nl|eu|co|us|dev|app|info)(?![A-Za-z])",
        confidence=0.6,
    ),
    # A secret assigned to a name that says so (AWS_SECRET_ACCESS_KEY=, password:, api_key = ...): OCR
    # garbles such values past any token shape, so everything after the sign on that line is masked.
    CustomPattern(
        FindingType.SECRET,
        r"(?im)(?:secret|passw(?:or)?d|passwd|pwd|token|api[_\- ]?key|access[_\- ]?key|private[_\- ]?key"
        r"|credentials?|auth[_\- ]?key)[A-Za-z0-9_\-]*[\"']? ?[:=] ?(?P<value>[^\s\[].*?) *$",
        confidence=0.7,
    ),
    # A Mailgun key whose 32 characters OCR split (`key-3ax6xnjp 29jd6f...`, even `key-1 0c89...`) or
    # misread (a serif `f` as `£`, DejaVu Mono's dotted `0` as `@`): six digits among its first characters;
    # `widen` takes the rest.
    CustomPattern(
        FindingType.MAILGUN_KEY,
        r"(?<![A-Za-z0-9])key-(?=(?:[A-Za-z|@ " + _GLYPHS + r"]{0,9}[0-9]){6})[A-Za-z0-9|@" + _GLYPHS + r"]+",
        confidence=0.8,
    ),
    # An Azure SAS signature after a `sig=` that OCR split or garbled (`s 1g=`, `s.ig=`, `&` read as `6`),
    # even when it read only a glyph or two of the value before a space: `widen` takes the pieces after it.
    CustomPattern(
        FindingType.AZURE_KEY,
        r"(?i)(?<![A-Za-z])s ?[.,]? ?[i1l|!] ?g ?= ?(?P<value>[^\s&]+)",
        confidence=0.8,
    ),
    # An IPv6 address (or a MAC) whose colons OCR spaced out, misread or dropped (`85a3: : 8a2e`,
    # `85a3:-8a2e`, `26bf81f9`), or a group of which it misread (`3cal`, `bidd`): four groups or more, the
    # first of hex digits, with four digits at least; a time of day has three groups at most.
    CustomPattern(
        FindingType.IP_ADDRESS,
        r"(?<![0-9A-Za-z:])(?=[0-9A-Fa-f]{1,4}"
        + _V6_COLON
        + r")(?=(?:[A-Za-z:; \-]{0,12}[0-9]){4})"
        + _V6_GROUP
        + "(?:"
        + _V6_COLON
        + _V6_GROUP
        + r"){3,7}(?![0-9A-Za-z:])",
        confidence=0.6,
    ),
    # An IBAN whose check digits OCR read as letters or glyphs (`DE55` as `DESS`, `DE10` as `DELO`, `DE67` in
    # a 6x10 bitmap font as `DEG?`, a stray `)` after them): the engine
    # checks them, so it finds the groups after them as a card number at best, and the start stays readable.
    CustomPattern(
        FindingType.IBAN,
        r"(?<![A-Za-z0-9])(?=(?:[A-Z ?)\]]{0,5}[0-9]){8})[A-Z]{2}[0-9OoDIlLSsBZGb?|\])]{1,3}(?: ?[A-Z0-9]{4}){3,7}"
        r"(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])",
        confidence=0.6,
    ),
    # An ES DNI or NIE after its label whose check letter OCR read as a glyph or a digit (`J` as `)`, `]`,
    # `3`): the engine checks the letter, so without it the number is not found.
    CustomPattern(
        FindingType.ES_DNI,
        r"(?i)(?<![A-Za-z])(?:DNI|NIE|NIF)(?![A-Za-z])[ :.#º°-]*"
        r"(?P<value>(?:[0-9]{8}|[XYZ][0-9]{7})(?: ?[^\s])?)(?!\S)",
        confidence=0.7,
    ),
    # A line of a machine readable zone (ICAO 9303) that OCR split or whose fillers it misread (`SOF lA<<<`),
    # so the passport detector, which wants 30, 36 or 44 exact characters with check digits, misses it:
    # capitals, digits and `<` with a `<<` among them, 20 characters or more, and the pieces with a `<`
    # OCR split from it.
    CustomPattern(
        FindingType.MRZ,
        r"(?<![A-Za-z0-9<])(?=[A-Z0-9<]{0,40}<<)[A-Z0-9][A-Z0-9<]{19,}(?: ?[A-Za-z0-9]{0,3}<[A-Za-z0-9<]*)*",
        confidence=0.7,
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


_MAX_PIECES = 6  # words taken in on each side of a finding, at most (a 44-character SAS signature: 6)
# The least characters of a token whose length its kind fixes, a few under it since OCR drops some: an
# Azure SAS signature (43 of base64 and `%3D`), a GitHub token (40); a Mailgun key (`key-` and 32) in full,
# since its last piece can be a few characters (`...b201 lef`).
_TOKEN_CHARS: dict[str, int] = {
    FindingType.AZURE_KEY: 40,
    FindingType.MAILGUN_KEY: 36,
    FindingType.GITHUB_TOKEN: 36,
}
# How such a token ends, when the piece it ends with lies past its least length: a SAS signature's padding.
_TOKEN_TAIL: dict[str, tuple[str, ...]] = {FindingType.AZURE_KEY: ("3D", "=")}
_LABEL_MAX = 5
_INTERFACE = re.compile(
    r"[a-z]{2,5}[0-9]"
)  # a word of this many capital letters at most, alone, is a label (IBAN, DNI, GET, WARN)
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


def _label(word: str) -> bool:
    """A word that names the value after it rather than being a piece of it: a few capitals alone (IBAN,
    DNI, GET, WARN), an interface's name (inet6, eth0), or a name with its sign (`sig=`, `key:`)."""
    return (
        (word.isalpha() and word.isupper() and len(word) <= _LABEL_MAX)
        or _INTERFACE.fullmatch(word) is not None
        or word.endswith(("=", ":"))
    )


def _after_sign(span: LineSpan, line: OcrLine, word: int) -> bool:
    """Whether the span starts inside its first word, right after a `=` or `:`: a value after its name, so
    nothing on its left belongs to it."""
    start = line.spans[word][0]
    return span.start > start and line.text[span.start - 1] in "=:"


def _short_by(span: LineSpan, line: OcrLine, last: int, least: int) -> bool:
    """Whether the span, taken to the end of word `last`, holds fewer than `least` characters (spaces
    aside)."""
    end = max(span.end, line.spans[last][1])
    return len("".join(line.text[span.start : end].split())) < least


def _to_tail(words: Sequence[str], last: int, tail: tuple[str, ...]) -> int:
    """`last`, or the next word or the one after it if that one ends the token (`...fk%3D`)."""
    if not tail or words[last].endswith(tail):
        return last
    return next((n for n in range(last + 1, min(len(words), last + 3)) if words[n].endswith(tail)), last)


def widen(spans: Iterable[LineSpan], lines: Sequence[OcrLine], types: Sequence[str] = ()) -> list[LineSpan]:
    """Each span grown over the neighbouring words on its line that look like pieces of the same token;
    on its left, not over a label or a name with its sign, nor past the sign a value starts after.

    `types` (each finding's type, by number) lets a token of known length take in the pieces after it
    that it still lacks, token-like or not: OCR splits a signature into lower-case bits (`ur`, `ph`)."""
    return [_widened(span, lines[span.line], types) for span in spans]


def _widened(span: LineSpan, line: OcrLine, types: Sequence[str]) -> LineSpan:
    covered = line.words_within(span.start, span.end)
    if not covered:
        return span
    first = _left_edge(span, line, covered[0])
    last = _right_edge(line.words, covered[-1])
    least = _TOKEN_CHARS.get(types[span.finding], 0) if span.finding < len(types) else 0
    last = _to_least_length(span, line, last, least)
    last = _to_tail(line.words, last, _TOKEN_TAIL.get(types[span.finding], ()) if least else ())
    start = min(span.start, line.spans[first][0])
    end = max(span.end, line.spans[last][1])
    return LineSpan(span.line, start, end, span.finding)


def _left_edge(span: LineSpan, line: OcrLine, first: int) -> int:
    """The first word of the token: `first`, or a word before it that joins it, but not over a label, and
    none when the span starts after a sign."""
    words = line.words
    for _ in range(0 if _after_sign(span, line, first) else _MAX_PIECES):
        left = words[first - 1] if first else ""
        if not left or _label(left) or not _joined(left, words[first]):
            break
        first -= 1
    return first


def _right_edge(words: Sequence[str], last: int) -> int:
    """The last word of the token: `last`, or a word after it that joins it."""
    for _ in range(_MAX_PIECES):
        if last + 1 == len(words) or not _joined(words[last], words[last + 1]):
            break
        last += 1
    return last


def _to_least_length(span: LineSpan, line: OcrLine, last: int, least: int) -> int:
    """`last`, or a word after it, until the span holds the `least` characters of a token of known length."""
    for _ in range(_MAX_PIECES):
        if last + 1 == len(line.words) or not _short_by(span, line, last, least):
            break
        last += 1
    return last
