# ruff: noqa: RUF001, RUF002, RUF003  (quotes, colons and dashes of other scripts are meant)
"""Passwords and secrets that no `key = value` syntax of code introduces, as people write them in chat,
tickets, forms and tables, in the languages they write.

- Announced: a word of the lexicon (data/lexicons/secret_words.toml: password, passphrase, PIN, secret,
  token, API key in some 27 languages, in their own scripts) followed by its value, directly or through an
  operator (`:`, `：`, `=`, a dash) or a connector of its language ("mot de passe : hunter2", "Passwort ist
  Sommer2024!", "密码是abc123", "パスワードは「xyz123」", "비밀번호는 qwe123!", "كلمة المرور هي P4ss").
- Strong: on a line that names a password (or right after one), a token is taken for a password when it looks
  generated or deliberately strong: upper and lower case letters and a digit, and either no reading as words or
  a symbol in it ("admin / R0uter!Home77", "what's the password?" answered by "it's CgM7yQ_w_6i" on the next
  line, a table whose "Password" column holds "Xq9!vLm2#Rt7"). Identifiers in code rarely mix all three
  without reading as words, which keeps code lines quiet.

Non-Latin scripts have no case and often no spaces: lexicon words are matched in the lowered text without
`\\b`, with boundaries checked per script (see `_keywords.LexiconWord.boundary`). The detector declares no
prefilter anchors, since those are ASCII only: on an ASCII text it reads only the lexicon's ASCII words, on
any other text all of them, in one pass each.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import cache

from .._types import FindingType
from ._base import Candidate, ScanText, reads_as_words
from ._keywords import (
    CONTEXT_CONCEPTS,
    PASSWORD_CONCEPTS,
    STATUS_WORDS,
    LexiconWord,
    english_connectors,
    lexicon_hits,
    lexicon_lower,
    secret_words,
)
from ._values import is_placeholder_value
from .keyword_secrets import classify_key, identifier_bounds, naming_words, secret_assigned_to

__all__ = ["ContextualPasswordDetector"]

# Lexicon words that name a password nearby, in any language; whole words ("_" counts as a separator:
# `db_password` yes, `ASPasswordCredential` no).
_CONTEXT_CONCEPTS = frozenset(("password", "passphrase", *CONTEXT_CONCEPTS))
_MAX_LINE = 400  # chat lines, table rows and config lines are short; long ones are data or minified code
_MAX_PASSWORD = 48
# A token ends at punctuation, the full-width kind CJK text uses too ("密码：X"): it is no part of a value.
_TOKEN = re.compile(r"[^\s:/\\,;|'\"`()<>\[\]{}=：，；＝、。「」『』（）【】《》]{8,48}")
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
_UPPER, _LOWER, _DIGIT = re.compile("[A-Z]"), re.compile("[a-z]"), re.compile("[0-9]")
_SYMBOL = re.compile(r"[^A-Za-z0-9_.]")
# URLs, addresses, file names (`...-debug-0.log`) and timestamps are not passwords.
_NOT_PASSWORDS = re.compile(r"https?.*|www\..*|.*@.*\..*|.*\.[A-Za-z]{1,5}|.*[0-9]{4}-[0-9]{2}-[0-9]{2}.*")

# After a lexicon word: an operator, then the value. A dash counts only with a blank after it.
_OPERATOR = re.compile(r"[ \t]*(?:=>|[:：=]|[-–—](?=[ \t]))[ \t]*")
_SPACES = re.compile(r"[ \t]*")
_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "«": "»", "「": "」", "『": "』", "„": "“"}
# A value ends at a blank, a separator, or a letter of a script written without spaces (Han, kana, Hangul,
# Thai), which is the sentence going on: "密码是abc123，请记住", "รหัสผ่านคือabc123ครับ".
_VALUE = re.compile(
    "[^\\s\"'`,;()<>\\[\\]{}，。；：！？、「」『』（）【】《》“”‘’«»"
    "\u0e00-\u0e7f\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]{1,64}"
)
_PIN = re.compile(r"[0-9]{4,8}")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_REFERENCE_HINTS = ("pass", "pwd", "secret", "token", "key", "auth", "cred")
_SENTENCE_END = "!?.…"
_JOINERS = re.compile(r"[_\-]")
# The connectors `parse_assignment` reads after a key (detectors/_assignment.py).
_KEYWORD_CONNECTOR = re.compile(r"(?:is|was|are)(?: (?:still|now|currently|just))?")
_ANNOTATED = re.compile(r"[ \t]*(?:\[[^\]\n]*\][ \t]*)?(?:\|[^=\n]*)?=(?!=)")


class ContextualPasswordDetector:
    name = "password_context"
    # No `anchors`: the lexicon's words in other scripts cannot be ASCII anchors (see the module text).

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        found: set[tuple[int, int]] = set()
        for candidate in _announced(scan):
            found.add((candidate.start, candidate.end))
            yield candidate
        for candidate in self._strong(scan):
            if (candidate.start, candidate.end) not in found:
                yield candidate

    def _strong(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        scanned_until = 0
        lower = lexicon_lower(scan)
        words = secret_words()
        for hit_start, hit_end, word in lexicon_hits(scan):
            entry = words.get(word)
            if entry is None or entry.concept not in _CONTEXT_CONCEPTS:
                continue
            if _glued(lower, hit_start - 1, word[0]) or _glued(lower, hit_end, word[-1]):
                continue
            line_start = text.rfind("\n", 0, hit_start) + 1
            # The line that names the password, and the next one (a chat answer, a table row).
            first_end = text.find("\n", hit_end)
            second_end = -1 if first_end < 0 else text.find("\n", first_end + 1)
            region_end = len(text) if second_end < 0 else second_end
            # On the naming line a password follows its name ("password: X", "log in as admin / X").
            start = max(hit_end, scanned_until)
            if start >= region_end or region_end - line_start > 2 * _MAX_LINE:
                continue
            scanned_until = region_end
            for token in _TOKEN.finditer(text, start, region_end):
                if scan.memo(_looks_like_password, token.group()) and not _inside_blob(
                    text, token.start(), token.end()
                ):
                    yield Candidate(FindingType.PASSWORD, token.start(), token.end(), 0.6, self.name)


def _announced(scan: ScanText) -> Iterator[Candidate]:
    """Values announced by a lexicon word: the value after the word, its operator or its connector."""
    text, lower = scan.text, lexicon_lower(scan)
    words = secret_words()
    for hit_start, hit_end, word in lexicon_hits(scan):
        entry = words.get(word)
        if entry is None or entry.concept in CONTEXT_CONCEPTS:
            continue
        if not _stands_alone(lower, hit_start, hit_end, entry):
            found = _in_identifier(scan, hit_start, hit_end, word, entry)
            if found is not None:
                yield found
            continue
        value = _value_after(text, lower, hit_end, entry)
        if value is None:
            continue
        start, end, how = value
        if not _foreign(how) and scan.memo(_owned_by_keyword_detector, word):
            continue  # `password: x`, `token is x`: the keyword detector's, with its rules for code
        if _is_announced_value(text, start, end, how, entry.concept):
            kind = FindingType.PASSWORD if entry.concept in PASSWORD_CONCEPTS else FindingType.SECRET
            yield Candidate(kind, start, _span_end(text, start, end), 0.8, "password_context")


def _in_identifier(scan: ScanText, start: int, end: int, word: str, entry: LexiconWord) -> Candidate | None:
    """A lexicon word at the head of a key's name (`DB_SENHA=...`, `clave_api: ...`, `--kennwort x`): the
    value assigned to that key, read as the keyword detector reads `DB_PASSWORD=...` (so `senha_minima = 8`
    is no secret). English keys are that detector's own; a PIN is not told from a board's pin number here."""
    if "en" in entry.languages or entry.concept == "pin" or not word.isascii():
        return None
    key_start, key_end = identifier_bounds(scan, start, end)
    if not scan.text[key_start:key_end].isascii():
        return None  # a word of prose (`Henkilötunnus`), not a key's name
    key_words = naming_words(scan.text[key_start:key_end])
    phrase = _JOINERS.sub(" ", word)
    size = len(phrase.split())
    # The head of the key's name: last in Germanic order (`db_passwort`), first in Romance (`senha_db`).
    if phrase not in (" ".join(key_words[-size:]), " ".join(key_words[:size])):
        return None
    whole = secret_words().get(" ".join(key_words))  # `clave_api` is "clave api", an API key
    concept = entry.concept if whole is None else whole.concept
    kind = FindingType.PASSWORD if concept in PASSWORD_CONCEPTS else FindingType.SECRET
    value = secret_assigned_to(scan, key_start, key_end, kind)
    return None if value is None else Candidate(kind, value[0], value[1], value[2], "password_context")


def _foreign(how: str) -> bool:
    """Whether the value was announced in a way the keyword detector does not read: a connector of another
    language than English ("la password è ...", "di password na ..."), or a full-width colon."""
    return how.startswith("operator-wide") or how in ("connector", "connector-quoted")


def _owned_by_keyword_detector(word: str) -> bool:
    """A word the keyword detector takes for a whole key (`password`, `passwd`, `token`, `apikey`): there,
    with a colon, `=`, "is" or a blank, it reads the value with its own rules for code and prose. A phrase
    (`api key`, `secret key`, `code secret`) it does not see whole."""
    return " " not in word and classify_key(word) is not None


@cache
def _keyword_connectors() -> frozenset[str]:
    """The English connectors the keyword detector reads itself (`is`, `was`; not `will be`)."""
    return frozenset(word for word in english_connectors() if _KEYWORD_CONNECTOR.fullmatch(word))


def _is_mark(char: str) -> bool:
    """A letter, digit or combining mark (Devanagari and Tamil vowel signs are marks, not letters)."""
    return char.isalnum() or unicodedata.category(char)[0] == "M"


def _in_word(char: str) -> bool:
    """Part of a word: also the joiners of Indic scripts (zero-width non-joiner, Cf), never a symbol."""
    return _is_mark(char) or unicodedata.category(char) == "Cf"


def _latin(char: str) -> bool:
    return char < "\u0250"  # ASCII, Latin-1 and Latin Extended: one script for word boundaries


def _stands_alone(lower: str, start: int, end: int, entry: LexiconWord) -> bool:
    """Whether the word at lower[start:end] is a word of its own: not inside an identifier (`api_token`,
    `user-password`, left to the keyword detector) nor a longer word, as the word's script allows."""
    before = lower[start - 1] if start > 0 else " "
    after = lower[end] if end < len(lower) else " "
    first, last = lower[start], lower[end - 1]
    if before in "_-.$%{/\\@:" or (_is_mark(before) and (first.isascii() or entry.boundary != "none")):
        return False
    if after in "_-" and end + 1 < len(lower) and _is_mark(lower[end + 1]):
        return False  # `password-protected`, `token_url`
    if entry.boundary == "suffix":
        return True
    # A letter of another script after the word is a boundary too: "รหัส pinคือ 4821".
    glued = _is_mark(after) and _latin(after) == _latin(last)
    return not (glued and (_latin(last) or entry.boundary == "word"))


