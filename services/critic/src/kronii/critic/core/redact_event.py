"""An InvocationEvent becomes an InvocationRecord with nothing secret left in it: the command line,
the cwd and the error text go through kronii.redaction (placeholders; the command is kept, never
dropped), the error text is summarised (core.summary) and only its summary is kept. The engine is
pure Python, so this stays in core. When the engine fails it fails closed: its stand-in text is
kept instead of the line."""

from __future__ import annotations

from dataclasses import dataclass, replace

from kronii.critic.core.command_line import command_name
from kronii.critic.core.model import InvocationEvent, InvocationRecord, Trigger
from kronii.critic.core.summary import summarise_error
from kronii.critic.core.triggers import Critique, is_failure, strongest
from kronii.redaction import ENGINE_ERROR_TEXT, RedactionContext, RedactionEngine

__all__ = ["MAX_COMMAND_CHARS", "RedactedEvent", "embedding_text", "record_trigger", "redact_event"]

# A pasted heredoc can be megabytes; the record keeps the start (cut after redaction, so a cut can
# only split a placeholder, never a secret).
MAX_COMMAND_CHARS = 8192


@dataclass(frozen=True)
class RedactedEvent:
    record: InvocationRecord
    # Placeholders put into each text, for the metrics; their sum is record.redactions.
    command_redactions: int
    error_redactions: int
    cwd_redactions: int


def _redacted(engine: RedactionEngine, context: RedactionContext, text: str) -> tuple[str, int]:
    if not text:
        return "", 0
    result = engine.redact(text, context=context)
    # Red still has placeholders in place of every finding (it only forbids sending the text out of
    # the host); the memory is local, so the masked text is kept, as for amber.
    count = len(result.findings) or (1 if result.text == ENGINE_ERROR_TEXT else 0)
    return result.text, count


def redact_event(
    event: InvocationEvent, engine: RedactionEngine, context: RedactionContext, record_id: str
) -> RedactedEvent:
    command, in_command = _redacted(engine, context, event.command_line)
    cwd, in_cwd = _redacted(engine, context, event.cwd)
    error, in_error = _redacted(engine, context, event.error_text)
    summary = summarise_error(error)
    error_type = summary.error_type
    if not error_type and event.exit_status == 127:
        error_type = "command_not_found"
    record = InvocationRecord(
        record_id=record_id,
        timestamp_ms=event.started_ms,
        trigger=Trigger.OK,
        command_name="" if command == ENGINE_ERROR_TEXT else command_name(command),
        command_line=command[:MAX_COMMAND_CHARS],
        cwd=cwd,
        exit_status=event.exit_status,
        duration_ms=event.duration_ms,
        shell=event.shell,
        session=event.session,
        error_type=error_type,
        error_message=summary.message,
        summary=summary.line,
        redactions=in_command + in_cwd + in_error,
    )
    return RedactedEvent(replace(record, trigger=record_trigger(record, ())), in_command, in_error, in_cwd)


def record_trigger(record: InvocationRecord, critiques: tuple[Critique, ...] | list[Critique]) -> Trigger:
    """The record's one Trigger: its strongest critique's kind, else what its outcome says."""
    top = strongest(critiques)
    if top is not None:
        return top.kind
    if record.error_type == "command_not_found":
        return Trigger.COMMAND_NOT_FOUND
    return Trigger.ERROR if is_failure(record) else Trigger.OK


def embedding_text(record: InvocationRecord) -> str:
    """What the embedding is computed from: the redacted command and the error's summary."""
    return f"{record.command_line}\n{record.summary}" if record.summary else record.command_line
