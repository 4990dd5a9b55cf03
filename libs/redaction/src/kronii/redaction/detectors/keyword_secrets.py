"""Values assigned to keys that name a secret: `password=...`, `"apiKey": "..."`, `export FOO_TOKEN=...`,
`--password xyz`, `Password=...;` in connection strings, `Authorization: Bearer ...`.

The value is the finding, never the key. Keys naming a password give PASSWORD (a red type by default);
other secret keys give SECRET. Values that are references rather than literals (`password = get_pw()`,
`token=$TOKEN`, `api_key: str`) and placeholders (`<your-token>`, `****`) are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._types import FindingType
from ._assignment import Assignment, parse_assignment
from ._base import Candidate, ScanText
from ._keywords import (
    AUTH_SCHEMES,
    HEADER_KEYS,
    KEY_QUALIFIERS,
    NEUTRAL_SUFFIX_WORDS,
    PASSWORD_WORDS,
    SECRET_SUFFIXES,
    STATUS_WORDS,
)
from ._values import is_placeholder_value

__all__ = ["KeywordSecretDetector", "classify_key", "identifier_bounds", "naming_words", "secret_assigned_to"]

# Cheap hits on the ASCII-lowered text; each is then widened to its identifier and classified.
_HIT = re.compile(r"pass|pwd|psk|secret|token|credential|key|auth|sessionid|identified by")
_IDENT_HEAD = re.compile(r"[\w.\-]*")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_IDENT_WINDOW = 64

_SENSITIVE_VALUE = re.compile(
    r'"sensitive"\s*:\s*true\s*,\s*"value"\s*:\s*"(?P<first>(?:[^"\\\n]|\\.)*)"'
    r'|"value"\s*:\s*"(?P<second>(?:[^"\\\n]|\\.)*)"\s*,\s*"sensitive"\s*:\s*true'
)
_OWNER_KEY = re.compile(r'"([\w.\-]+)"\s*:\s*\{\s*\Z')
_REFERENCE_HINTS = ("pass", "pwd", "secret", "token", "key", "auth", "cred")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_PATH = re.compile(r"(?:/|~/|\./|\.\./|[A-Za-z]:[\\/]|\\\\)")
_FILE_NAME = re.compile(r"[\w.\-/\\]+\.(?:txt|json|pem|key|ya?ml|env|cfg|conf|ini|crt|p12|pfx|jks|gpg|asc)")
_CSS_COLOR = re.compile(r"#[0-9a-fA-F]{3,8}")
_PROSE = re.compile(r"(?i)\b(?:the|your|enter|please|must|should|invalid|incorrect|required|for|to|of|is)\b")


class KeywordSecretDetector:
    name = "keyword_secrets"
    # The words of `_HIT`, and the `"sensitive"` of Terraform's sensitive values.
    anchors = (*_HIT.pattern.split("|"), "sensitive")

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text, lower = scan.text, scan.lower
        # Logs and configs repeat whole lines; a line that cannot read past its own ends gives the same
        # findings wherever it stands, so they are worked out once per distinct line of this text.
        replay: dict[str, tuple[tuple[str, int, int, float], ...]] = {}
        position = 0
        while (hit := _HIT.search(lower, position)) is not None:
            line_start = text.rfind("\n", 0, hit.start()) + 1
            line_end = text.find("\n", hit.end())
            line_end = len(text) if line_end < 0 else line_end
            line = text[line_start:line_end]
            found = replay.get(line)
            if found is None:
                found = tuple(_line_findings(scan, hit.start(), line_start, line_end))
                if _is_line_local(line):
                    replay[line] = found
            for finding_type, start, end, confidence in found:
                yield Candidate(finding_type, line_start + start, line_start + end, confidence, self.name)
            position = line_end
        if '"sensitive"' in lower:
            yield from self._sensitive_values(text)

    def _sensitive_values(self, text: str) -> Iterator[Candidate]:
        """Values that the tool itself marks sensitive: `terraform output -json`, Terraform state."""
        for match in _SENSITIVE_VALUE.finditer(text):
            group = "first" if match.group("first") is not None else "second"
            if not match.group(group) or is_placeholder_value(match.group(group)):
                continue
            owner = _OWNER_KEY.search(text, max(0, match.start() - _IDENT_WINDOW), match.start())
            finding_type = (_classify_key(owner.group(1)) if owner else None) or FindingType.SECRET
            yield Candidate(finding_type, match.start(group), match.end(group), 0.85, self.name)


def _is_line_local(line: str) -> bool:
    """Whether the findings on `line` depend on it alone: an XML value (`<password>`) may close on a later
    line, and a backslash at the end of a line lets a quoted value run on."""
    return "<" not in line and not line.endswith("\\")


def _line_findings(
    scan: ScanText, first_hit: int, line_start: int, line_end: int
) -> Iterator[tuple[str, int, int, float]]:
    """The findings of the keyword hits on one line, as (type, start, end, confidence) from the line's start."""
    text = scan.text
    seen_keys: set[int] = set()
    for hit in _HIT.finditer(scan.lower, first_hit, line_end):
        if hit.group() == "identified by":
            key_start, key_end = hit.start(), hit.end()
            finding_type: str | None = FindingType.PASSWORD
        else:
            key_start, key_end = _identifier_bounds(scan, hit.start(), hit.end())
            if key_start in seen_keys:
                continue
            seen_keys.add(key_start)
            finding_type = scan.memo(_classify_key, text[key_start:key_end])
        if finding_type is None:
            continue
        value = secret_assigned_to(scan, key_start, key_end, finding_type)
        if value is not None:
            yield finding_type, value[0] - line_start, value[1] - line_start, value[2]


