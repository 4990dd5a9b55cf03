"""Database access: SQLAlchemy 2 (async, psycopg 3) and Alembic migrations."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kronii.common.urls import sqlalchemy_url
from sqlalchemy import MetaData
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = [
    "Base",
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


def make_engine(url: str) -> AsyncEngine:
    return create_async_engine(sqlalchemy_url(url), pool_pre_ping=True, pool_size=5, max_overflow=5)


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
