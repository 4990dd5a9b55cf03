"""scripts/install_python_deps.sh (run by every `make up`) installs uv with pip only when uv is missing:
a uv that an earlier run put in ~/.local/bin (pip --user), outside PATH, is found and used, and nothing
is installed again. Real bash running the real script, with a uv that records how it was called."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "install_python_deps.sh"


def test_a_uv_in_the_users_local_bin_is_used_and_not_installed_again(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(SCRIPT, repo / "scripts" / SCRIPT.name)
    home = tmp_path / "home"
    local_bin = home / ".local" / "bin"
    local_bin.mkdir(parents=True)
    calls = tmp_path / "uv-calls"
    fake_uv = local_bin / "uv"
    fake_uv.write_text(f'#!/bin/sh\necho "$PWD $*" >> {calls}\n')
    fake_uv.chmod(0o755)
    # A PATH with what the script needs and no uv, wherever this machine keeps its own.
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("dirname", "python3"):
        found = shutil.which(tool)
        assert found is not None, tool
        (tools / tool).symlink_to(found)
    path = str(tools)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "KRONII_PY_EXTRAS")}
    env.update(HOME=str(home), PATH=path)
    done = subprocess.run(
        [str(shutil.which("bash")), str(repo / "scripts" / SCRIPT.name)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "installing uv" not in done.stdout + done.stderr
    [call] = calls.read_text().splitlines()
    assert call.startswith(f"{repo} sync --quiet --python ") and call.endswith(
        " --all-packages --compile-bytecode"
    )