def _value_after(text: str, lower: str, position: int, entry: LexiconWord) -> tuple[int, int, str] | None:
    """(start, end, how) of the value after a lexicon word ending at `position`; how is "operator" (or
    "operator-wide" for a full-width colon), "connector" (or "connector-en" for an English one) or "space",
    with "-quoted" after it for a quoted value."""
    if entry.boundary == "suffix":  # Turkish and Korean suffixes: `şifreniz`, `비밀번호는`
        last_ascii = lower[position - 1].isascii()
        while position < len(lower) and lower[position].isalpha() and lower[position].isascii() == last_ascii:
            position += 1
    position, how = _link(text, lower, position, entry)
    if position >= len(text) or (
        not how and not (text[position].isascii() and not lower[position - 1].isascii())
    ):
        return None
    return _value_at(text, position, how)


def _link(text: str, lower: str, position: int, entry: LexiconWord) -> tuple[int, str]:
    """Past what links the word to its value: an operator, blanks, a connector; and how it links them."""
    operator = _OPERATOR.match(text, position)
    if operator is not None:
        # A full-width colon is no operator of the keyword detector's: say so, as for a foreign connector.
        return operator.end(), "operator-wide" if "：" in operator.group() else "operator"
    how = ""
    spaced = _SPACES.match(text, position)
    if spaced is not None and spaced.end() > position:
        position, how = spaced.end(), "space"
    connector = _connector(lower, position, entry)
    if connector:
        english = lower[position:connector] in _keyword_connectors()
        position, how = connector, "connector-en" if english else "connector"
        after = _OPERATOR.match(text, position) or _SPACES.match(text, position)
        position = after.end() if after is not None else position
    return position, how


