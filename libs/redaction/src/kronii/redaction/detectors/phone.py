"""Phone numbers, validated by Google's libphonenumber (the `phonenumbers` port).

A cheap regex first finds digit groups shaped like a phone number; only those reach PhoneNumberMatcher, which
is slow but knows every region's numbering plan. Its VALID leniency, dates and versions excluded by shape,
and a requirement that a bare digit run (`4155552671`, which is also a build number or a timestamp) has a
phone word before it keep the false positives down. Numbers written the way phone numbers are written (the
North American layout, or a country code or trunk "0" and digit groups) but in an unassigned or fictional range
(`(555) 123-4567`, `07700 900982`, common in examples) are still masked, with less confidence.

A number in national format is read in the policy's regions and in those of the phone word's language before
it. Written with a trunk "0" after a word that only means "phone" (phone, tel, mobile, Handy, portable, móvil,
celular, WhatsApp, ...), it is read in every region the library knows, the language's regions first:
`Portable : 06 12 34 56 78` is French, `mobile 098765 43210` Indian. A value glued to its key
(`mobile=+91 98765 43210`, `tel:0612345678`) is read when a phone word stands just before it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache

import phonenumbers

from .._types import FindingType
from ._base import Candidate, ScanText, literal_alternation
from .catalogue_ids import names_an_id

__all__ = ["PhoneDetector"]

# One leading class and no look-behind at the start: CPython scans such a pattern quickly. The boundaries are
# checked in Python for the matches.
_CANDIDATE = re.compile(r"[+(0-9][0-9 ().\-\u00a0]{6,21}(?<=[0-9])")
_DATE_OR_TIME = re.compile(
    r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}(?!\d)|\d{1,2}[.:]\d{2}[.:]\d{2}"
)
_NON_DIGITS = re.compile(r"[^0-9]+")
_DOTTED_SHORT = re.compile(r"\d{1,3}(?:\.\d{1,3}){2,}")
# Written the way people write phone numbers, with a country code or a trunk "0" and groups: `+44 7700 900461`,
# `07700 900982`. Reserved fictional ranges (Ofcom's 07700 900xxx, NANP 555) are not VALID, but are phone numbers
# in every text that uses them.
_DIALLING_LAYOUT = re.compile(r"(?:\+[0-9]{1,3}|\(?0[0-9]{1,4}\)?)(?:[ .\-][0-9]{2,8}){1,4}")
_GROUPS = re.compile(r"[0-9]+")
_NANP_LAYOUT = re.compile(r"(?:\+?1[ .\-]?)?(?:\(\d{3}\)[ .\-]?|\d{3}[ .\-])\d{3}[ .\-]\d{4}")
_PHONE_WORDS = (
    "phone",
    "tel",
    "mobile",
    "cell",
    "call",
    "fax",
    "whatsapp",
    "signal",
    "sms",
    "text me",
    "my number",
    "new number",
    "old number",
    "our number",
    "your number",
    "contact",
    "reach",
    "dial",
    "ring",
    "handy",
    "mob",
    "☎",
    "📞",
    "tél",
    "portable",
    "móvil",
    "movil",
    "celular",
    "cellulare",
    "telemóvel",
    "mobiel",
    "viber",
    "電話",
    "携帯",
    "appel",  # French: appeler, rappeler
    "rappel",
)
# Words that say phone and nothing else ("call" and "contact" also name function calls and contact forms): only
# these open the reading in every region.
_STRONG_PHONE_WORDS = (
    "phone",
    "tel",
    "tél",
    "mobile",
    "cell",
    "fax",
    "whatsapp",
    "viber",
    "sms",
    "handy",
    "portable",
    "móvil",
    "movil",
    "celular",
    "mobiel",
    "my number",
    "☎",
    "📞",
    "電話",
    "携帯",
)
# The regions a phone word's language points to, tried before the rest of the world.
_LANGUAGE_REGIONS = (
    (("tél", "portable", "mobile", "appel", "rappel"), ("FR", "BE", "CH", "LU")),
    (("telefon", "handy", "festnetz", "mobil"), ("DE", "AT", "CH")),
    (("teléfono", "telefono", "móvil", "movil"), ("ES", "MX", "AR", "CO", "CL", "PE")),
    (("telefone", "celular", "telemóvel"), ("BR", "PT")),
    (("cellulare",), ("IT",)),
    (("telefoon", "mobiel"), ("NL", "BE")),
    (("電話", "携帯"), ("JP",)),
    (("mobile", "phone", "whatsapp"), ("IN",)),
)
_ALL_REGIONS = tuple(sorted(phonenumbers.SUPPORTED_REGIONS))


def _word_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """The words at the start of a word (`tel` in `tel:` and `Telefon`, not in `hotel` or `telnet`)."""
    alternation = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    return re.compile(f"(?<![a-zà-ÿ])(?:{alternation})(?!emetry|net|egra|escope)")


_PHONE_WORD = _word_pattern(_PHONE_WORDS)
_STRONG_PHONE_WORD = _word_pattern(_STRONG_PHONE_WORDS)
_GLUE = frozenset(":=")
_NOT_PHONE_WORDS = (
    "build",
    "version",
    "ver ",
    "release",
    " id",
    "id:",
    "id=",
    "pid",
    "port",
    "order",
    "invoice",
    "ticket",
    "ref",
    "serial",
    "sku",
    "isbn",
    "timestamp",
    "epoch",
    "size",
    "bytes",
    "commit",
    "job",
    "run ",
    "issue",
    "line",
    "page",
    "#",
    "seed",
    "offset",
    "count",
    "total",
    "amount",
    "price",
    "balance",
)
# One search for any of them: `any(word in before ...)` ran a Python generator per number.
_NOT_PHONE_WORD = re.compile(literal_alternation(_NOT_PHONE_WORDS))
_CONTEXT_BEFORE = 32
_BOUNDARY_CHARS = frozenset("_.-/+:=#$")


class PhoneDetector:
    name = "phone"

    def __init__(self, regions: Sequence[str] = ("US", "GB")) -> None:
        self._regions = tuple(region.upper() for region in regions)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        for match in _CANDIDATE.finditer(text):
            candidate = self._classify(scan, match.start(), match.end())
            if candidate is not None:
                yield candidate

    def _classify(self, scan: ScanText, start: int, end: int) -> Candidate | None:
        text = scan.text
        if not (_free_before(scan, start) and _free_after(text, end)):
            return None
        raw = text[start:end]
        if raw.startswith("(") and ")" not in raw:
            start, raw = start + 1, raw[1:]
        digits = len(_NON_DIGITS.sub("", raw))
        if not _has_number_shape(raw, digits):
            return None
        before = scan.lower[max(0, start - _CONTEXT_BEFORE) : start]
        has_phone_word = _PHONE_WORD.search(before) is not None
        if not (has_phone_word or _reads_as_phone_alone(raw, before, digits)):
            return None
        return self._read(raw, start, before, digits, has_phone_word)

    def _read(self, raw: str, start: int, before: str, digits: int, has_phone_word: bool) -> Candidate | None:
        """The number that libphonenumber finds in `raw` (at `start` in the text): a valid one, in the regions
        the words before it point to; else, written like a phone number or after a phone word, a possible one
        (unassigned and fictional ranges), with less confidence."""
        regions = self._regions
        if has_phone_word and not raw.startswith("+"):
            regions = _regions_for(before, self._regions, raw.lstrip("(").startswith("0"))
        span = _matched_span(raw, regions, phonenumbers.Leniency.VALID)
        if span is not None:
            return Candidate(
                FindingType.PHONE, start + span[0], start + span[1], 0.9 if has_phone_word else 0.8, self.name
            )
        if has_phone_word or _NANP_LAYOUT.fullmatch(raw) or _is_dialling_layout(raw, digits):
            possible = self._validated_span(raw, leniency=phonenumbers.Leniency.POSSIBLE)
            if possible is not None:
                return Candidate(FindingType.PHONE, start + possible[0], start + possible[1], 0.6, self.name)
        return None

    def _validated_span(
        self, raw: str, leniency: int = phonenumbers.Leniency.VALID
    ) -> tuple[int, int] | None:
        return _matched_span(raw, self._regions, leniency)


def _free_before(scan: ScanText, start: int) -> bool:
    """Whether nothing glues the number to what precedes it (a word, a path, an id), unless it is a value glued
    to a key that names a phone: `mobile=+91 ...`, `tel:0612...`."""
    if start == 0:
        return True
    char = scan.text[start - 1]
    if not (char.isalnum() or char in _BOUNDARY_CHARS):
        return True
    return char in _GLUE and _key_names_phone(scan.lower, start - 1)


def _free_after(text: str, end: int) -> bool:
    return end >= len(text) or not (text[end].isalnum() or text[end] == "_")


def _has_number_shape(raw: str, digits: int) -> bool:
    """Whether a digit comes first or second in `raw` (`+44 ...`, `(555) ...`), it holds a phone number's count
    of digits, and it is not a date, a time or a short dotted run (a version, an IPv4 address)."""
    if not (raw[0].isdigit() or raw[1].isdigit()):
        return False
    return 7 <= digits <= 15 and not _DATE_OR_TIME.match(raw) and not _DOTTED_SHORT.fullmatch(raw)


def _reads_as_phone_alone(raw: str, before: str, digits: int) -> bool:
    """Without a phone word before it, a number is read only when written with separators (a bare digit run is
    as often a build number or a timestamp) and no word before it names another kind of number, an identifier
    of the catalogue's among them."""
    formatted = digits != len(raw)
    return formatted and _NOT_PHONE_WORD.search(before) is None and not names_an_id(before)


