"""Word lists for the keyword detectors: which keys name a secret, and which values are not one; and the
lexicons of data/lexicons/ (secret words, birth words, month names in the languages people write), loaded
once, on first use."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from .._hyperscan import Occurrences
from ._base import ScanText, literal_alternation

__all__ = [
    "AUTH_SCHEMES",
    "BIRTH_WORDS_FILE",
    "CONTEXT_CONCEPTS",
    "HEADER_KEYS",
    "KEY_QUALIFIERS",
    "MONTHS_FILE",
    "NEUTRAL_SUFFIX_WORDS",
    "PASSWORD_CONCEPTS",
    "PASSWORD_WORDS",
    "SECRET_CONCEPTS",
    "SECRET_SUFFIXES",
    "SECRET_WORDS_FILE",
    "STATUS_WORDS",
    "LexiconWord",
    "birth_words",
    "english_connectors",
    "lexicon_hits",
    "lexicon_lower",
    "load_data",
    "month_names",
    "secret_words",
]

# "psk": a Wi-Fi pre-shared key is the network's password.
PASSWORD_WORDS = frozenset(
    {"password", "passwd", "pwd", "pass", "passphrase", "passcode", "pw", "pword", "psk"}
)
SECRET_SUFFIXES = (
    "secret",
    "token",
    "apikey",
    "credential",
    "credentials",
    "sessionid",
    "accesskey",
    "secretkey",
    "privatekey",
    "authkey",
)
KEY_QUALIFIERS = frozenset(
    {
        "api",
        "access",
        "secret",
        "private",
        "auth",
        "encryption",
        "signing",
        "master",
        "client",
        "app",
        "account",
        "shared",
        "session",
        "storage",
        "license",
        "subscription",
        "webhook",
        "consumer",
        "service",
        "admin",
        "deploy",
        "root",
        "crypto",
        "hmac",
        "jwt",
        "aes",
        "sas",
        "primary",
        "secondary",
        "connection",
        "signature",
        "encrypt",
        "decrypt",
        "cipher",
    }
)
NEUTRAL_SUFFIX_WORDS = frozenset(
    {
        "value",
        "base",
        "string",
        "str",
        "b64",
        "base64",
        "hex",
        "raw",
        "bytes",
        "plain",
        "plaintext",
        "env",
        "var",
    }
)
HEADER_KEYS = frozenset({"authorization", "proxy-authorization", "auth", "x-auth-token", "x-api-key"})
AUTH_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "apikey", "key", "sso-key", "negotiate"})
# Words that follow "password:" as a status or a type in prose, logs and code, not as a password.
STATUS_WORDS = frozenset(
    {
        "required",
        "optional",
        "incorrect",
        "invalid",
        "expired",
        "changed",
        "reset",
        "files",
        "set",
        "unset",
        "updated",
        "ok",
        "missing",
        "protected",
        "strong",
        "weak",
        "disabled",
        "enabled",
        "saved",
        "sent",
        "match",
        "mismatch",
        "accepted",
        "rejected",
        "prompt",
        "stdin",
        "ask",
        "never",
        "always",
        "any",
        "object",
        "number",
        "boolean",
        "char",
        "varchar",
        "secretstr",
        "optional[str]",
        "str | none",
        "self",
        "cls",
        "this",
        "args",
        "kwargs",
        "config",
        "settings",
        "options",
        "opts",
        "params",
        "data",
        "val",
        "arg",
        "user",
        "input",
        "keyring",
        "vault",
        "file",
        "default",
        "auto",
        "login",
        "the",
        "a",
        "an",
        "not",
    }
)


SECRET_WORDS_FILE = "lexicons/secret_words.toml"  # noqa: S105  (a file name)
BIRTH_WORDS_FILE = "lexicons/birth_words.toml"
MONTHS_FILE = "lexicons/months.toml"
# The concepts of secret_words.toml and what a value announced by each is.
PASSWORD_CONCEPTS = ("password", "passphrase", "pin")
# Words that only say a password is near ("log in as admin / X", "creds:"): context, never a value's key.
CONTEXT_CONCEPTS = ("sign_in",)
SECRET_CONCEPTS = ("secret", "token", "api_key")
_JOINER = re.compile(r"[ \-]")  # between the words of a phrase, as a key's name joins them
_BOUNDARY_ORDER = {"word": 0, "suffix": 1, "none": 2}  # where languages disagree on a word, the strictest


@dataclass(frozen=True, slots=True)
class LexiconWord:
    """One word of a lexicon, merged over the languages that write it (`pin`, `token`)."""

    concept: str
    boundary: str  # "word", "suffix" or "none"
    connectors: tuple[str, ...]  # words between this word and its value, all its languages', longest first
    fillers: frozenset[str]  # words that may stand between the parts of a date (birth words only)
    languages: tuple[str, ...]


@cache
def load_data(name: str) -> dict[str, Any]:
    """A TOML file under kronii/redaction/data/, parsed once."""
    package = resources.files("kronii.redaction") / "data"
    with (package / name).open("rb") as handle:
        return tomllib.load(handle)


def _merge(words: dict[str, LexiconWord], word: str, entry: LexiconWord) -> None:
    known = words.get(word)
    if known is None:
        words[word] = entry
        return
    boundary = min(known.boundary, entry.boundary, key=_BOUNDARY_ORDER.__getitem__)
    words[word] = LexiconWord(
        known.concept,
        boundary,
        tuple(sorted({*known.connectors, *entry.connectors}, key=len, reverse=True)),
        known.fillers | entry.fillers,
        (*known.languages, *entry.languages),
    )


@cache
def secret_words() -> dict[str, LexiconWord]:
    """Every word of secret_words.toml, lower case, with its concept; a word in two concepts keeps the first."""
    words: dict[str, LexiconWord] = {}
    data = load_data(SECRET_WORDS_FILE)
    english = {
        _JOINER.sub(joiner, word.lower())
        for concept in (*PASSWORD_CONCEPTS, *SECRET_CONCEPTS)
        for word in data.get("en", {}).get(concept, ())
        for joiner in (" ", "_", "-", "")
    }
    for code, language in data.items():
        connectors = tuple(
            sorted({word.lower() for word in language.get("connectors", ())}, key=len, reverse=True)
        )
        for concept in (*PASSWORD_CONCEPTS, *SECRET_CONCEPTS, *CONTEXT_CONCEPTS):
            for word in language.get(concept, ()):
                entry = LexiconWord(concept, language["boundary"], connectors, frozenset(), (code,))
                _merge(words, word.lower(), entry)
                for variant in _identifier_spellings(word.lower(), code):
                    if variant not in english:  # `api_key` is the keyword detector's
                        _merge(words, variant, entry)
    return words


def _identifier_spellings(word: str, language: str) -> tuple[str, ...]:
    """How a phrase is written as a key's name: `mot_de_passe`, `kata-sandi`, `motdepasse`. English keys
    are the keyword detector's own, which splits them into words."""
    if not (" " in word or "-" in word) or language == "en":
        return ()
    return tuple(_JOINER.sub(joiner, word) for joiner in ("_", "-", ""))


