"""The one `kronii` wheel a person installs from a clone (`pipx install .`, `uv tool install .`, `pip install .`).

The root pyproject.toml builds a single wheel carrying every workspace member's part of the `kronii.*`
namespace (libs/* and services/*, the generated gRPC code of libs/api included), with the members'
third-party dependencies and entry points copied in (its console script is the members', taken at build
time by scripts/build_metadata.py). The first tests keep those copies in step with the members; the last
one builds the wheel with scripts/build_wheel.sh, installs it into a fresh virtual environment
(dependencies from the configured package index) and runs `kronii` from there, away from the work tree.
It takes 15 to 25 s, so it runs in the default suite.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEMBERS = sorted([*(ROOT / "libs").glob("*/pyproject.toml"), *(ROOT / "services").glob("*/pyproject.toml")])
GROUPS = ("kronii.commands", "kronii.services")
# What a person expects `kronii --help` to offer once the wheel is installed: the built-in commands and the
# services' ones (entry points of the kronii.commands group).
COMMANDS = ("agents", "capture", "keys", "replay", "record", "redact", "up", "status", "audit", "migrate")


def _load(path: Path) -> dict[str, Any]:
    with path.open("rb") as handle:
        return tomllib.load(handle)


def _name(requirement: str) -> str:
    """The normalised distribution name of a PEP 508 requirement string."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


ROOT_PROJECT = _load(ROOT / "pyproject.toml")
MEMBER_PROJECTS = {path.parent.relative_to(ROOT).as_posix(): _load(path)["project"] for path in MEMBERS}
MEMBER_NAMES = {_name(project["name"]) for project in MEMBER_PROJECTS.values()}


def test_the_wheel_carries_every_members_namespace_part() -> None:
    packages = ROOT_PROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    assert sorted(packages) == sorted(f"{member}/src/kronii" for member in MEMBER_PROJECTS)
    sdist = ROOT_PROJECT["tool"]["hatch"]["build"]["targets"]["sdist"]["only-include"]
    assert {f"{member}/src" for member in MEMBER_PROJECTS} <= set(sdist)


def test_root_depends_on_every_members_third_party_dependencies_and_no_member() -> None:
    project = ROOT_PROJECT["project"]
    root = {_name(requirement) for requirement in project["dependencies"]}
    assert not root & MEMBER_NAMES, "the wheel carries the members' code: they are not dependencies"
    for member, member_project in MEMBER_PROJECTS.items():
        missing = {_name(r) for r in member_project.get("dependencies", [])} - MEMBER_NAMES - root
        assert not missing, f"{member} needs {sorted(missing)}: add them to the root project's dependencies"
        for extra, requirements in member_project.get("optional-dependencies", {}).items():
            root_extra = {_name(r) for r in project.get("optional-dependencies", {}).get(extra, [])}
            missing = {_name(r) for r in requirements} - root_extra
            assert not missing, f"{member}'s extra {extra!r} needs {sorted(missing)} in the root's extra"


def test_root_entry_points_are_the_members() -> None:
    project = ROOT_PROJECT["project"]
    for group in GROUPS:
        merged: dict[str, str] = {}
        for member, member_project in MEMBER_PROJECTS.items():
            for name, target in member_project.get("entry-points", {}).get(group, {}).items():
                assert name not in merged, f"{group} {name!r} is defined twice ({member})"
                merged[name] = target
        assert project["entry-points"].get(group, {}) == merged, f"root's {group}: copy the members'"
    # The console script is not copied: scripts/build_metadata.py takes the members' ones at build time.
    assert "scripts" in project["dynamic"]
    assert "scripts" not in project


def test_development_installs_do_not_install_the_root_wheel() -> None:
    """`uv sync --all-packages` installs the members editable; the root too would register commands twice."""
    assert ROOT_PROJECT["tool"]["uv"]["package"] is False
    dev = {_name(requirement) for requirement in ROOT_PROJECT["dependency-groups"]["dev"]}
    assert dev >= MEMBER_NAMES, "plain `uv sync` installs the members through the dev group"


def _uv() -> str:
    for candidate in (
        shutil.which("uv"),
        str(Path(site.getuserbase()) / "bin" / "uv"),
        str(Path.home() / ".local" / "bin" / "uv"),
    ):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("uv is not installed: scripts/install_python_deps.sh installs it")


