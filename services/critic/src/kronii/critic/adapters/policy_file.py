"""The person's critic policy on disk: `$XDG_CONFIG_HOME/kronii/critic.toml`, or a [critic] table in
the shared config file (kronii.foundation.config_file; critic.toml wins key by key), re-read when either
file changes. The mute of `kronii critic mute 1h` is kept in a small state file of its own, so the
person's TOML is never rewritten."""

from __future__ import annotations

import json
import logging
import os
import tempfile
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kronii.critic.core.policy import Policy, PolicyError, normalised, parse_policy, policy_keys
from kronii.foundation.config_file import config_path

__all__ = ["PolicyFile", "critic_policy_path", "mute_state_path"]

log = logging.getLogger(__name__)

_Stamp = tuple[int, int] | None


def critic_policy_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "kronii" / "critic.toml"


def mute_state_path(data_dir: Path) -> Path:
    return data_dir / "critic" / "mute.json"


def _stamp(path: Path) -> _Stamp:
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise PolicyError(f"cannot read {path}: {error.strerror or error}") from None
    return (info.st_mtime_ns, info.st_size)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as error:
        raise PolicyError(f"{path} is not valid TOML: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise PolicyError(f"cannot read {path}: {error}") from None


def _merged(shared: Mapping[str, Any], own: Mapping[str, Any]) -> dict[str, Any]:
    """The shared [critic] table's policy keys overlaid with critic.toml's, trigger by trigger."""
    merged = dict(shared)
    for key, value in own.items():
        earlier = merged.get(key)
        if isinstance(earlier, Mapping) and isinstance(value, Mapping):
            merged[key] = {**earlier, **value}
        else:
            merged[key] = value
    return merged


def _check(document: Mapping[str, Any], where: str) -> None:
    try:
        parse_policy(document)
    except PolicyError as error:
        raise PolicyError(f"{where}: {error}") from None


class PolicyFile:
    """``current()`` never raises: a broken edit keeps the last good policy (the defaults before
    any) and ``problem`` says what is wrong; ``load()`` raises PolicyError, for `doctor`."""

    def __init__(self, mute_path: Path, path: Path | None = None, shared_path: Path | None = None) -> None:
        self._path = path or critic_policy_path()
        self._shared_path = shared_path
        self._mute_path = mute_path
        self._stamps: tuple[_Stamp, _Stamp, _Stamp] | None = None
        self._policy = Policy()
        self.problem: str | None = None

    @property
    def path(self) -> Path:
        return self._path

    def current(self) -> Policy:
        """Read again when a file changed since the last try, good or bad (so a file put back as
        it was clears the problem)."""
        try:
            stamps = self._current_stamps()
            if stamps != self._stamps:
                self._stamps = stamps
                self._policy = self._load()
                self.problem = None
        except PolicyError as error:
            if self.problem != str(error):
                log.warning("critic policy: %s", error)
            self.problem = str(error)
        return self._policy

    def load(self) -> Policy:
        return self._load()

    def write_mute(self, until_ms: int) -> None:
        """Mute hints until ``until_ms`` (0 unmutes); written whole, then moved into place."""
        self._mute_path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self._mute_path.parent, prefix=".mute-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump({"mute_until_ms": max(0, until_ms)}, out)
            os.chmod(temporary, 0o600)
            os.replace(temporary, self._mute_path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def _shared(self) -> Path:
        return self._shared_path or config_path()

    def _current_stamps(self) -> tuple[_Stamp, _Stamp, _Stamp]:
        return (_stamp(self._path), _stamp(self._shared()), _stamp(self._mute_path))

    def _load(self) -> Policy:
        shared_path = self._shared()
        table = _read_toml(shared_path).get("critic", {})
        if not isinstance(table, Mapping):
            raise PolicyError(f"{shared_path}: critic must be a table ([critic])")
        shared = policy_keys(table)  # the rest of [critic] is the service's settings
        own = _read_toml(self._path)
        _check(shared, f"{shared_path} [critic]")
        _check(own, str(self._path))
        return parse_policy(_merged(normalised(shared), normalised(own))).muted_until(self._mute_until())

    def _mute_until(self) -> int:
        try:
            state = json.loads(self._mute_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return 0
        except (OSError, ValueError) as error:
            raise PolicyError(f"{self._mute_path} is not a mute state file: {error}") from None
        value = state.get("mute_until_ms", 0) if isinstance(state, dict) else None
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise PolicyError(f"{self._mute_path}: mute_until_ms must be ms since 1970")
        return value
