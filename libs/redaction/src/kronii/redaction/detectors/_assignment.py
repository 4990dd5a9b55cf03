"""Parsing of `key <operator> value` around a keyword hit, shared by the keyword detector.

Handles the spellings seen in code, config and terminals: `KEY=value`, `key: value`, `"key": "value"`,
`key => 'value'`, `key := value`, `key == "value"`, `--key value`, `--key=value`, `<key>value</key>`,
`key: str = "value"` (a type annotation), `KEY value` when the value is quoted (SQL, Dockerfile), and
`key is value` in chat.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Assignment", "parse_assignment"]

_SPACES = re.compile(r"[ \t]*")
_OPERATOR = re.compile(r"[ \t]*(:=|=>|==|\?=|!=|=|:(?![:/\\]))[ \t]*")
_CONNECTOR = re.compile(
    r"[ \t]+(?:is|was|are|=)(?:[ \t]+(?:still|now|currently|just))?[ \t]+:?[ \t]*", re.IGNORECASE
)
_ANNOTATION = re.compile(r"[A-Za-z_][\w.\[\], |]{0,40}?[ \t]*=(?!=)[ \t]*")
# An unquoted value ends at punctuation, the full-width kind CJK text writes too (a password after a
# full-width colon or equals sign): its colon, comma, semicolon, equals sign, brackets and full stops.
_FULL_WIDTH_STOPS = (
    "\N{FULLWIDTH COLON}\N{FULLWIDTH COMMA}\N{FULLWIDTH SEMICOLON}\N{FULLWIDTH EQUALS SIGN}"
    "\N{IDEOGRAPHIC COMMA}\N{IDEOGRAPHIC FULL STOP}\N{LEFT CORNER BRACKET}\N{RIGHT CORNER BRACKET}"
    "\N{LEFT WHITE CORNER BRACKET}\N{RIGHT WHITE CORNER BRACKET}\N{FULLWIDTH LEFT PARENTHESIS}"
    "\N{FULLWIDTH RIGHT PARENTHESIS}\N{LEFT BLACK LENTICULAR BRACKET}\N{RIGHT BLACK LENTICULAR BRACKET}"
    "\N{LEFT DOUBLE ANGLE BRACKET}\N{RIGHT DOUBLE ANGLE BRACKET}"
)
_UNQUOTED = re.compile(f"[^\\s\"'`,;(){{}}\\[\\]<>{_FULL_WIDTH_STOPS}]+")
# In a URL query "&" separates parameters; elsewhere (connection strings, .env files) it is part of the value.
_UNQUOTED_IN_QUERY = re.compile(f"[^\\s\"'`,;&(){{}}\\[\\]<>#{_FULL_WIDTH_STOPS}]+")
_STRING_PREFIX = re.compile(r"[bBfFrRuU]{1,2}(?=[\"'])")
_QUOTES = "\"'`"
_MAX_VALUE = 512


@dataclass(frozen=True, slots=True)
class Assignment:
    start: int  # of the value
    end: int
    quoted: bool
    operator: str  # "=", "==", ":", ":tight", "flag", "space", "space-unquoted", "is", "xml"

    @property
    def value_slice(self) -> slice:
        return slice(self.start, self.end)


def parse_assignment(text: str, key_start: int, key_end: int, *, is_flag: bool) -> Assignment | None:
    """The value assigned to the key text[key_start:key_end], or None when no value follows it."""
    if _opens_xml_element(text, key_start, key_end):
        close = text.find("</", key_end + 1, key_end + 1 + _MAX_VALUE)
        return None if close < 0 else Assignment(key_end + 1, close, True, "xml")
    in_query = key_start > 0 and text[key_start - 1] in "?&"
    position = _past_key_closers(text, key_end)
    operator_match = _OPERATOR.match(text, position)
    if operator_match is not None:
        return _operator_value(text, operator_match, key_end, in_query)
    connector = _CONNECTOR.match(text, position)
    if connector is not None:
        return _value(text, connector.end(), "is")
    return _spaced_value(text, position, is_flag=is_flag)


def _opens_xml_element(text: str, key_start: int, key_end: int) -> bool:
    """The key is an element name: `<key>value</key>`."""
    return key_start > 0 and text[key_start - 1] == "<" and text.startswith(">", key_end)


def _past_key_closers(text: str, position: int) -> int:
    """Past what closes a quoted key (`"password":`) or a subscript (`env["TOKEN"] =`) before the operator."""
    while position < len(text) and text[position] in "\"'`]":
        position += 1
    return position


def _operator_value(
    text: str, operator_match: re.Match[str], key_end: int, in_query: bool
) -> Assignment | None:
    """The value after an operator (`=`, `:`, `==`, `=>`, `:=`, `?=`); `!=` assigns nothing."""
    operator = operator_match.group(1)
    if operator == "!=":
        return None
    position = operator_match.end()
    if operator == ":":
        position, operator = _colon_reading(text, operator_match, key_end)
    return _value(text, position, operator if operator in (":", ":tight", "==") else "=", in_query)


def _colon_reading(text: str, operator_match: re.Match[str], key_end: int) -> tuple[int, str]:
    """Where the value after a colon starts and how the colon reads: a type annotation (`key: str = "v"`)
    assigns with its `=`; a colon with no space on either side (`passwd:gecos`, `pass:xyz`) is ":tight"."""
    position = operator_match.end()
    annotation = _ANNOTATION.match(text, position)
    if annotation is not None and not _starts_quoted(text, position):
        return annotation.end(), "="
    tight = operator_match.end() == operator_match.end(1) and operator_match.start(1) == key_end
    return position, ":tight" if tight else ":"


def _spaced_value(text: str, position: int, *, is_flag: bool) -> Assignment | None:
    """The value separated from the key by blanks only: `--key value`, or `KEY 'value'` (SQL, Dockerfile)."""
    spaces = _SPACES.match(text, position)
    if spaces is None or spaces.end() == position:
        return None
    position = spaces.end()
    if is_flag:
        return _value(text, position, "flag")
    if _starts_quoted(text, position):
        return _value(text, position, "space")
    return _value(text, position, "space-unquoted")


def _starts_quoted(text: str, position: int) -> bool:
    prefix = _STRING_PREFIX.match(text, position)
    if prefix is not None:
        position = prefix.end()
    return position < len(text) and text[position] in _QUOTES


def _value(text: str, position: int, operator: str, in_query: bool = False) -> Assignment | None:
    prefix = _STRING_PREFIX.match(text, position)
    if prefix is not None:
        position = prefix.end()
    if position >= len(text):
        return None
    quote = text[position]
    if quote in _QUOTES:
        close = _closing_quote(text, position + 1, quote)
        if close is None:
            return None
        return Assignment(position + 1, close, True, operator)
    unquoted = (_UNQUOTED_IN_QUERY if in_query else _UNQUOTED).match(text, position)
    if unquoted is None:
        return None
    return Assignment(position, min(unquoted.end(), position + _MAX_VALUE), False, operator)


def _closing_quote(text: str, position: int, quote: str) -> int | None:
    limit = min(len(text), position + _MAX_VALUE)
    index = position
    while index < limit:
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == quote:
            return index
        if char == "\n":
            return None
        index += 1
    return None
