"""Database access: SQLAlchemy 2 (async, psycopg 3) and Alembic migrations."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kronii.foundation.urls import sqlalchemy_url
from sqlalchemy import MetaData
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = [
    "Base",
    "EngineShare",
    "alembic_config",
    "head_revision",
    "make_engine",
    "make_sessionmaker",
    "migrate_down",
    "migrate_up",
    "sqlalchemy_url",
]

MIGRATIONS_DIR = Path(__file__).with_name("migrations")


class Base(DeclarativeBase):
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(column_0_label)s",
            "uq": "uq_%(table_name)s_%(column_0_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )


# Connections one service may hold at once.
CONNECTIONS_PER_SERVICE = 10
# Connections a pool keeps open between uses: a service of its own keeps five; the services that share
# a process (kronii up's desktop default) keep two between them, enough for their steady pace of short
# queries, and a burst opens more (about 5 ms each). Each one is a PostgreSQL backend of about 3 MB.
IDLE_CONNECTIONS_ALONE = 5
IDLE_CONNECTIONS_SHARED = 2


def make_engine(url: str, *, services: int = 1) -> AsyncEngine:
    """A pool for `services` services: at most CONNECTIONS_PER_SERVICE connections each."""
    idle = IDLE_CONNECTIONS_ALONE if services == 1 else IDLE_CONNECTIONS_SHARED
    return create_async_engine(
        sqlalchemy_url(url),
        pool_pre_ping=True,
        pool_size=idle,
        max_overflow=CONNECTIONS_PER_SERVICE * services - idle,
    )


class EngineShare:
    """The PostgreSQL pools of one process, one per database URL, shared by the services that run in it.

    Under `kronii up` every service shares one process by default; with a pool each, the idle
    connections they kept added up to a dozen PostgreSQL backends. Shared, the process keeps
    IDLE_CONNECTIONS_SHARED, and the cap is still CONNECTIONS_PER_SERVICE per service. A pool is
    disposed when the last service that holds it lets it go (a service started again takes it back
    first). One share belongs to one event loop."""

    def __init__(self, services: int = 1) -> None:
        self.services = services
        self._held: dict[str, tuple[AsyncEngine, int]] = {}

    def acquire(self, url: str) -> AsyncEngine:
        engine, holders = self._held.get(url) or (make_engine(url, services=self.services), 0)
        self._held[url] = (engine, holders + 1)
        return engine

    async def release(self, engine: AsyncEngine) -> None:
        url = next((url for url, (held, _) in self._held.items() if held is engine), None)
        if url is not None:
            holders = self._held[url][1] - 1
            if holders > 0:
                self._held[url] = (engine, holders)
                return
            del self._held[url]
        await engine.dispose()


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker:  # type: ignore[type-arg]
    return async_sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str) -> Config:
    from alembic.config import Config  # alembic is slow to import; only migrations need it

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # Alembic's ini interpolation treats % specially; URL-encoded passwords contain it.
    config.set_main_option("sqlalchemy.url", sqlalchemy_url(url).replace("%", "%%"))
    return config


def migrate_up(url: str, revision: str = "head") -> None:
    from alembic import command

    command.upgrade(alembic_config(url), revision)


def migrate_down(url: str, revision: str) -> None:
    from alembic import command

    command.downgrade(alembic_config(url), revision)


def head_revision() -> str:
    """The newest migration's revision id: what `kronii migrate` brings a database to."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()
    if head is None:
        raise RuntimeError("the migrations directory has no head revision")
    return head
