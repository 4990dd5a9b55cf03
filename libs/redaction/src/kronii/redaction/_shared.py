"""One engine per policy in a process. `kronii up` runs every service in one process, and each of them (the log
filter, the sensor's titles, capture, vision's OCR, the critic, the supervisor, the pipeline, the model calls)
redacts with the default policy: sharing one engine builds its detectors once and compiles its scan once
(about 15 MB when a long text first needs it) instead of once per service. The engine keeps no per-call state,
and its compiled scan has a scratch space per thread, so sharing it across threads is safe."""

from __future__ import annotations

import threading

from ._engine import RedactionEngine
from ._policy import RedactionPolicy

__all__ = ["shared_engine"]

_ENGINES: dict[RedactionPolicy, RedactionEngine] = {}
_LOCK = threading.Lock()


def shared_engine(policy: RedactionPolicy | None = None) -> RedactionEngine:
    """This process's engine for `policy` (default: the default policy), built on first use."""
    key = policy if policy is not None else RedactionPolicy()
    engine = _ENGINES.get(key)
    if engine is None:
        with _LOCK:
            engine = _ENGINES.get(key)
            if engine is None:
                engine = _ENGINES[key] = RedactionEngine(key)
    return engine