def secret_assigned_to(
    scan: ScanText, key_start: int, key_end: int, finding_type: str
) -> tuple[int, int, float] | None:
    """(start, end, confidence) of the literal secret assigned to the key text[key_start:key_end], if any:
    not a reference (`${TOKEN}`, `get_pw()`), a placeholder, a type or a word of prose."""
    text = scan.text
    if _is_reference_sigil(text, key_start):
        return None
    is_flag = text.startswith("-", key_start)
    assignment = parse_assignment(text, key_start, key_end, is_flag=is_flag)
    if assignment is None:
        return None
    assignment = _skip_auth_scheme(text, text[key_start:key_end], assignment)
    if assignment is None or not _is_literal_secret(scan, assignment, finding_type, key_start):
        return None
    confidence = 0.85 if assignment.operator in ("=", ":", "xml", "flag") else 0.7
    return assignment.start, assignment.end, confidence


def identifier_bounds(scan: ScanText, hit_start: int, hit_end: int) -> tuple[int, int]:
    """The identifier (`DB_SENHA`, `api.passwort`, `--kennwort`) around the hit text[hit_start:hit_end]."""
    return _identifier_bounds(scan, hit_start, hit_end)


def classify_key(key: str) -> str | None:
    """PASSWORD or SECRET when the key names one (`db_password`, `API_KEY`, `accessToken`), else None."""
    return _classify_key(key)


def naming_words(key: str) -> list[str]:
    """The key's words in lower case, without its leading dashes and the trailing words that only qualify."""
    return _naming_words(key.lstrip("-."))


def _identifier_bounds(scan: ScanText, hit_start: int, hit_end: int) -> tuple[int, int]:
    text = scan.text
    # The identifier's characters before the hit, at most _IDENT_WINDOW of them: one match on the reversed
    # text, where a search for `[\w.\-]+\Z` in the window retried every start position (quadratic).
    behind = len(text) - hit_start
    back = _IDENT_HEAD.match(scan.reversed, behind, behind + _IDENT_WINDOW)
    start = hit_start if back is None else hit_start - (back.end() - behind)
    head = _IDENT_HEAD.match(text, hit_end)
    end = hit_end if head is None else head.end()
    # Dots that end a sentence or a dotted path are not part of the key.
    while end > hit_end and text[end - 1] in ".-":
        end -= 1
    return start, end