@cache
def english_connectors() -> frozenset[str]:
    """The English connectors ("is", "was"): a value after one of them is the keyword detector's to read."""
    return frozenset(
        word.lower() for word in load_data(SECRET_WORDS_FILE).get("en", {}).get("connectors", ())
    )


@cache
def birth_words() -> dict[str, LexiconWord]:
    """Every word of birth_words.toml, lower case. Its concept says where the date stands: "after" the word
    (`date of birth: ...`), "before" it (`1997年7月26日生まれ`, `am 11. Juli 1965 geboren`), or "both"; or
    "column": a stem that names a table column of birth dates (`geburt` in `Geburtsdatum`), no word alone."""
    words: dict[str, LexiconWord] = {}
    sides: dict[str, set[str]] = {}
    for code, language in load_data(BIRTH_WORDS_FILE).items():
        fillers = frozenset(word.lower() for word in language.get("fillers", ()))
        for side, key in (("after", "words"), ("before", "after_date"), ("column", "columns")):
            for word in language.get(key, ()):
                entry = LexiconWord(side, language["boundary"], (), fillers, (code,))
                _merge(words, word.lower(), entry)
                sides.setdefault(word.lower(), set()).add(side)
    for word, found in sides.items():
        if {"after", "before"} <= found:
            words[word] = dataclasses.replace(words[word], concept="both")
    return words


