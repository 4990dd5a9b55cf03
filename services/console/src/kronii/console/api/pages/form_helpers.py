"""What the Captures, Decisions, Shell and Privacy pages share at the wire: a small urlencoded form
read from the body (the security edge has already capped its size and checked its CSRF token), and
the status a refused action answers with (a 4xx for the person's mistake, 503 when another service
did not answer; never a 500). Not a page: it has no PAGE."""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import Request
from kronii.foundation.errors import KroniiError

__all__ = ["answer_status", "form_fields", "status_of"]

_MAX_FIELDS = 20


async def form_fields(request: Request) -> dict[str, str]:
    """The form's fields, the first value of each (a plain form or htmx's hx-post)."""
    body = (await request.body()).decode("utf-8", "replace")
    try:
        parsed = parse_qs(body, keep_blank_values=True, max_num_fields=_MAX_FIELDS)
    except ValueError:
        return {}
    return {key: values[0] for key, values in parsed.items() if values}


def status_of(error: KroniiError) -> int:
    return error.http_status if error.http_status < 500 else 503


def answer_status(request: Request, status: int) -> int:
    """The status of an action's answer. htmx swaps in only a 2xx answer, so a refusal sent to the
    page's own htmx request (a boosted form: it carries the page's real Origin, which a plain form
    under Referrer-Policy no-referrer did not) comes as 200, its sentence on the page (role=alert);
    any other client gets the true 4xx/503."""
    return 200 if status >= 400 and request.headers.get("hx-request") == "true" else status
