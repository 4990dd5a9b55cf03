"""`kronii config path|show|check`: where the config file is, what every setting is and where its
value comes from (the environment, the file, or the default), and whether the file is right."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # pydantic is imported by the commands that run, not by `kronii --help`
    from pydantic_settings import BaseSettings

__all__ = ["config"]

_SECRET_WORDS = ("token", "password", "api_key", "secret")


def _classes() -> list[type[BaseSettings]]:
    from kronii.common.services import installed_services
    from kronii.common.up_settings import LauncherSettings

    return [LauncherSettings, *(spec.settings_cls for spec in installed_services())]


def _shown(name: str, value: Any) -> Any:
    from pydantic import SecretStr

    if isinstance(value, SecretStr) or (value and any(word in name for word in _SECRET_WORDS)):
        return "********"
    if isinstance(value, str) and "://" in value and "@" in value:
        from urllib.parse import urlsplit

        parts = urlsplit(value)
        if parts.password:
            return value.replace(f":{parts.password}@", ":********@", 1)
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def _settings_table(settings_cls: type[BaseSettings], document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    from kronii.common.config_file import file_key, section_of, shared_key
    from kronii.common.settings import _variable_name, load_settings

    settings = load_settings(settings_cls)
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
        rows[name] = {"value": _shown(name, getattr(settings, name)), "from": origin, "variable": variable}
    return rows


def _show(as_json: bool) -> int:
    from kronii.common.config_file import config_path, read_config, section_of

    path = config_path()
    document = read_config(path)
    sections = {section_of(cls) or "": _settings_table(cls, document) for cls in _classes()}
    if as_json:
        print(json.dumps({"path": str(path), "exists": path.exists(), "sections": sections}, indent=2))
        return 0
    print(f"# {path}{'' if path.exists() else ' (no such file: environment and defaults only)'}")
    for section, rows in sections.items():
        if section:
            print(f"\n[{section}]")
        width = max((len(name) for name in rows), default=0)
        for name, row in rows.items():
            value = json.dumps(row["value"]) if row["value"] is not None else "(unset)"
            print(f"{name:<{width}} = {value}  # {row['from']}: {row['variable']}")
    return 0


def _check() -> int:
    from kronii.common.config_file import ConfigFileError, config_path, file_problems, read_config
    from kronii.common.settings import SettingsError, load_settings

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


@click.group("config", help="the config file: where it is, what it sets, whether it is right")
def config() -> None:
    pass


@config.command(
    "path", help="print the config file's path (KRONII_CONFIG, else $XDG_CONFIG_HOME/kronii/config.toml)"
)
def config_path_command() -> None:
    from kronii.common.config_file import config_path

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