def _connector(lower: str, position: int, entry: LexiconWord) -> int:
    """The end of a connector word of the entry's languages at `position`, or 0."""
    for connector in entry.connectors:
        end = position + len(connector)
        if lower.startswith(connector, position) and not (
            end < len(lower) and connector[-1].isascii() and _is_mark(lower[end])
        ):
            return end
    return 0


def _value_at(text: str, position: int, how: str) -> tuple[int, int, str] | None:
    closer = _QUOTES.get(text[position])
    if closer is not None:
        close = text.find(closer, position + 1, position + 1 + _MAX_PASSWORD + 16)
        newline = text.find("\n", position + 1, close)
        if close <= position + 1 or newline >= 0:
            return None
        return position + 1, close, how + "-quoted"
    value = _VALUE.match(text, position)
    return None if value is None else (position, value.end(), how)


def _span_end(text: str, start: int, end: int) -> int:
    """A sentence's full stop or comma after the value is not part of it."""
    while end > start + 1 and text[end - 1] in ".,:;":
        end -= 1
    return end


def _is_announced_value(text: str, start: int, end: int, how: str, concept: str) -> bool:
    value = text[start:end]
    core = value.rstrip(_SENTENCE_END) if not how.endswith("-quoted") else value
    if concept == "pin":
        return _PIN.fullmatch(core) is not None
    if not core or _is_not_a_literal(text, end, core):
        return False
    if concept in PASSWORD_CONCEPTS:
        return _is_password_value(core, how)
    return (
        len(core) >= 8 and " " not in core and (_has_digit(core) or (len(core) >= 16 and _case_changes(core)))
    )


