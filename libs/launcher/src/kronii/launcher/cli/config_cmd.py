"""`kronii config path|show|check`: where the config file is, what every setting is and where its
value comes from (the environment, the file, or the default), and whether the file is right."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import click
from kronii.launcher.cli.groups import SuggestingGroup

if TYPE_CHECKING:  # pydantic is imported by the commands that run, not by `kronii --help`
    from pydantic.fields import FieldInfo
    from pydantic_settings import BaseSettings

__all__ = ["config", "is_secret"]

_MASK = "********"
# A plain string setting named as a credential is masked too, until its field says what it is: a
# credential typed as `str` must never be printed (fail closed). Numbers and switches never are.
_CREDENTIAL_SUFFIXES = ("_token", "_password", "_api_key", "_secret")


def _classes() -> list[type[BaseSettings]]:
    from kronii.runtime.services import installed_services
    from kronii.runtime.up_settings import LauncherSettings

    return [LauncherSettings, *(spec.settings_cls for spec in installed_services())]


def is_secret(name: str, field: FieldInfo) -> bool:
    """Whether a setting holds a secret: its type says so (SecretStr, SecretBytes), its field is marked
    (`json_schema_extra={"secret": True}`), or it is a string named as a credential."""
    from pydantic import SecretBytes, SecretStr

    types = (field.annotation, *get_args(field.annotation))
    if SecretStr in types or SecretBytes in types:
        return True
    extra = field.json_schema_extra
    if isinstance(extra, dict) and extra.get("secret"):
        return True
    return str in types and name.endswith(_CREDENTIAL_SUFFIXES)


def _shown(value: Any, secret: bool) -> Any:
    if value is None or value == "":
        return value
    if secret:
        return _MASK
    if isinstance(value, str) and "://" in value and "@" in value:
        from urllib.parse import urlsplit

        parts = urlsplit(value)
        if parts.password:
            return value.replace(f":{parts.password}@", f":{_MASK}@", 1)
    if isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _load_each_good_value(
    settings_cls: type[BaseSettings],
) -> tuple[BaseSettings, dict[str, tuple[Any, str]]]:
    """The settings with each bad value replaced by its default, and for each bad value (by field name)
    what was given and why it is refused: one bad value does not hide the others."""
    from pydantic import ValidationError

    bad: dict[str, tuple[Any, str]] = {}
    overrides: dict[str, Any] = {}
    while True:
        try:
            return settings_cls(**overrides), bad
        except ValidationError as error:
            refused = _refused_fields(settings_cls, error.errors())
            if not refused or any(key in overrides for key, _, _ in refused):
                raise
            for key, name, (given, why) in refused:
                field = settings_cls.model_fields[name]
                bad[name] = (given, why)
                overrides[key] = field.get_default(call_default_factory=True)


def _refused_fields(
    settings_cls: type[BaseSettings], errors: list[Any]
) -> list[tuple[str, str, tuple[Any, str]]]:
    """(the key to override, the field, (what was given, why)) for each value an error refuses; a check
    of several values together (a model validator) is put on each field whose variable it names."""
    from kronii.foundation.settings import _variable_name

    fields = settings_cls.model_fields
    aliases = {_alias(field): name for name, field in fields.items() if _alias(field)}
    refused = []
    for item in errors:
        key = str(item["loc"][0]) if item["loc"] else ""
        if key:
            name = aliases.get(key, key)
            if name in fields:
                refused.append((key, name, (item.get("input"), str(item["msg"]))))
            continue
        given = item.get("input") if isinstance(item.get("input"), dict) else {}
        for name in fields:
            variable = _variable_name(settings_cls, name)
            if variable in str(item["msg"]):
                key = _alias(fields[name]) or name
                refused.append((key, name, (given.get(key, given.get(name)), str(item["msg"]))))
    return refused


def _alias(field: FieldInfo) -> str | None:
    from pydantic import AliasChoices

    alias = field.validation_alias
    if isinstance(alias, AliasChoices) and alias.choices:
        return str(alias.choices[0])
    return alias if isinstance(alias, str) else None


def _settings_table(settings_cls: type[BaseSettings], document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    from kronii.foundation.config_file import file_key, section_of, shared_key
    from kronii.foundation.settings import _variable_name

    settings, bad = _load_each_good_value(settings_cls)
    section = section_of(settings_cls)
    rows: dict[str, dict[str, Any]] = {}
    for name, field in settings_cls.model_fields.items():
        if section is not None and shared_key(field) is not None:
            continue  # shared settings are shown once, at the top
        variable = _variable_name(settings_cls, name)
        origin = (
            "env"
            if variable in os.environ
            else ("file" if file_key(settings_cls, name, document) else "default")
        )
        secret = is_secret(name, field)
        if name in bad:
            given, why = bad[name]
            rows[name] = {"value": _shown(given, secret), "from": origin, "variable": variable, "error": why}
        else:
            rows[name] = {
                "value": _shown(getattr(settings, name), secret),
                "from": origin,
                "variable": variable,
            }
    return rows


@contextlib.contextmanager
def _without_file() -> Iterator[None]:
    """Settings from the environment and defaults only (for a file that cannot be read)."""
    before = os.environ.get("KRONII_CONFIG")
    os.environ["KRONII_CONFIG"] = os.devnull
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("KRONII_CONFIG", None)
        else:
            os.environ["KRONII_CONFIG"] = before


def _sections() -> tuple[Path, str, dict[str, dict[str, dict[str, Any]]]]:
    """The config file, why it could not be read ("" if it could), and every setting by section."""
    from kronii.foundation.config_file import ConfigFileError, config_path, read_config, section_of

    path = config_path()
    try:
        document, unreadable = read_config(path), ""
    except ConfigFileError as error:
        document, unreadable = {}, str(error)
    with _without_file() if unreadable else contextlib.nullcontext():
        sections = {section_of(cls) or "": _settings_table(cls, document) for cls in _classes()}
    return path, unreadable, sections


def _show(as_json: bool) -> int:
    path, unreadable, sections = _sections()
    failed = bool(unreadable) or any("error" in row for rows in sections.values() for row in rows.values())
    if as_json:
        document = {"path": str(path), "exists": path.exists(), "sections": sections}
        if unreadable:
            document["error"] = unreadable
        print(json.dumps(document, indent=2))
        return 2 if failed else 0
    print(f"# {path}{'' if path.exists() else ' (no such file: environment and defaults only)'}")
    if unreadable:
        print(f"# ERROR: {unreadable}; shown without it (environment and defaults only)")
    for section, rows in sections.items():
        _print_section(section, rows)
    if failed:
        print(
            "kronii: config: a value is wrong (marked ERROR above); `kronii config check` says why",
            file=sys.stderr,
        )
    return 2 if failed else 0


def _print_section(section: str, rows: dict[str, dict[str, Any]]) -> None:
    """One section as TOML a person can copy, each line saying where its value comes from."""
    if section:
        print(f"\n[{section}]")
    width = max((len(name) for name in rows), default=0)
    for name, row in rows.items():
        value = json.dumps(row["value"]) if row["value"] is not None else "(unset)"
        error = f"  ERROR: {row['error']}" if "error" in row else ""
        print(f"{name:<{width}} = {value}  # {row['from']}: {row['variable']}{error}")


def _check() -> int:
    from kronii.foundation.config_file import ConfigFileError, config_path, file_problems, read_config
    from kronii.foundation.settings import SettingsError, load_settings

    path = config_path()
    if not path.exists():
        print(f"no config file at {path}: kronii runs on the environment and its defaults")
        return 0
    try:
        document = read_config(path)
    except ConfigFileError as error:
        print(f"kronii: config: {error}", file=sys.stderr)
        return 2
    classes = _classes()
    problems = file_problems(document, classes)
    for settings_cls in classes:
        try:
            load_settings(settings_cls)
        except SettingsError as error:
            problems.append(error.message.removeprefix("kronii: cannot start: "))
    if problems:
        for problem in problems:
            print(f"kronii: config: {problem}", file=sys.stderr)
        return 2
    print(f"{path} is valid")
    return 0


@click.group(
    "config", cls=SuggestingGroup, help="the config file: where it is, what it sets, whether it is right"
)
def config() -> None:
    pass


@config.command(
    "path", help="print the config file's path (KRONII_CONFIG, else $XDG_CONFIG_HOME/kronii/config.toml)"
)
def config_path_command() -> None:
    from kronii.foundation.config_file import config_path

    click.echo(config_path())


@config.command("show", help="every setting, its value and where it comes from (env, file, default)")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of TOML-like text")
def config_show(as_json: bool) -> None:
    raise SystemExit(_show(as_json))


@config.command(
    "check", help="check the file: TOML, known keys, valid values (exit 2 with a sentence each if not)"
)
def config_check() -> None:
    raise SystemExit(_check())