def _clean_env(uv: str, **extra: str) -> dict[str, str]:
    """The environment without the work tree's virtualenv or paths, with uv on PATH."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT", "KRONII_CONFIG"}
    }
    env["PATH"] = os.pathsep.join([str(Path(uv).parent), "/usr/local/bin", "/usr/bin", "/bin"])
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env.update(extra)
    return env


def test_built_wheel_installs_into_a_fresh_venv_and_runs_kronii(tmp_path: Path) -> None:
    uv = _uv()
    env = _clean_env(uv)
    dist = tmp_path / "dist"
    build = subprocess.run(
        ["bash", str(ROOT / "scripts" / "build_wheel.sh"), str(dist)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    version = ROOT_PROJECT["project"]["version"]
    wheels = sorted(dist.glob("*.whl"))
    assert [wheel.name for wheel in wheels] == [f"kronii-{version}-py3-none-any.whl"]
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = set(wheel.namelist())
        entry_points = wheel.read(f"kronii-{version}.dist-info/entry_points.txt").decode()
    scripts = sorted(name for project in MEMBER_PROJECTS.values() for name in project.get("scripts", {}))
    assert scripts == ["kronii"]
    assert "[console_scripts]\nkronii = kronii.launcher.cli.main:main\n" in entry_points
    # Generated code (libs/api) and a data file (alembic's template) are in, caches and tests are not.
    assert "kronii/capture/v1/capture_pb2.py" in names
    assert "kronii/stores/migrations/script.py.mako" in names
    # The console's page needs its templates and static files: htmx and its licence ship in the wheel,
    # nothing is fetched at run time.
    for shipped in ("api/templates/base.html", "api/templates/today.html", "api/static/htmx.min.js",
                    "api/static/htmx.LICENSE.txt", "api/static/console.css", "api/static/console.js"):  # fmt: skip
        assert f"kronii/console/{shipped}" in names, shipped
    assert not [name for name in names if "__pycache__" in name or name.startswith("tests/")]

    venv = tmp_path / "venv"
    subprocess.run(
        [uv, "venv", "--quiet", "--python", sys.executable, str(venv)],
        cwd=tmp_path,
        env=env,
        check=True,
        timeout=120,
    )
    install = subprocess.run(
        [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), str(wheels[0])],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert install.returncode == 0, install.stderr

    # Run from an empty folder, with a home of its own: nothing of the work tree or the person's config.
    home = tmp_path / "home"
    home.mkdir()
    run_env = _clean_env(uv, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    run_env["PATH"] = os.pathsep.join([str(venv / "bin"), run_env["PATH"]])

    def kronii(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(venv / "bin" / "kronii"), *args],
            input=stdin,
            cwd=home,
            env=run_env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    probe = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import json, kronii.foundation\n"
            "from importlib.metadata import distributions, entry_points\n"
            "groups = {g: sorted(e.name for e in entry_points(group=g) if e.load())"
            " for g in ('kronii.commands', 'kronii.services')}\n"
            "dists = sorted(d.metadata['Name'] for d in distributions() if d.metadata['Name'].startswith('kronii'))\n"
            "print(json.dumps({'groups': groups, 'dists': dists, 'file': kronii.foundation.__file__}))",
        ],
        cwd=home,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    assert found["dists"] == ["kronii"], "one distribution, no unpublished kronii-* dependency"
    assert Path(found["file"]).is_relative_to(venv), "kronii is imported from the venv, not the work tree"
    for group in GROUPS:
        assert found["groups"][group] == sorted(ROOT_PROJECT["project"]["entry-points"][group])

    help_ = kronii("--help")
    assert help_.returncode == 0, help_.stderr
    # Command rows start with a short indent (click: 2 spaces, argparse: 4); wrapped text is indented further.
    listed = set(re.findall(r"^ {2,6}([a-z][a-z-]*)(?:\s|$)", help_.stdout, flags=re.MULTILINE))
    assert set(COMMANDS) <= listed, f"missing from `kronii --help`: {sorted(set(COMMANDS) - listed)}"

    secret = "AKIA" + "J4XW7QZ2MB5RT6NP"
    redacted = kronii("redact", stdin=f"deploy with {secret} and mail bob@exemple.com\n")
    assert redacted.returncode == 10, redacted.stderr  # 10: findings masked
    assert secret not in redacted.stdout
    assert "bob@exemple.com" not in redacted.stdout
    assert redacted.stdout.startswith("deploy with ")
    assert kronii("redact", stdin="nothing to hide here\n").stdout == "nothing to hide here\n"

    if "--version" in help_.stdout:
        shown = kronii("--version")
        assert shown.returncode == 0, shown.stderr
        assert version in shown.stdout + shown.stderr
