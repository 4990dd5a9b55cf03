"""Each line of the process the services share is shown once under one name by `kronii up`: a line the
process logs under its own name (outside every service, "services | ...") is shown as "services | ...",
never "services | services | ..."."""

from __future__ import annotations

import io
import logging

from kronii.foundation.logs import LinePrefixFormatter, TextFormatter, current_service
from kronii.launcher.processes import split_sink
from kronii.runtime.up_settings import SHARED_PROCESS_NAME


def test_a_line_the_shared_process_logs_under_its_own_name_is_shown_with_one_prefix() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(LinePrefixFormatter(TextFormatter(SHARED_PROCESS_NAME), SHARED_PROCESS_NAME))
    log = logging.getLogger("test.shared.prefix")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        log.warning("outside every service")
        token = current_service.set("sensor")
        try:
            log.warning("inside the sensor")
        finally:
            current_service.reset(token)
    finally:
        log.removeHandler(handler)
    shown: list[tuple[str, str]] = []
    sink = split_sink(lambda name, line: shown.append((name, line)), ["sensor", "capture"])
    for line in out.getvalue().splitlines():
        sink(SHARED_PROCESS_NAME, line)
    assert [name for name, _ in shown] == [SHARED_PROCESS_NAME, "sensor"]
    for _, line in shown:
        assert not line.startswith(f"{SHARED_PROCESS_NAME} | ") and not line.startswith("sensor | "), line
    assert shown[0][1].endswith("outside every service")
