"""`python -m kronii.<service>`: the settings are checked before the service runtime is imported, so
a misconfigured service says why at once (and `kronii up` reads specs without importing it)."""

from __future__ import annotations

import sys

from kronii.foundation.settings import SettingsError
from kronii.runtime.spec import ServiceSpec, checked_settings

__all__ = ["launch"]


def launch(spec: ServiceSpec) -> None:
    """Entry point of `python -m kronii.<service>`: settings are checked before the heavy imports, so
    a misconfigured service says why at once."""
    try:
        settings = checked_settings(spec)
    except SettingsError as error:
        print(error.message, file=sys.stderr)
        raise SystemExit(2) from None
    from kronii.runtime.service import run_service

    run_service(spec, settings)
