"""Paths out of a record's texts for sharing (`kronii critic export`, redacted by default): every
path-like word becomes a placeholder, ``[PATH_1]``, ``[PATH_2]``, ..., the same path the same one
throughout one export, so a reader still sees that two commands ran in the same place without
learning its name. The secrets were masked when the record was kept; the person's other data (the
user name in a path, addresses) goes through the redaction engine after this.

A path-like word: one that holds a ``/`` (absolute, relative such as ``src/app.py``, ``./run``,
``../x``) or starts with ``~``. For a URL the scheme and host stay and what follows is masked.
Words are cut at blanks, quotes and the shell's operators, so ``--out=/srv/x``, ``"/srv/x"`` and
``PATH=/a:/b`` mask only their paths; a colon or full stop after a path (``cat: /etc/x: denied``)
stays where it was."""

from __future__ import annotations

import re

__all__ = ["PathMasker"]

_WORD = re.compile(r"[^\s'\"`;|&<>(){}=,]+")
_TRAILING = ":;.,!?"
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^/]*)(/.*)?$")


class PathMasker:
    """One per export: the placeholders are numbered in the order the paths are met."""

    def __init__(self) -> None:
        self._placeholders: dict[str, str] = {}

    def placeholder(self, path: str) -> str:
        known = self._placeholders.get(path)
        if known is None:
            known = f"[PATH_{len(self._placeholders) + 1}]"
            self._placeholders[path] = known
        return known

    def mask(self, text: str) -> str:
        """``text`` with each path-like word replaced by its placeholder."""
        if "/" not in text and "~" not in text:
            return text
        return _WORD.sub(self._word, text)

    def mask_path(self, path: str) -> str:
        """A field that is a path as a whole (a record's cwd): its placeholder, "" for none."""
        return self.placeholder(path.rstrip("/") or "/") if path else path

    def _word(self, match: re.Match[str]) -> str:
        word = match.group(0)
        core = word.rstrip(_TRAILING)
        tail = word[len(core) :]
        if not core or ("/" not in core and not core.startswith("~")):
            return word
        url = _URL.match(core)
        if url is not None:
            rest = url.group(2)
            return (
                url.group(1)
                + ("/" + self.placeholder(rest.rstrip("/")) if rest and rest != "/" else rest or "")
                + tail
            )
        return self.placeholder(core.rstrip("/") or "/") + tail
