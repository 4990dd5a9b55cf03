"""One map from a service's HTTP refusal to the exit codes of every kronii command; each service names
the statuses that mean more for its commands."""

from __future__ import annotations

import pytest
from kronii.broker.cli.http import exit_for_status as broker_exit
from kronii.common.cli import exits
from kronii.critic.cli.http import exit_for_status as critic_exit
from kronii.supervisor.cli.http import exit_for_status as supervisor_exit
from kronii.vision.cli.http import exit_for_status as vision_exit


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, exits.USAGE), (422, exits.USAGE), (404, exits.NOT_FOUND), (401, exits.REFUSED),
     (403, exits.REFUSED), (429, exits.REFUSED), (502, exits.UNREACHABLE), (503, exits.UNREACHABLE),
     (504, exits.UNREACHABLE), (500, exits.FAILED), (409, exits.FAILED), (413, exits.FAILED)],
)  # fmt: skip
def test_every_service_maps_the_common_statuses_alike(status: int, code: int) -> None:
    assert exits.exit_for_status(status) == code
    assert broker_exit(status) == code
    if status not in (409, 413):
        assert {critic_exit(status), supervisor_exit(status), vision_exit(status)} == {code}


def test_what_a_409_423_or_413_means_depends_on_the_service() -> None:
    # The broker would not do it in the state it is in: a failure; a busy pane, a typing person or a plan
    # that needs a person: a refusal; a text too long for the critic: a usage error.
    assert broker_exit(409) == exits.FAILED
    assert supervisor_exit(409) == supervisor_exit(423) == exits.REFUSED
    assert vision_exit(409) == exits.REFUSED
    assert critic_exit(413) == exits.USAGE
    assert critic_exit(409) == exits.FAILED