def _is_not_a_literal(text: str, end: int, core: str) -> bool:
    """A placeholder, a status word, an address or file name, or code that reads the value from elsewhere:
    a call, a subscript, an attribute, a template, a variable named after a secret (`auth_token`)."""
    if is_placeholder_value(core) or core.lower() in STATUS_WORDS or _NOT_PASSWORDS.fullmatch(core):
        return True
    if text[end : end + 1] in ("(", "[") or _DOTTED.fullmatch(core) or core[0] in "$%{<":
        return True
    if _ANNOTATED.match(text, end):
        return True  # `password: FilterOrBool = False`: a type, then the value
    lowered = core.lower()
    return _IDENTIFIER.fullmatch(core) is not None and (
        "_" in core or any(hint in lowered for hint in _REFERENCE_HINTS)
    )


def _is_password_value(core: str, how: str) -> bool:
    if how.endswith("-quoted") and how != "space-quoted":
        return 4 <= len(core) <= _MAX_PASSWORD and core.count(" ") <= 3
    if how == "space":  # nothing but a blank between word and value: "şifrem Ankara06", not "secret/prod/db"
        return len(core) >= 6 and _has_digit(core) and "/" not in core and _looks_random(core)
    minimum = 4 if how.startswith("operator") else 6
    return len(core) >= minimum and _looks_random(core)


def _has_digit(value: str) -> bool:
    return any(char.isdigit() for char in value)


def _case_changes(value: str) -> bool:
    """Upper case after the first character, and lower case somewhere: not a capitalised word."""
    tail = value[1:]
    return tail != tail.lower() and value != value.upper()


def _looks_random(value: str) -> bool:
    """A digit, a symbol inside, or a case change inside: `hunter2`, `Sommer2024!`, `xK!mqzpt`, `CgMyQwAb`.
    Vowel signs and joiners of Indic scripts are part of words, not symbols."""
    return _has_digit(value) or any(not _in_word(char) for char in value) or _case_changes(value)


def _glued(lower: str, index: int, edge: str) -> bool:
    """Whether an ASCII word's edge letter continues into a letter: `passwords` is one, `db_password` not."""
    return edge.isascii() and 0 <= index < len(lower) and "a" <= lower[index] <= "z"


def _inside_blob(text: str, start: int, end: int) -> bool:
    """Part of a longer Base64 run (an integrity hash, a key body) rather than a password on its own."""
    while start > 0 and text[start - 1] in _BASE64:
        start -= 1
    while end < len(text) and text[end] in _BASE64:
        end += 1
    return end - start > _MAX_PASSWORD


def _looks_like_password(token: str) -> bool:
    if not (_UPPER.search(token) and _LOWER.search(token) and _DIGIT.search(token)):
        return False
    if _NOT_PASSWORDS.fullmatch(token):
        return False
    return _SYMBOL.search(token) is not None or not reads_as_words(token)
