"""The input broker's hold on the desktop as the mesh keeps it (kronii.desktop.hold): read
from a ControlChanged, in force until `user_holds_until`, the latest change of each session kept."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.broker.v1 import broker_pb2 as bpb
from kronii.desktop.hold import DesktopHold, DesktopHolds

NOW = 1_800_000_000.0


def stamp(at: float) -> Timestamp:
    out = Timestamp()
    out.FromNanoseconds(round(at * 1e9))
    return out


def changed(
    session: str, until: float | None, *, at: float = NOW, signal: str = "", cause: str = "user_input"
) -> bpb.ControlChanged:
    state = bpb.ControlState(session_id=session, control_mode="USER")
    if until is not None:
        state.user_holds_until.CopyFrom(stamp(until))
    return bpb.ControlChanged(state=state, cause=cause, signal=signal, at=stamp(at))


def test_a_change_with_user_holds_until_holds_the_desktop_until_that_time_and_says_why() -> None:
    hold = DesktopHold.from_message(changed("s1", NOW + 30.5, signal="user_input_override"))

    assert (hold.session_id, hold.until, hold.reason, hold.at) == (
        "s1",
        NOW + 30.5,
        "user_input_override",
        NOW,
    )
    assert hold.holds(NOW) and hold.holds(NOW + 30.4)
    assert not hold.holds(NOW + 30.5)
    assert "user_input_override" in hold.describe() and "'s1'" in hold.describe()


def test_a_change_without_user_holds_until_holds_nothing_and_names_its_cause() -> None:
    hold = DesktopHold.from_message(changed("s1", None, cause="wait"))

    assert hold.until is None and hold.reason == "wait"
    assert not hold.holds(NOW)


def test_the_latest_change_of_a_session_replaces_its_hold_and_an_older_one_arriving_late_is_ignored() -> None:
    held = DesktopHolds().updated(DesktopHold("s1", NOW + 60, "stop_now", at=NOW))
    released = held.updated(DesktopHold("s1", None, "wait", at=NOW + 5))
    late = released.updated(DesktopHold("s1", NOW + 60, "stop_now", at=NOW + 1))

    assert held.holding(NOW + 10) is not None
    assert released.holding(NOW + 10) is None
    assert late.holding(NOW + 10) is None


def test_any_session_counts_unless_one_is_named_and_the_longest_hold_is_the_one_given() -> None:
    holds = (
        DesktopHolds()
        .updated(DesktopHold("s1", NOW + 10, "stop_now"))
        .updated(DesktopHold("s2", NOW + 90, "safe_point"))
        .updated(DesktopHold("s3", None, "grant"))
    )

    longest = holds.holding(NOW)
    assert longest is not None and longest.session_id == "s2"
    named = holds.holding(NOW, "s1")
    assert named is not None and named.session_id == "s1"
    assert holds.holding(NOW, "s3") is None
    assert holds.holding(NOW + 11, "s1") is None
    assert holds.holding(NOW + 90) is None
