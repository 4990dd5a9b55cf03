"""What reached the screen after the person's event (issue 30): the watcher counts the agent's events
the X server took after a person's event that interrupted the agent's typing, and reports the delay to
the last of them, once the window has passed; a new lease's typing is not counted as late."""

from __future__ import annotations

from kronii.broker.adapters.x_watch import AtScreen


def test_agent_events_after_the_persons_within_the_lease_are_counted_with_the_delay_to_the_last() -> None:
    reports: list[tuple[float, int]] = []
    watch = AtScreen(lambda delay, count: reports.append((round(delay, 3), count)), window_s=0.5)
    watch.own(10.000)
    watch.person(10.001)
    watch.own(10.002)
    watch.own(10.004)
    watch.settle(10.2)
    assert reports == []  # the window is still open
    watch.settle(10.6)
    assert reports == [(0.003, 2)]


def test_a_person_event_with_nothing_after_it_reports_zero() -> None:
    reports: list[tuple[float, int]] = []
    watch = AtScreen(lambda delay, count: reports.append((delay, count)), window_s=0.5)
    watch.own(10.0)
    watch.person(10.1)
    watch.settle(10.7)
    assert reports == [(0.0, 0)]


def test_a_new_leases_typing_ends_the_measure_instead_of_counting_as_late() -> None:
    reports: list[tuple[float, int]] = []
    lease_closed = [True]
    watch = AtScreen(
        lambda delay, count: reports.append((delay, count)), lambda: lease_closed[0], window_s=0.5
    )
    watch.own(10.0)
    watch.person(10.01)
    lease_closed[0] = False  # the person granted again
    watch.own(10.05)
    watch.own(10.06)
    assert reports == [(0.0, 0)]


def test_a_person_event_while_no_agent_typed_is_not_measured() -> None:
    reports: list[tuple[float, int]] = []
    watch = AtScreen(lambda delay, count: reports.append((delay, count)), window_s=0.5)
    watch.own(1.0)
    watch.person(5.0)
    watch.own(5.1)
    watch.settle(6.0, force=True)
    assert reports == []
