"""Helpers shared by the capture vault tests: sample PNGs, job ids, an audit recorder."""

from __future__ import annotations

import io
import uuid
from typing import Any

from kronii.foundation.audit_trail import AuditTrail
from kronii.stores.audit import AuditLog
from PIL import Image


def audit_recorder(audit: AuditLog) -> AuditTrail:
    """ServiceContext.record's shape on a real audit log."""

    async def record(*, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any) -> None:
        await audit.append(actor=actor, action=action, subject=subject, outcome=outcome, detail=detail)

    return record


def png_image(seed: int, size: tuple[int, int] = (64, 48)) -> bytes:
    """A small real PNG whose pixels depend on ``seed``."""
    image = Image.new("RGB", size, (seed * 37 % 256, seed * 91 % 256, seed * 13 % 256))
    for x in range(0, size[0], 4):
        image.putpixel((x, (x * seed) % size[1]), (255, 255, 255))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def new_job_id() -> str:
    return "job-" + uuid.uuid4().hex[:12]