def _key_names_phone(lower: str, glue: int) -> bool:
    """`mobile=`, `tel:`, `contact.phone=`, `sms queued to=`: the key glued to the value, or the words just
    before it, name a phone. Other keys (`id=`, `ts:`) hold numbers of every kind."""
    before = lower[max(0, glue - _CONTEXT_BEFORE) : glue]
    return _PHONE_WORD.search(before) is not None


@lru_cache(maxsize=256)
def _regions_for(before: str, policy: tuple[str, ...], trunk_prefix: bool) -> tuple[str, ...]:
    """The policy's regions, then those of the phone word's language, then, for a number written with a trunk
    "0" after a word that only means phone, every region: such a number is valid in few regions, and the word
    already says what it is. Without the trunk "0" a digit run is valid somewhere far too often (and reading
    it in 245 regions takes milliseconds), so it stays with the policy's and the language's regions."""
    hinted = [
        region
        for words, regions in _LANGUAGE_REGIONS
        if any(w in before for w in words)
        for region in regions
    ]
    ordered = dict.fromkeys((*policy, *hinted))
    if trunk_prefix and _STRONG_PHONE_WORD.search(before) is not None:
        ordered.update(dict.fromkeys(_ALL_REGIONS))
    return tuple(ordered)


@lru_cache(maxsize=4096)
def _matched_span(raw: str, regions: tuple[str, ...], leniency: int) -> tuple[int, int] | None:
    """Where PhoneNumberMatcher finds a number spanning all of `raw`'s digits, in the first region that has one.

    PhoneNumberMatcher takes about a millisecond to give up on a number that is not valid (it tries every
    sub-match), so a cheap parse decides first whether it can succeed at all. Texts repeat numbers (a signature
    in every e-mail of a thread), hence the cache.
    """
    # A number written with its country code is read the same from any region.
    for region in regions[:1] if raw.startswith("+") else regions:
        if not _could_match(raw, region, leniency):
            continue
        for found in phonenumbers.PhoneNumberMatcher(raw, region, leniency=leniency):
            # The whole candidate must be the number: a phone inside a longer digit run is not one.
            if len(_NON_DIGITS.sub("", found.raw_string)) == len(_NON_DIGITS.sub("", raw)):
                return found.start, found.end
    return None


def _could_match(raw: str, region: str, leniency: int) -> bool:
    try:
        number = phonenumbers.parse(raw, region)
    except phonenumbers.NumberParseException:
        return False
    if leniency == phonenumbers.Leniency.POSSIBLE:
        return bool(phonenumbers.is_possible_number(number))
    return bool(phonenumbers.is_valid_number(number))


def _is_dialling_layout(raw: str, digits: int) -> bool:
    """A country code or trunk prefix with digit groups, long enough for a full number.

    Runs of two-digit groups (`00 01 00 00 00`) are hex dumps and tables far more often than phone numbers,
    and short ones (`01310-100`) are postcodes; both need a phone word instead.
    """
    if _DIALLING_LAYOUT.fullmatch(raw) is None or (digits < 9 and not raw.startswith("+")):
        return False
    groups = _GROUPS.findall(raw)
    return not all(len(group) <= 2 for group in groups[1:])