@cache
def month_names() -> dict[str, int]:
    """Every month name and abbreviation of months.toml, lower case, mapped to its number (1 to 12)."""
    names: dict[str, int] = {}
    for language in load_data(MONTHS_FILE).values():
        for number, forms in enumerate(language["months"], start=1):
            for form in forms:
                names.setdefault(form.lower(), number)
    return names


def _lexicon_words() -> list[str]:
    return [*secret_words(), *birth_words()]


@cache
def _ascii_pattern() -> re.Pattern[str]:
    """The ASCII lexicon words as a trie: all an ASCII text can hold. Compiled apart from the others, so that a
    process that only ever reads ASCII (most `kronii redact` runs) never compiles the tries of other scripts."""
    return re.compile(literal_alternation(word for word in _lexicon_words() if word.isascii()))


@cache
def _other_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The words that start with an ASCII letter (`contraseña`, `né le`), the others (`пароль`, `密码`) and the
    first letters of the others."""
    words = _lexicon_words()
    latin_initial = [word for word in words if word[0].isascii()]
    others = [word for word in words if not word[0].isascii()]
    firsts = "".join(sorted({re.escape(word[0]) for word in others}))
    return (
        re.compile(literal_alternation(latin_initial)),
        re.compile(literal_alternation(others)),
        re.compile(f"[{firsts}]"),
    )


def _hits(lower: str) -> tuple[tuple[int, int, str], ...]:
    if lower.isascii():
        return tuple((hit.start(), hit.end(), hit.group()) for hit in _ascii_pattern().finditer(lower))
    latin_initial, others, firsts = _other_patterns()
    hits = [(hit.start(), hit.end(), hit.group()) for hit in latin_initial.finditer(lower)]
    # A trie of words in other scripts has no cheap first-character test in `re`: it is tried only where one
    # of its words' first letters stands, which a character class finds fast.
    position = 0
    for first in firsts.finditer(lower):
        if first.start() < position:
            continue
        hit = others.match(lower, first.start())
        if hit is not None:
            hits.append((hit.start(), hit.end(), hit.group()))
            position = hit.end()
    return tuple(sorted(hits))


def lexicon_hits(scan: ScanText) -> tuple[tuple[int, int, str], ...]:
    """(start, end, word) of every secret and birth word in the lowered text, found in one pass shared by the
    detectors that read them. An ASCII text is searched for the ASCII words only."""
    lower = lexicon_lower(scan)
    if scan.candidate_lines is not None:  # the engine's compiled scan runs on this text: hyperscan is here
        found = scan.memo(_compiled_hits, lower)
        if found is not None:
            return found
    return scan.memo(_hits, lower)


@cache
def _occurrences() -> tuple[Occurrences, tuple[bool, ...]]:
    words = tuple(dict.fromkeys(_lexicon_words()))
    return Occurrences(words), tuple(not word[0].isascii() for word in words)


def _compiled_hits(lower: str) -> tuple[tuple[int, int, str], ...] | None:
    """What `_hits` finds, from every occurrence of every word (one hyperscan pass): `_hits` reads the words that
    open with an ASCII letter and the others in two passes, each leftmost first, the longest word at a place,
    and on after it. The same choice is made here among each half's occurrences."""
    occurrences, other = _occurrences()
    try:
        found = occurrences.of(lower)
    except Exception:  # hyperscan failed on this text: the tries find the same
        return None
    if found is None:
        return None
    found.sort(key=lambda hit: (hit[0], -hit[1]))
    words = occurrences.literals
    hits: list[tuple[int, int, str]] = []
    reached = [0, 0]  # where each half's last chosen word ends
    for start, end, index in found:
        half = other[index]
        if start >= reached[half]:
            hits.append((start, end, words[index]))
            reached[half] = end
    return tuple(sorted(hits))


def _lowered(text: str) -> str:
    lowered = text.replace("\u0130", "i").lower()  # "İ" is the one letter str.lower makes two of
    return lowered if len(lowered) == len(text) else text.lower()


def lexicon_lower(scan: ScanText) -> str:
    """The text in lower case, index for index, in every script. `scan.lower` falls back to lowering ASCII
    only when a letter lowers to two ("İ" in Turkish text), which would leave "ŞİFRE" and "ПАРОЛЬ" unmatched."""
    lower = scan.lower
    if lower is scan.text or scan.text.isascii() or "\u0130" not in scan.text:
        return lower
    return scan.memo(_lowered, scan.text)
