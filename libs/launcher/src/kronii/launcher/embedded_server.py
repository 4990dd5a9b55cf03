"""What `kronii up` knows of each of its servers (NATS, Redis, PostgreSQL): its URL, whether kronii
started it, its process; the error a server that cannot start raises; where an installed server's
package lies."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

from kronii.foundation.urls import redact_url
from kronii.launcher.processes import Child

__all__ = ["InfraError", "InfraServer", "package_dir"]


class InfraError(RuntimeError):
    pass


@dataclass
class InfraServer:
    name: str
    url: str
    embedded: bool
    child: Child | None = field(default=None, repr=False)

    @property
    def display_url(self) -> str:
        return redact_url(self.url)


def package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise InfraError(f"the Python package {module!r} is not installed; run `make up` to install it")
    return Path(next(iter(spec.submodule_search_locations)))
