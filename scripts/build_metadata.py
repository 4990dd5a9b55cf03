"""Hatch metadata hook of the root `kronii` wheel: its console scripts are the workspace members' ones.

The root pyproject.toml declares `scripts` dynamic and names this file in [tool.hatch.metadata.hooks.custom].
Declared statically, uv would warn on every `uv sync` that it skips them (the root is not installed in
development: the members are, editable, and they bring the same `kronii` command).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from hatchling.metadata.plugin.interface import MetadataHookInterface


class CustomMetadataHook(MetadataHookInterface):
    def update(self, metadata: dict[str, Any]) -> None:
        root = Path(self.root)
        scripts: dict[str, str] = {}
        manifests = [*root.glob("libs/*/pyproject.toml"), *root.glob("services/*/pyproject.toml")]
        for manifest in sorted(manifests):
            with manifest.open("rb") as handle:
                scripts.update(tomllib.load(handle).get("project", {}).get("scripts", {}))
        if not scripts:
            raise ValueError("no workspace member declares a console script: nothing would install `kronii`")
        metadata["scripts"] = scripts
