"""The two shipped forms of kronii's GNOME Shell extension (kronii.desktop.gnome_extension): the legacy
`init()` form for GNOME 43 and 44 (run for real in test_gnome_focus_extension.py) and the ES-module form
for 45 and later (no GNOME 45 here: checked for what install picks and for the same bus interface), and
`kronii gnome-extension install`'s choice between them from `gnome-shell --version`."""

from __future__ import annotations

import importlib.resources
import json
import re

import pytest
from kronii.launcher.cli.exits import CommandError
from kronii.sensor.cli.gnome_extension import UUID, form_for

SHIPPED = importlib.resources.files("kronii.desktop") / "gnome_extension"


def _form(folder: str) -> tuple[dict[str, object], str]:
    base = (SHIPPED / folder / UUID) if folder else (SHIPPED / UUID)
    return json.loads((base / "metadata.json").read_text()), (base / "extension.js").read_text()


@pytest.mark.parametrize("version", ["43", "44", "45", "46", "47", "48"])
def test_install_picks_the_form_whose_metadata_names_the_running_shells_version(version: str) -> None:
    metadata, _code = _form(form_for(f"GNOME Shell {version}.1\n"))
    assert metadata["uuid"] == UUID
    assert version in metadata["shell-version"]  # type: ignore[operator]


def test_a_shell_older_than_43_or_an_unreadable_version_is_refused_with_a_sentence() -> None:
    with pytest.raises(CommandError, match="older than 43"):
        form_for("GNOME Shell 42.5")
    with pytest.raises(CommandError, match="cannot read"):
        form_for("no shell here")


def test_both_forms_export_the_same_bus_interface_and_nothing_else() -> None:
    legacy, modules = _form("")[1], _form("esm")[1]
    interface = re.compile(r"const INTERFACE = `.*?`;", re.DOTALL)
    assert interface.search(legacy).group(0) == interface.search(modules).group(0)  # type: ignore[union-attr]
    for code in (legacy, modules):
        assert "'org.kronii.Shell1'" in code and "'/org/kronii/Shell1'" in code
        assert re.findall(r'<(method|signal) name="(\w+)"', code) == [
            ("method", "GetFocus"),
            ("signal", "FocusChanged"),
        ]
    assert "function init()" in legacy and "export default class" in modules
