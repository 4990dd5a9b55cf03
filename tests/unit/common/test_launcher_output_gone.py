"""`kronii up | head`: when the reader of kronii up's output goes away, kronii stops cleanly and quietly
(exit 141 from the command), like any command whose pipe closed, instead of a traceback from the
thread that printed a service's line and output lost from then on."""

from __future__ import annotations

import io
from pathlib import Path

from kronii.launcher.up import Launcher, LauncherSettings


class ClosedPipe(io.StringIO):
    def __init__(self, open_lines: int) -> None:
        super().__init__()
        self.open_lines = open_lines

    def write(self, text: str) -> int:
        if self.open_lines <= 0:
            raise BrokenPipeError(32, "Broken pipe")
        self.open_lines -= 1
        return super().write(text)


def test_a_reader_that_left_stops_kronii_and_nothing_more_is_written(tmp_path: Path) -> None:
    out = ClosedPipe(open_lines=1)
    launcher = Launcher(LauncherSettings(data_dir=tmp_path / "data"), out=out)
    launcher.say("nats        nats://127.0.0.1:4222  (embedded)")
    assert not launcher.output_gone and not launcher.stop_requested.is_set()
    launcher.sink("sensor", "a line nobody reads")  # from a service's pump thread: no exception
    assert launcher.output_gone and launcher.stop_requested.is_set()
    launcher.say("kronii: stopping")
    assert out.getvalue() == "nats        nats://127.0.0.1:4222  (embedded)\n"