def _classify_key(key: str) -> str | None:
    bare = key.lstrip("-.")
    if bare.lower() in HEADER_KEYS:
        return FindingType.SECRET
    words = _naming_words(bare)
    if not words:
        return None
    if _names_password(words[-1], is_option=key.startswith("-")):
        return FindingType.PASSWORD
    if _names_secret(words):
        return FindingType.SECRET
    return None


def _naming_words(bare: str) -> list[str]:
    """The key's words in lower case, without the trailing ones that only qualify the secret:
    `SECRET_KEY_BASE`, `token2`, `API_KEY_V2`."""
    words = [word.lower() for word in _WORDS.findall(bare)]
    while len(words) > 1 and _only_qualifies(words[-1]):
        words.pop()
    return words


def _only_qualifies(word: str) -> bool:
    return word in NEUTRAL_SUFFIX_WORDS or len(word) == 1 or word.isdigit()


def _names_password(last: str, *, is_option: bool) -> bool:
    """Whether the key's last word names a password; as an option, `-...pass` does too (keytool -storepass,
    openssl -passin)."""
    if last in PASSWORD_WORDS or last.endswith(("password", "passwd")):
        return True
    return is_option and last.endswith("pass")


def _names_secret(words: list[str]) -> bool:
    """Whether the key's words name a secret other than a password: a secret suffix (`token`, `secret`), or
    `key` after a word that makes it one (`api key`, `private key`)."""
    last = words[-1]
    if last.endswith(SECRET_SUFFIXES):
        return True
    return last == "key" and len(words) > 1 and words[-2] in KEY_QUALIFIERS


def _is_reference_sigil(text: str, key_start: int) -> bool:
    # `${TOKEN}`, `%API_KEY%` read a variable; they do not assign one. (`$PASSWORD = "x"` in PowerShell
    # does assign, so a bare `$` is left to the operator check.)
    if key_start < 2:
        return key_start == 1 and text[0] == "%"
    before = text[key_start - 1]
    return before == "%" or (before == "{" and text[key_start - 2] == "$")


def _skip_auth_scheme(text: str, key: str, assignment: Assignment) -> Assignment | None:
    """`Authorization: Bearer <token>`: the credential is what follows the scheme word."""
    value = text[assignment.value_slice]
    scheme, _, rest = value.partition(" ")
    if scheme.lower() in AUTH_SCHEMES and rest.strip():
        offset = assignment.start + len(scheme) + 1 + (len(rest) - len(rest.lstrip()))
        return Assignment(offset, assignment.end, assignment.quoted, assignment.operator)
    if scheme.lower() in AUTH_SCHEMES and not assignment.quoted and key.lower() in HEADER_KEYS:
        follower = re.compile(r"[ \t]+([^\s\"'`,;]+)").match(text, assignment.end)
        if follower is None:
            return None
        return Assignment(follower.start(1), follower.end(1), False, assignment.operator)
    return assignment


def _is_literal_secret(scan: ScanText, assignment: Assignment, finding_type: str, key_start: int) -> bool:
    text = scan.text
    value = text[assignment.value_slice]
    stripped = value.strip()
    minimum = 4 if finding_type == FindingType.PASSWORD else 6
    if len(stripped) < minimum or scan.memo(_is_never_secret, stripped):
        return False
    if not assignment.quoted and stripped.startswith(("!", "*", "&")):
        return False  # YAML tags (`!vault |`), aliases and anchors
    if assignment.operator == "space" and not any(not char.isalpha() for char in stripped):
        return False  # "doesn't pass `Name` validation": a quoted word after a key word in prose
    if assignment.quoted:
        return _is_quoted_literal(stripped, finding_type)
    if assignment.operator == "==":
        return False  # `if token == other`: comparing with a variable
    if assignment.operator == ":tight" and key_start > 0 and text[key_start - 1] in "\"'`:":
        return (
            False  # one string with colons in it: `"passwd:gecos"`, `arn:aws:secretsmanager:...:secret:name`
        )
    return _is_unquoted_literal(text, assignment, stripped, finding_type, _starts_line(text, key_start))


