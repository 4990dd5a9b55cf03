"""Each table is declared once, in the code that uses it (a service's adapters, the audit log), and
the migrations are checked against those declarations on a real PostgreSQL: the schema they make
is the one the code declares, column by column, type by type, index by index."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pgvector.sqlalchemy  # noqa: F401  (the critic's vector type, for reflection)
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from kronii.foundation.urls import libpq_url
from kronii.stores.audit import AuditRow
from sqlalchemy import MetaData, Table, create_engine, inspect

SERVICES = ("sensor", "capture", "pipeline", "scheduler", "supervisor", "broker", "critic", "vision")


def _modules() -> Iterator[ModuleType]:
    for service in SERVICES:
        adapters = importlib.import_module(f"kronii.{service}.adapters")
        for info in pkgutil.iter_modules(adapters.__path__, f"{adapters.__name__}."):
            yield importlib.import_module(info.name)


def declared_tables() -> dict[str, list[Table]]:
    """Every Table the code declares, by name; a table declared twice shows as two entries."""
    audit = AuditRow.__table__
    assert isinstance(audit, Table)
    found: dict[str, list[Table]] = {audit.name: [audit]}
    for module in _modules():
        for value in vars(module).values():
            if isinstance(value, Table):
                tables = found.setdefault(value.name, [])
                if all(value is not other for other in tables):
                    tables.append(value)
    return found


def _sync_url(url: str) -> str:
    return "postgresql+psycopg://" + libpq_url(url).split("://", 1)[1]


@pytest.fixture(scope="module")
def declared() -> dict[str, list[Table]]:
    return declared_tables()


def test_every_table_is_declared_once(declared: dict[str, list[Table]]) -> None:
    twice = {name: len(tables) for name, tables in declared.items() if len(tables) > 1}
    assert twice == {}


def test_every_table_the_migrations_make_is_declared_in_the_code(
    migrated_database: str, declared: dict[str, list[Table]]
) -> None:
    engine = create_engine(_sync_url(migrated_database))
    try:
        made = set(inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()
    assert made == set(declared)


def test_the_migrations_make_the_schema_the_code_declares(
    migrated_database: str, declared: dict[str, list[Table]]
) -> None:
    metadata = MetaData()
    for tables in declared.values():
        tables[0].to_metadata(metadata)

    def ours(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
        return type_ != "table" or name in metadata.tables

    engine = create_engine(_sync_url(migrated_database))
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(
                connection, opts={"compare_type": True, "include_object": ours}
            )
            differences = compare_metadata(context, metadata)
    finally:
        engine.dispose()
    assert differences == []
