"""One config file for every part of kronii: `$XDG_CONFIG_HOME/kronii/config.toml` (or the file
`KRONII_CONFIG` names). Its keys are the environment variables' names without their prefix, the
shared ones at the top, each service's in its own table, and the environment wins over the file:

    log_level = "DEBUG"            # KRONII_LOG_LEVEL
    stop_agents = true             # KRONII_STOP_AGENTS (kronii up)

    [pipeline]
    llm_backend = "openai"         # KRONII_PIPELINE_LLM_BACKEND
    llm_base_url = "http://127.0.0.1:8180/v1"

The file is read by every settings class (a pydantic-settings source placed after the environment),
so `kronii up`, each service and each command see the same values.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import AliasChoices
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

__all__ = [
    "ConfigFileError",
    "ConfigFileSource",
    "config_path",
    "file_key",
    "file_problems",
    "read_config",
    "section_of",
    "shared_key",
]


class ConfigFileError(ValueError):
    """The config file cannot be read or is not TOML; the message names the file and the line."""


def config_path() -> Path:
    named = os.environ.get("KRONII_CONFIG")
    if named:
        return Path(named).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "kronii" / "config.toml"


_cache: dict[tuple[str, int, int], dict[str, Any]] = {}


def read_config(path: Path | None = None) -> dict[str, Any]:
    """The file's tables, {} when there is no file. Read once per file version per process."""
    path = path or config_path()
    try:
        info = path.stat()
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise ConfigFileError(f"cannot read {path}: {error.strerror or error}") from None
    key = (str(path), info.st_mtime_ns, info.st_size)
    if key not in _cache:
        try:
            _cache[key] = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as error:
            raise ConfigFileError(f"{path} is not valid TOML: {error}") from None
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigFileError(f"cannot read {path}: {error}") from None
    return _cache[key]


def section_of(settings_cls: type[BaseSettings]) -> str | None:
    """The table of a settings class: `KRONII_PIPELINE_` is [pipeline]; `KRONII_` is the top."""
    prefix = str(settings_cls.model_config.get("env_prefix", "KRONII_")).upper()
    middle = prefix.removeprefix("KRONII_").strip("_")
    return middle.lower() or None


def shared_key(field: FieldInfo) -> str | None:
    """A shared setting's key at the top of the file (`data_dir` for KRONII_DATA_DIR), else None."""
    alias = field.validation_alias
    if isinstance(alias, AliasChoices) and alias.choices:
        first = str(alias.choices[0])
        if first.startswith("KRONII_"):
            return first.removeprefix("KRONII_").lower()
    return None


def file_key(settings_cls: type[BaseSettings], field_name: str, document: Mapping[str, Any]) -> str | None:
    """Where `document` sets this field ("[pipeline] llm_timeout_secs", "data_dir"), or None."""
    name = field_name
    field = settings_cls.model_fields.get(field_name)
    if field is None:  # pydantic names a shared field by its alias
        name = field_name.removeprefix("KRONII_").lower()
        return name if name in document and not isinstance(document[name], dict) else None
    shared = shared_key(field)
    if shared is not None:
        return shared if shared in document else None
    section = section_of(settings_cls)
    table = document.get(section, {}) if section else document
    if isinstance(table, dict) and name in table:
        return f"[{section}] {name}" if section else name
    return None


class ConfigFileSource(PydanticBaseSettingsSource):
    """The values of the config file for one settings class, under the names pydantic expects."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # __call__ does the work: the file is read once

    def __call__(self) -> dict[str, Any]:
        document = read_config()
        if not document:
            return {}
        section = section_of(self.settings_cls)
        table = document.get(section, {}) if section else document
        found: dict[str, Any] = {}
        for name, field in self.settings_cls.model_fields.items():
            shared = shared_key(field)
            if shared is not None:
                if shared in document and not isinstance(document[shared], dict):
                    found[str(field.validation_alias.choices[0])] = document[shared]  # type: ignore[union-attr]
            elif isinstance(table, dict) and name in table:
                found[name] = table[name]
        return found


def _suggest(word: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def file_problems(document: Mapping[str, Any], classes: Iterable[type[BaseSettings]]) -> list[str]:
    """Keys and tables of `document` that no settings class reads, as sentences."""
    top: set[str] = set()
    tables: dict[str, set[str]] = {}
    for settings_cls in classes:
        section = section_of(settings_cls)
        for name, field in settings_cls.model_fields.items():
            shared = shared_key(field)
            if shared is not None:
                top.add(shared)
            elif section is None:
                top.add(name)
            else:
                tables.setdefault(section, set()).add(name)
    problems = []
    for key, value in document.items():
        if isinstance(value, dict):
            if key not in tables:
                problems.append(f"[{key}] is not a part of kronii{_suggest(key, tables)}")
                continue
            for inner in value:
                if inner not in tables[key]:
                    problems.append(f"[{key}] {inner} is not a setting{_suggest(inner, tables[key])}")
        elif key not in top:
            problems.append(f"{key} is not a setting{_suggest(key, top | set(tables))}")
    return problems