def _is_never_secret(stripped: str) -> bool:
    """What the value alone says against it, whatever its key: a placeholder, a colour, a status, a path."""
    if is_placeholder_value(stripped) or _CSS_COLOR.fullmatch(stripped):
        return True
    if stripped.lower() in STATUS_WORDS or _PATH.match(stripped) or _FILE_NAME.fullmatch(stripped):
        return True
    return stripped.startswith(("http://", "https://")) and "@" not in stripped


def _starts_line(text: str, key_start: int) -> bool:
    """Whether only indentation, a list dash or a quote precede the key on its line (config, not prose)."""
    line_start = text.rfind("\n", 0, key_start) + 1
    return not text[line_start:key_start].strip(" \t-\"'`$")


def _has_digit(value: str) -> bool:
    return any(char.isdigit() for char in value)


def _looks_random(value: str) -> bool:
    lowered = value.lower()
    has_symbol = any(not char.isalnum() for char in value)
    return _has_digit(value) or has_symbol or (value != lowered and value != value.upper())


def _looks_like_api_key(value: str) -> bool:
    """API keys and tokens nearly always carry digits; a bare word is a variable, a setting or names a thing
    (`"send_message"`). A long mixed-case run without digits passes."""
    return _has_digit(value) or (len(value) >= 16 and value != value.lower() and value != value.upper())


def _is_snake_identifier(value: str) -> bool:
    """A lower_snake identifier: `force_zip64`, `user_password`."""
    return _IDENTIFIER.fullmatch(value) is not None and "_" in value and value == value.lower()


def _is_quoted_literal(value: str, finding_type: str) -> bool:
    if "{" in value and "}" in value:  # an f-string or a template fills it in
        return False
    if " " in value:
        # Tokens have no spaces; a passphrase may, but a help text or prompt reads like prose.
        return finding_type == FindingType.PASSWORD and _PROSE.search(value) is None
    if finding_type == FindingType.SECRET:
        return _looks_like_api_key(value)
    return True


def _is_unquoted_literal(
    text: str, assignment: Assignment, value: str, finding_type: str, key_starts_line: bool
) -> bool:
    if _reads_from_elsewhere(text, assignment, value):
        return False
    if assignment.operator == "space-unquoted":
        return _is_spaced_literal(value)
    if assignment.operator == "is":
        return _stands_out_in_prose(value)
    if finding_type == FindingType.SECRET:
        return _looks_like_api_key(value)
    if assignment.operator in (":", ":tight") and not key_starts_line and not _looks_random(value):
        return False  # prose: "a single pass: adjacent intervals"
    # snake_case without digits: a variable name in code
    return not (_is_snake_identifier(value) and not _has_digit(value))


def _reads_from_elsewhere(text: str, assignment: Assignment, value: str) -> bool:
    """Code that reads the secret from elsewhere: a call, a subscript or an attribute, or a variable named
    after a secret (`password = user_password`, `api_key=api_key`)."""
    following = text[assignment.end : assignment.end + 1]
    if following in ("(", "[") or _DOTTED.fullmatch(value.rstrip(":")):
        return True
    if _IDENTIFIER.fullmatch(value) is None or _has_digit(value):
        return False
    lowered = value.lower()
    return any(hint in lowered for hint in _REFERENCE_HINTS)


def _is_spaced_literal(value: str) -> bool:
    """A value separated from its key by a space only, unquoted: `reason=bad_password attempts=3` (the
    next word is another field), "pass force_zip64 to the writer" (prose naming an identifier) are not."""
    if not _has_digit(value) or not value[0].isalnum() or "=" in value:
        return False
    if _is_snake_identifier(value):
        return False
    return _stands_out_in_prose(value)


def _stands_out_in_prose(value: str) -> bool:
    """A value in a sentence (`the password is ...`) or after a bare space is a secret only when it looks
    random, is long enough, and is not a `host:port` or a time."""
    return _looks_random(value) and len(value) >= 6 and ":" not in value
