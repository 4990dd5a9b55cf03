"""JSON over HTTP with the standard library, for commands and the launcher: `kronii up` and `kronii
status` ask /readyz many times, and `kronii agents` makes one or two calls; none of them should pay for
importing (or keep resident) a full HTTP client. Transport failures are OSError, bodies that are not
JSON come back as None with their text."""

from __future__ import annotations

import http.client
import json
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

__all__ = ["JsonClient", "JsonResponse", "get_json"]


@dataclass(frozen=True)
class JsonResponse:
    status: int
    body: Any  # the decoded JSON, or None when the body is not JSON
    text: str


class _UnixConnection(http.client.HTTPConnection):
    """HTTP/1.1 over a Unix socket (the broker's door for the desktop user)."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class JsonClient:
    """``base_url`` is http(s)://host:port, or ``unix_socket`` names a Unix socket to speak HTTP over."""

    def __init__(
        self,
        base_url: str,
        timeout: float,
        headers: dict[str, str] | None = None,
        *,
        unix_socket: str | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.headers = dict(headers or {})
        self.unix_socket = unix_socket

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
        connection: http.client.HTTPConnection
        if self.unix_socket:
            connection = _UnixConnection(self.unix_socket, timeout or self.timeout)
        else:
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
