"""Connection URLs: driver selection for SQLAlchemy and libpq, and printing without secrets."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["libpq_url", "redact_url", "sqlalchemy_url"]


def sqlalchemy_url(url: str) -> str:
    """Accept plain postgresql:// URLs and select the psycopg 3 driver."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    raise ValueError("the database URL must start with postgresql://")


def libpq_url(url: str) -> str:
    """The same database as a plain postgresql:// URL, for psycopg and libpq tools."""
    return "postgresql://" + sqlalchemy_url(url).removeprefix("postgresql+psycopg://")


def redact_url(url: str) -> str:
    """The URL without its password or token, for printing."""
    parts = urlsplit(url)
    if parts.password is None and parts.username is None:
        return url
    user = parts.username if parts.password is not None else None
    host = parts.hostname or ""
    netloc = f"{user}@{host}" if user else host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
