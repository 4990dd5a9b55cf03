"""Starting an app a plan may open (R3): only names in the allowlist, each mapped to its command line by
the settings; started detached in its own session, with no shell, and never waited for. The app is the
person's: it carries KRONII_DETACHED=1, so that `kronii up`, which stops what a crashed service process
leaves running (kronii.launcher.orphans), leaves it open."""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping

from kronii.launcher.orphans import DETACHED_ENV

__all__ = ["AppLauncher"]


class AppLauncher:
    def __init__(self, apps: Mapping[str, str]) -> None:
        self._apps = {name.lower(): command for name, command in apps.items()}

    def open(self, app: str) -> None:
        command = self._apps.get(app.strip().lower())
        if command is None:
            raise ValueError(f"{app} is not in the allowlist of apps a plan may open")
        subprocess.Popen(
            shlex.split(command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, DETACHED_ENV: "1"},
        )
