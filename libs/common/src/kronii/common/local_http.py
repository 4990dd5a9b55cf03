"""A GET of a local service's JSON with the standard library: for `kronii up` and `kronii status`, which
ask /readyz many times and should not load (or keep resident) a full HTTP client to do it."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

__all__ = ["get_json"]


def get_json(url: str, timeout: float) -> tuple[int, Any]:
    """(status, decoded body). Raises OSError when nothing answers, ValueError for a body that is not JSON."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=timeout)
    try:
        connection.request("GET", parts.path or "/")
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    except http.client.HTTPException as error:  # a broken answer, e.g. the server closed mid-response
        raise OSError(f"{type(error).__name__}: {error}") from None
    finally:
        connection.close()
