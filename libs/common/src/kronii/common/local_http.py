"""JSON over HTTP with the standard library, for commands and the launcher: `kronii up` and `kronii
status` ask /readyz many times, and `kronii agents` makes one or two calls; none of them should pay for
importing (or keep resident) a full HTTP client. Transport failures are OSError, bodies that are not
JSON come back as None with their text."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

__all__ = ["JsonClient", "JsonResponse", "get_json"]


@dataclass(frozen=True)
class JsonResponse:
    status: int
    body: Any  # the decoded JSON, or None when the body is not JSON
    text: str


class JsonClient:
    def __init__(self, base_url: str, timeout: float, headers: dict[str, str] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.headers = dict(headers or {})

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> JsonResponse:
        parts = urlsplit(self.base_url + path)
        target = (parts.path or "/") + (f"?{urlencode(params)}" if params else "")
        headers = {"accept": "application/json", **self.headers}
        payload = None
        if json is not None:
            payload = _encode(json)
            headers["content-type"] = "application/json"
        connection = _connection(
            parts.scheme, parts.hostname or "127.0.0.1", parts.port, timeout or self.timeout
        )
        try:
            connection.request(method, target, body=payload, headers=headers)
            response = connection.getresponse()
            text = response.read().decode("utf-8", errors="replace")
        except http.client.HTTPException as error:  # a broken answer, e.g. closed mid-response
            raise OSError(f"{type(error).__name__}: {error}") from None
        finally:
            connection.close()
        return JsonResponse(response.status, _decode(text), text)

    def get(self, path: str, **kwargs: Any) -> JsonResponse:
        return self.request("GET", path, **kwargs)


def get_json(url: str, timeout: float) -> tuple[int, Any]:
    """(status, decoded body) of a GET. Raises OSError when nothing answers, ValueError for a body that is
    not JSON."""
    parts = urlsplit(url)
    answer = JsonClient(f"{parts.scheme}://{parts.netloc}", timeout).get(parts.path or "/")
    if answer.body is None:
        raise ValueError(f"not JSON: {answer.text[:80]!r}")
    return answer.status, answer.body


def _connection(scheme: str, host: str, port: int | None, timeout: float) -> http.client.HTTPConnection:
    if scheme == "https":
        return http.client.HTTPSConnection(host, port or 443, timeout=timeout)
    return http.client.HTTPConnection(host, port or 80, timeout=timeout)


def _encode(value: Any) -> bytes:
    return json.dumps(value).encode()


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
