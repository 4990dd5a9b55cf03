"""Every row of the interactive-session table in kronii.broker.core.interactive."""

from __future__ import annotations

import pytest
from kronii.broker.core.interactive import interactive_reason


@pytest.mark.parametrize("viewers", [0, 1, 3])
@pytest.mark.parametrize("devices", [0, 2])
@pytest.mark.parametrize("viewer_authoritative", [False, True])
def test_the_flag_makes_a_session_interactive_whatever_else_is_seen(
    viewers: int, devices: int, viewer_authoritative: bool
) -> None:
    assert interactive_reason(True, viewers, devices, viewer_authoritative) == "flag"


@pytest.mark.parametrize("viewers", [1, 2])
@pytest.mark.parametrize("devices", [0, 1])
@pytest.mark.parametrize("viewer_authoritative", [False, True])
def test_an_attached_viewer_makes_a_session_interactive(
    viewers: int, devices: int, viewer_authoritative: bool
) -> None:
    assert interactive_reason(False, viewers, devices, viewer_authoritative) == "viewer"


@pytest.mark.parametrize("devices", [1, 4])
def test_physical_devices_make_a_session_interactive_when_the_viewer_is_not_authoritative(
    devices: int,
) -> None:
    assert interactive_reason(False, 0, devices, False) == "devices"


@pytest.mark.parametrize("devices", [1, 4])
def test_physical_devices_alone_do_not_count_when_the_viewer_is_authoritative(devices: int) -> None:
    assert interactive_reason(False, 0, devices, True) == ""


@pytest.mark.parametrize("viewer_authoritative", [False, True])
def test_no_flag_no_viewer_and_no_devices_is_not_interactive(viewer_authoritative: bool) -> None:
    assert interactive_reason(False, 0, 0, viewer_authoritative) == ""
