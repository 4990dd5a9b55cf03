"""Every row of the interactive-session table in kronii.broker.core.interactive."""

from __future__ import annotations

import pytest
from kronii.broker.core.interactive import interactive_reason, reconnect_wait_s


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


@pytest.mark.parametrize("viewer_authoritative", [False, True])
def test_viewers_that_cannot_be_seen_make_presence_unknown_not_absent(viewer_authoritative: bool) -> None:
    assert interactive_reason(False, 0, 0, viewer_authoritative, viewers_known=False) == "unknown"


def test_unseen_viewers_with_devices_that_do_not_count_are_unknown() -> None:
    assert interactive_reason(False, 0, 3, True, viewers_known=False) == "unknown"


@pytest.mark.parametrize(
    ("flag", "viewers", "devices", "reason"),
    [(True, 0, 0, "flag"), (False, 1, 0, "viewer"), (False, 0, 2, "devices")],
)
def test_a_known_sign_of_a_person_outranks_unknown(
    flag: bool, viewers: int, devices: int, reason: str
) -> None:
    assert interactive_reason(flag, viewers, devices, False, viewers_known=False) == reason


@pytest.mark.parametrize(
    ("viewers", "ended_s_ago", "wait"),
    [
        (0, None, 0.0),  # nobody was watching: nothing to wait for
        (0, 5.0, 0.0),
        (1, None, 120.0),  # killed with a viewer attached: the whole grace from now
        (None, None, 120.0),  # not known how many: as if some
        (2, 20.0, 100.0),  # stopped cleanly 20 s ago with viewers: what is left of the grace
        (1, 500.0, 0.0),
    ],
)
def test_the_wait_for_a_reconnect_after_viewers_were_disconnected(
    viewers: int | None, ended_s_ago: float | None, wait: float
) -> None:
    assert reconnect_wait_s(viewers, ended_s_ago, 120.0) == wait
