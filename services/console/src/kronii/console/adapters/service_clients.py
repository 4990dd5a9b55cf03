"""HTTP to the other kronii services by name, at the port each one is configured with (its own
settings, as `kronii up` gives them) or at a URL the console's settings name. Every failure is one
typed error a page shows as a sentence, never a 500."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import httpx
from kronii.console.ports import ServiceNotAnswering

__all__ = ["HttpServiceClients", "service_url"]

log = logging.getLogger(__name__)


def service_url(name: str, overrides: Mapping[str, str]) -> str:
    """Where `name` answers: the console's override, else its installed spec's configured port."""
    if name in overrides:
        return overrides[name].rstrip("/")
    from kronii.foundation.settings import load_settings
    from kronii.runtime.services import installed_services

    for spec in installed_services():
        if spec.name == name:
            settings = load_settings(spec.settings_cls)
            # A wildcard bind is reached on loopback (as `kronii status` does).
            host = "127.0.0.1" if settings.host in ("0.0.0.0", "", "::") else settings.host  # noqa: S104
            return f"http://{host}:{settings.http_port}"
    raise ServiceNotAnswering(name, "it is not installed here")


def _reason(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        return str(body["detail"])
    return f"HTTP {response.status_code}"


class HttpServiceClients:
    """`get_json`, `post_json`, `delete_json` to another service; one pooled client for all of them."""

    def __init__(self, overrides: Mapping[str, str], *, api_token: str | None, timeout_secs: float) -> None:
        self._overrides = dict(overrides)
        self._urls: dict[str, str] = {}
        headers = {"accept": "application/json"}
        if api_token:
            headers["authorization"] = f"Bearer {api_token}"
        self._client = httpx.AsyncClient(headers=headers, timeout=timeout_secs)

    def url(self, service: str) -> str:
        if service not in self._urls:
            self._urls[service] = service_url(service, self._overrides)
        return self._urls[service]

    async def get_json(self, service: str, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return await self._call("GET", service, path, params=params)

    async def post_json(self, service: str, path: str, body: Any = None) -> Any:
        return await self._call("POST", service, path, body=body)

    async def delete_json(self, service: str, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return await self._call("DELETE", service, path, params=params)

    async def _call(
        self,
        method: str,
        service: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> Any:
        query = {key: value for key, value in (params or {}).items() if value is not None}
        try:
            response = await self._client.request(method, self.url(service) + path, params=query, json=body)
        except httpx.TimeoutException:
            raise ServiceNotAnswering(service, "it did not answer in time") from None
        except httpx.HTTPError as error:
            log.info("%s %s%s failed: %s", method, service, path, error)
            raise ServiceNotAnswering(service, "it cannot be reached (is `kronii up` running it?)") from None
        if response.status_code >= 400:
            raise ServiceNotAnswering(service, _reason(response), status=response.status_code)
        try:
            return response.json()
        except ValueError:
            raise ServiceNotAnswering(
                service, "its answer is not JSON", status=response.status_code
            ) from None

    async def close(self) -> None:
        await self._client.aclose()
