"""Keep filesystem paths out of the capture service's log lines.

Libraries the service uses (the master key file provider, the vault's and socket's error reports)
name files in their log messages; this process promises that no log line names a path. A filter on
the root logger's handlers replaces every absolute path in a formatted message with "<path>".
"""

from __future__ import annotations

import logging
import re

__all__ = ["PathScrubber", "install_path_scrubber", "scrub_paths"]

# An absolute path: a slash not preceded by a word, scheme or path character (so the path part of
# "http://host/x" and ratios like "3/4" are left alone), then one or more segments.
_ABSOLUTE_PATH = re.compile(r"(?<![\w:/.\-~])/(?:[\w.@+\-]+/?)+")


def scrub_paths(text: str) -> str:
    return _ABSOLUTE_PATH.sub("<path>", text)


class PathScrubber(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = scrub_paths(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[1] is not None:
            # Tracebacks name source files, which is fine, but an exception's text may name data.
            record.exc_text = scrub_paths(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            # The redaction filter ran first and left only the (redacted) text of the traceback.
            record.exc_text = scrub_paths(record.exc_text)
        return True


def install_path_scrubber() -> None:
    """Add the filter to every handler of the root logger (idempotent)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(item, PathScrubber) for item in handler.filters):
            handler.addFilter(PathScrubber())
