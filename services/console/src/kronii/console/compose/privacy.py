"""The Privacy page's use cases, made once at start: the tables' sizes and the audit chain on the
console's PostgreSQL engine (none without one), capture's shelf, the sensor's and the pipeline's deletes, the activity
retention setting, the person's timezone."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo

from kronii.console.adapters.audit_log import AuditLogReader, TableSizes
from kronii.console.adapters.capture_api import CaptureApi
from kronii.console.adapters.pipeline_api import PipelineApi
from kronii.console.adapters.retention_settings import activity_retention_days
from kronii.console.adapters.sensor_history_api import SensorHistoryApi
from kronii.console.adapters.timezone import person_timezone
from kronii.console.deps import ConsoleDeps
from kronii.console.usecases.forget_data import ForgetData
from kronii.console.usecases.show_privacy import KNOWN_TABLES, ShowPrivacy

__all__ = ["PrivacyState", "build"]


@dataclass(frozen=True)
class PrivacyState:
    show: ShowPrivacy
    forget: ForgetData
    zone: tzinfo


async def build(deps: ConsoleDeps) -> PrivacyState:
    zone = person_timezone(deps.settings.timezone)
    capture = CaptureApi(deps.services)
    sizes = TableSizes(deps.engine, KNOWN_TABLES) if deps.engine is not None else None
    audit = AuditLogReader(deps.engine) if deps.engine is not None else None
    show = ShowPrivacy(capture, sizes, audit, activity_retention_days())
    forget = ForgetData(
        SensorHistoryApi(deps.services), capture, PipelineApi(deps.services), deps.record, zone
    )
    return PrivacyState(show, forget, zone)
