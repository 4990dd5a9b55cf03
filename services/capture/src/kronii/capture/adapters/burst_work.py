"""The worker's stages after the burst: scoring (cheap signals first, OCR on as few pixels as
possible), redaction of the primary frame, PNG encoding (ports.BurstWork). Blocking functions; the
capture run calls them in a thread, one job at a time (there is one screen)."""

from __future__ import annotations

import io
import secrets
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
from kronii.capture.core.frames import Frame
from kronii.capture.core.scoring import Scored, rank_frames, to_grey
from kronii.redaction import RedactionContext, RedactionEngine, RedactionPolicy, shared_engine
from kronii.redaction.pixels import ImageRedaction, png_bytes, redact_image
from numpy.typing import NDArray
from PIL import Image

__all__ = ["BurstWorker", "Redactor", "encode_png", "score_burst"]

OcrDensity = Callable[[NDArray[np.uint8]], float]


def score_burst(frames: Sequence[Frame], *, wm_class: str, title: str, ocr: OcrDensity) -> Scored:
    """Rank the burst best first; count how many frames needed OCR."""
    calls = 0

    def counted(grey: NDArray[np.uint8]) -> float:
        nonlocal calls
        calls += 1
        return ocr(grey)

    greys = [to_grey(frame.rgb) for frame in frames]
    ranked = rank_frames(greys, wm_class=wm_class, title=title, ocr_text_density=counted)
    return Scored(ranked, calls)


def encode_png(rgb: NDArray[np.uint8]) -> bytes:
    out = io.BytesIO()
    # Level 1: the file is sealed and never served raw; speed matters more than a few kilobytes.
    Image.fromarray(rgb).save(out, format="PNG", compress_level=1)
    return out.getvalue()


class Redactor:
    """The redaction engine with the service's policy (max_masked_area passed through)."""

    def __init__(self, max_masked_area: float | None = None, engine: RedactionEngine | None = None) -> None:
        self.engine = engine or shared_engine()
        policy: RedactionPolicy = self.engine.policy
        if max_masked_area is not None:
            policy = replace(policy, max_masked_area=max_masked_area)
        self.policy = policy

    def redact(self, frame: Frame, *, app: str) -> ImageRedaction:
        # A fresh context per job: placeholders never link findings across captures.
        context = RedactionContext(secrets.token_bytes(32))
        return redact_image(
            Image.fromarray(frame.rgb),
            engine=self.engine,
            policy=self.policy,
            context=context,
            app=app or None,
        )


class BurstWorker:
    """The stages after the burst, as the job run calls them (ports.BurstWork)."""

    def __init__(self, redactor: Redactor, ocr: OcrDensity) -> None:
        self._redactor = redactor
        self._ocr = ocr

    def score(self, frames: Sequence[Frame], *, wm_class: str, title: str) -> Scored:
        return score_burst(frames, wm_class=wm_class, title=title, ocr=self._ocr)

    def redact(self, frame: Frame, *, app: str) -> ImageRedaction:
        return self._redactor.redact(frame, app=app)

    def raw_png(self, frame: Frame) -> bytes:
        return encode_png(frame.rgb)

    def redacted_png(self, image: Image.Image) -> bytes:
        return png_bytes(image)
