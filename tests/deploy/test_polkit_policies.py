"""The polkit actions kronii's services ask about: each one has its policy file in deploy/polkit, named
after the action, with the defaults the service's proof of presence relies on, and docs/operations.md
says how to install it. Checked as XML, without polkitd (tests/integration/capture/test_capture_polkit.py
runs the real one with capture's file)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from kronii.edge.presence_rules import PresencePurpose

ROOT = Path(__file__).resolve().parents[2]
POLKIT = ROOT / "deploy" / "polkit"
OPERATIONS_DOC = ROOT / "docs" / "operations.md"
INSTALL_DIR = "/usr/share/polkit-1/actions/"


def _purposes() -> dict[str, PresencePurpose]:
    from kronii.broker.adapters.callers import GRANT_PURPOSE
    from kronii.capture.adapters.callers import READ_SCREENSHOTS
    from kronii.vision.adapters.person_gate import APPROVE_PURPOSE

    return {purpose.service: purpose for purpose in (READ_SCREENSHOTS, GRANT_PURPOSE, APPROVE_PURPOSE)}


# What each action's defaults must be: (allow_any, allow_inactive, allow_active).
EXPECTED_DEFAULTS = {
    # Reading screenshots: the person's own password, wherever they are.
    "capture": ("auth_self", "auth_self", "auth_self"),
    # Handing the desktop to an agent: only the person at the active session, with their password.
    "broker": ("no", "no", "auth_self"),
    # Approving a plan of clicks and keys on the desktop: the same, the person who sees that screen.
    "vision": ("no", "no", "auth_self"),
}


def _action(path: Path) -> ET.Element:
    # The repository's own files; the DOCTYPE names polkit's DTD by URL, which ElementTree never fetches.
    root = ET.parse(path).getroot()  # noqa: S314
    assert root.tag == "policyconfig", path.name
    assert root.findtext("vendor") == "kronii", path.name
    (action,) = root.findall("action")
    return action


@pytest.mark.parametrize("service", sorted(EXPECTED_DEFAULTS))
def test_each_presence_action_has_its_policy_file_with_the_expected_defaults(service: str) -> None:
    action_id = _purposes()[service].polkit_action
    path = POLKIT / f"{action_id}.policy"
    assert path.is_file(), f"{service} asks polkit for {action_id}: deploy/polkit/{path.name} is missing"
    action = _action(path)
    assert action.get("id") == action_id
    assert (action.findtext("description") or "").strip(), "polkit's agent shows the description"
    assert (action.findtext("message") or "").strip(), "polkit's agent shows the message"
    defaults = action.find("defaults")
    assert defaults is not None
    found = tuple(defaults.findtext(key) for key in ("allow_any", "allow_inactive", "allow_active"))
    assert found == EXPECTED_DEFAULTS[service]


def test_every_policy_file_belongs_to_a_service_and_its_install_is_documented() -> None:
    actions = {purpose.polkit_action for purpose in _purposes().values()}
    files = sorted(POLKIT.glob("*.policy"))
    assert {path.stem for path in files} == actions, "one policy file per action a service asks about"
    doc = OPERATIONS_DOC.read_text(encoding="utf-8")
    for path in files:
        install = f"install -m 0644 deploy/polkit/{path.name} {INSTALL_DIR}"
        assert install in doc, f"docs/operations.md does not say how to install {path.name}"
