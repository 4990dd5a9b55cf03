"""The automation compatibility audit: the pure table and its Markdown (every seed column, installed
or not found per tool), and the probes (executables on PATH past kronii's shadow, Python packages
found without importing them, a running x11vnc that lets viewers type)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from kronii.broker.cli.compat import (
    Probe,
    audit_markdown,
    find_executables,
    importable_modules,
    probe,
    vnc_findings,
)
from kronii.broker.core.compat_table import (
    COLUMNS,
    TOOLS,
    render_markdown,
)

SEED_COLUMNS = ("Tool", "Input Path", "Risk", "Compatibility", "Adapter Plan", "STOP_NOW", "SAFE_INTERRUPT")
REPO = Path(__file__).resolve().parents[3]


def table_rows(document: str) -> dict[str, list[str]]:
    """Tool name -> its cells (the first is "Found"), from the rendered Markdown table."""
    rows = {}
    for line in document.splitlines():
        if line.startswith("| ") and not line.startswith("| Found"):
            cells = [cell.strip() for cell in line.strip("|").split(" | ")]
            rows[cells[1]] = cells
    return rows


def executable(directory: Path, name: str, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_the_table_has_every_seed_column_in_order() -> None:
    document = render_markdown(TOOLS, set())

    header = next(line for line in document.splitlines() if line.startswith("| Found"))
    assert COLUMNS == SEED_COLUMNS
    assert [cell.strip() for cell in header.strip("|").split("|")] == ["Found", *SEED_COLUMNS]


def test_every_row_fills_every_column() -> None:
    rows = table_rows(render_markdown(TOOLS, set()))

    assert len(rows) == len(TOOLS)
    assert all(len(cells) == len(SEED_COLUMNS) + 1 and all(cells) for cells in rows.values())


def test_tools_are_marked_installed_or_not_found_from_the_given_set() -> None:
    rows = table_rows(
        render_markdown(TOOLS, {"xdotool", "pyautogui"}, notes={"pyautogui": "importable by python3"})
    )

    assert rows["xdotool"][0] == "installed"
    assert rows["pyautogui"][0] == "installed (importable by python3)"
    assert rows["ydotool"][0] == "not found"
    assert rows["kronii BrokerClient / StepRunner"][0] == "built in"


def test_the_seed_tools_are_all_in_the_table() -> None:
    tools = {row.tool for row in TOOLS}

    for name in ("xdotool", "xte (xautomation)", "ydotool", "wtype", "xvkbd", "x11vnc", "AutoKey", "SikuliX"):
        assert name in tools
    for name in ("Actiona", "xmacro", "pyautogui", "pynput", "python-xlib XTEST users", "keyboard (Python)"):
        assert name in tools


def test_the_document_names_the_three_adapter_approaches_and_findings() -> None:
    document = render_markdown(TOOLS, set(), findings=["ydotool is installed"])

    for approach in (
        "**CLI wrappers.**",
        "**PATH shadowing.**",
        "**Step-based runner with cancellation tokens.**",
    ):
        assert approach in document
    assert "- ydotool is installed" in document


def test_a_pipe_in_a_cell_does_not_break_the_table() -> None:
    document = render_markdown(TOOLS[:1], set(), notes={TOOLS[0].tool: "a | b"})

    assert "a \\| b" in document


def test_executables_are_found_on_path_past_the_kronii_shadow(tmp_path: Path) -> None:
    executable(tmp_path / "shadow", "xdotool", "#!/bin/sh\n# kronii.broker.cli.xdotool_shim\n")
    real = executable(tmp_path / "bin", "xdotool")
    executable(tmp_path / "bin", "xte")
    path_value = f"{tmp_path / 'shadow'}:{tmp_path / 'bin'}"

    found = find_executables(["xdotool", "xte", "ydotool"], path_value)

    assert found == {"xdotool": str(real), "xte": str(tmp_path / "bin" / "xte")}


def test_python_packages_are_found_without_importing_them(tmp_path: Path) -> None:
    found = importable_modules(
        sys.executable, ["json", "email.mime", "json.no_such_part", "surely_not_installed_x"]
    )

    assert found == {"json", "email.mime"}


def test_a_running_x11vnc_without_viewonly_is_a_finding() -> None:
    findings = vnc_findings(
        [["/usr/bin/x11vnc", "-display", ":5", "-nopw"], ["x11vnc", "-display", ":6", "-viewonly"], ["bash"]]
    )

    assert len(findings) == 1
    assert "without -viewonly (on :5)" in findings[0]


def test_probe_marks_installed_tools_and_running_ones(tmp_path: Path) -> None:
    executable(tmp_path / "bin", "ydotool")
    executable(tmp_path / "bin", "x11vnc")

    found = probe(path_value=str(tmp_path / "bin"), commands=[["x11vnc", "-display", ":9"]])

    assert found.installed == {"ydotool", "x11vnc"}
    assert "running" in found.notes["x11vnc"]
    assert any(finding.startswith("ydotool is installed") for finding in found.findings)
    assert any("x11vnc is running without -viewonly" in finding for finding in found.findings)


def test_audit_markdown_says_it_was_made_on_this_machine_and_how_to_rerun() -> None:
    document = audit_markdown(probed=Probe(installed={"xdotool"}), now=datetime(2026, 1, 2, 3, 4, tzinfo=UTC))

    assert "on this machine (2026-01-02 03:04 UTC)" in document
    assert "kronii broker audit" in document
    assert table_rows(document)["xdotool"][0] == "installed"


def test_the_shipped_shadow_script_carries_the_marker_the_probes_skip() -> None:
    script = REPO / "services" / "broker" / "shadow" / "xdotool"

    assert b"kronii.broker.cli.xdotool_shim" in script.read_bytes()
    assert script.stat().st_mode & 0o111
