"""Filters for values that sit where a secret would, but are not one: placeholders, masks, templates."""

from __future__ import annotations

import re

__all__ = ["is_placeholder_value"]

_PLACEHOLDER_WORDS = frozenset(
    {
        "",
        "none",
        "null",
        "nil",
        "undefined",
        "true",
        "false",
        "yes",
        "no",
        "required",
        "optional",
        "empty",
        "n/a",
        "na",
        "tbd",
        "todo",
        "hidden",
        "masked",
        "redacted",
        "removed",
        "secret",
        "password",
        "passwd",
        "token",
        "apikey",
        "api_key",
        "string",
        "str",
        "int",
        "bool",
        "bytes",
        "text",
        "value",
        "placeholder",
        "env",
        "environ",
        "os.environ",
        "process.env",
    }
)
_TEMPLATE = re.compile(
    r"""
    \$\{.*\}            # ${VAR}, ${VAR:-default}
    | \$[A-Za-z_]\w*    # $VAR
    | \$\(.*\)          # $(command)
    | %[A-Za-z_]\w*%    # %VAR% (Windows)
    | \{\{.*\}\}        # {{ template }}
    | \{[^{}]*\}        # {name}, {}
    | <[^<>]*>          # <your-token>
    | \[[^\[\]]*\]      # [REDACTED], [EMAIL_1]
    | %\(?\w*\)?[sdr]   # %s, %(name)s
    """,
    re.VERBOSE,
)
# Runs of one masking character: "********", "xxxxxxxx", "•••••".
_MASK = re.compile(r"([*xX•●·.#_\-~?])\1*")
_YOUR = re.compile(r"(?i)(?:your|insert|enter|replace)[_\-. ]?[a-z_\-. ]*")
_WORD_ONLY_HINT = re.compile(r"(?i).*(?:_here|-here|placeholder|redacted|xxxx|\*\*\*).*")


def is_placeholder_value(value: str) -> bool:
    stripped = value.strip()
    lowered = stripped.lower()
    if lowered in _PLACEHOLDER_WORDS:
        return True
    if _TEMPLATE.fullmatch(stripped) or _MASK.fullmatch(stripped):
        return True
    if _WORD_ONLY_HINT.fullmatch(stripped):
        return True
    # "your-api-key", "YOUR_TOKEN_HERE", "insert token": only letters and separators after such a word.
    return _YOUR.fullmatch(stripped) is not None
