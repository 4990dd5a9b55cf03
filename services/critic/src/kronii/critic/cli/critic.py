"""`kronii critic search|similar|export|doctor|mute`: the console critic's memory of your commands,
over its HTTP API. Every text it answers with was redacted before it was kept.

- `search TEXT`: past commands like TEXT (semantic when the model is there, else keywords).
- `similar [RECORD_ID]`: past failures similar to one record; by default to the last failing command
  of this shell's session (the hooks export $KRONII_CRITIC_SESSION), else of this directory.
- `export`: the kept records as JSON lines, redacted for sharing unless --no-redact.
- `doctor`: hooks seen per shell, the spool and hint directory, the model, the counts, the queue.
- `mute 1h`: no hints for a while (`mute 0` ends it); the commands are still remembered.

Times are local for a person and UTC in --json. Exit codes (kronii.launcher.cli.exits): 0 done; 1
failed (doctor: something is wrong); 2 usage; 3 not found (no such record, no failing command yet);
4 refused; 5 the critic is not running.

Only click and the standard library load here: `kronii critic --help` and completion stay fast."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click
from kronii.critic.cli.http import SESSION_ENV, Critic, Options
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError
from kronii.launcher.cli.tables import print_table

__all__ = [
    "critic_command",
    "doctor_json",
    "hit_json",
    "local_time",
    "main",
    "parse_duration",
    "since_value",
]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"(?:\d+[smhdw])+")
_PART = re.compile(r"(\d+)([smhdw])")


# ---- durations and times -------------------------------------------------------------------------


def parse_duration(text: str) -> int:
    """Seconds in "90s", "30m", "1h30m", "7d", "2w"; "0" is zero. ValueError for anything else."""
    compact = text.strip().lower().replace(" ", "")
    if compact == "0":
        return 0
    if not _DURATION.fullmatch(compact):
        raise ValueError(f"{text!r} is not a duration such as 30m, 1h, 7d (or 0)")
    return sum(int(number) * _UNITS[unit] for number, unit in _PART.findall(compact))


def _utc(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def since_value(text: str, now: datetime | None = None) -> str:
    """--since as UTC RFC 3339: a duration back from now (7d, 12h), or a date or time (2025-10-01,
    2025-10-01T09:00; local unless it says its offset)."""
    now = now or datetime.now(UTC)
    try:
        return _utc(now - timedelta(seconds=parse_duration(text)))
    except ValueError:
        pass
    try:
        at = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"{text!r} is neither a duration (7d, 12h) nor a date or time (2025-10-01)"
        ) from None
    return _utc(at if at.tzinfo else at.astimezone())


def local_time(stamp: Any) -> str:
    """A UTC time as a person reads it: local, to the second; the date too when it is not today."""
    if not stamp:
        return "-"
    try:
        at = datetime.fromisoformat(str(stamp)).astimezone()
    except ValueError:
        return str(stamp)
    if at.date() == datetime.now().astimezone().date():
        return at.strftime("%H:%M:%S")
    return at.strftime("%Y-%m-%d %H:%M:%S")


def _duration_option(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return parse_duration(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _since_option(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return since_value(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


# ---- answers as JSON and as lines ----------------------------------------------------------------


def _whole(value: Any) -> int:
    """A proto JSON number (64-bit ones come as strings) as an int."""
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def hit_json(hit: dict[str, Any]) -> dict[str, Any]:
    """One hit for --json: the record as the critic sent it (UTC), the scores rounded."""
    return {
        "record": dict(hit.get("record") or {}),
        "similarity": round(float(hit.get("similarity") or 0.0), 4),
        "score": round(float(hit.get("score") or 0.0), 4),
        "tier": str(hit.get("tier") or ""),
    }


def _places_json(body: dict[str, Any]) -> dict[str, Any]:
    return {
        name: {
            "path": str(place.get("path") or ""),
            "ok": bool(place.get("ok", False)),
            "problem": str(place.get("problem") or ""),
            "pending": _whole(place.get("pending")),
        }
        for name, place in (("spool", body.get("spool") or {}), ("hints", body.get("hints") or {}))
    }


def _hooks_json(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "shell": str(seen.get("shell") or ""),
            "events": _whole(seen.get("events")),
            "last_seen": seen.get("last_seen") or None,
        }
        for seen in body.get("hooks") or []
    ]


def _queue_json(queue: dict[str, Any]) -> dict[str, Any]:
    return {
        "depth": _whole(queue.get("depth")),
        "capacity": _whole(queue.get("capacity")),
        "dropped": _whole(queue.get("dropped")),
        "latency_p50_ms": float(queue.get("latency_p50_ms") or 0.0),
        "latency_p95_ms": float(queue.get("latency_p95_ms") or 0.0),
    }


def doctor_json(body: dict[str, Any]) -> dict[str, Any]:
    """The doctor's report with every field present, counts as numbers and times in UTC (null when unset)."""
    model, records = body.get("model") or {}, body.get("records") or {}
    mute = body.get("mute") or {}
    return {
        "hooks": _hooks_json(body),
        **_places_json(body),
        "model": {
            "available": bool(model.get("available", False)),
            **{key: str(model.get(key) or "") for key in ("name", "sha256", "problem")},
        },
        "records": {key: _whole(records.get(key)) for key in ("ram", "files", "database", "redactions")},
        "embeddings": _queue_json(body.get("embeddings") or {}),
        "mute": {"muted": bool(mute.get("muted", False)), "until": mute.get("until") or None},
        "problems": [str(problem) for problem in body.get("problems") or []],
    }


def _place_line(place: dict[str, Any]) -> str:
    state = "ok" if place["ok"] else f"NOT OK: {place['problem'] or 'unusable'}"
    waiting = f", {place['pending']} waiting" if place["pending"] else ""
    return f"{place['path'] or '-'}: {state}{waiting}"


def doctor_lines(report: dict[str, Any]) -> list[str]:
    """The report as a person reads it: one labelled line per part, then what is wrong."""
    hooks = "; ".join(
        f"{seen['shell']}: {seen['events']} commands, last {local_time(seen['last_seen'])}"
        for seen in report["hooks"]
    )
    model = report["model"]
    if model["available"]:
        model_line = f"{model['name'] or 'available'} (sha256 {model['sha256'][:12] or '?'})"
    else:
        model_line = f"none: {model['problem'] or 'no model'}; search is by keywords"
    records, queue, mute = report["records"], report["embeddings"], report["mute"]
    rows = (
        ("hooks", hooks or "none seen since the critic started"),
        ("spool", _place_line(report["spool"])),
        ("hints", _place_line(report["hints"])),
        ("model", model_line),
        (
            "records",
            f"{records['ram']} in RAM, {records['files']} in files, {records['database']} in the database",
        ),
        ("redactions", str(records["redactions"])),
        (
            "embeddings",
            f"queue {queue['depth']}/{queue['capacity']}, {queue['dropped']} dropped, latency p50 "
            f"{queue['latency_p50_ms']:.1f} ms, p95 {queue['latency_p95_ms']:.1f} ms",
        ),
        ("muted", f"until {local_time(mute['until'])}" if mute["muted"] else "no"),
    )
    lines = [f"{label:<11} {value}" for label, value in rows]
    return lines + [f"problem     {problem}" for problem in report["problems"]]


def _record_row(record: dict[str, Any], *scores: str) -> list[str]:
    return [
        local_time(record.get("timestamp")),
        str(record.get("exit_status", 0)),
        *scores,
        str(record.get("cwd") or ""),
        str(record.get("command_line") or ""),
    ]


def _print_hits(hits: list[dict[str, Any]]) -> None:
    rows = [_record_row(hit["record"], f"{hit['similarity']:.2f}") for hit in hits]
    print_table(("WHEN", "EXIT", "SIM", "CWD", "COMMAND"), rows)


# ---- the commands --------------------------------------------------------------------------------


@click.group(
    "critic",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit codes: 0 done, 1 failed (doctor: something is wrong), 2 usage, 3 not found, 4 refused, "
    "5 unreachable.",
)
@click.option(
    "--url", default=None, metavar="URL",
    help="the critic's HTTP address (default $KRONII_CRITIC_URL, else the running `kronii up`'s, else "
    "KRONII_CRITIC_HOST and KRONII_CRITIC_HTTP_PORT)",
)  # fmt: skip
@click.option(
    "--timeout", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True,
    help="seconds per call",
)  # fmt: skip
@click.pass_context
def critic_command(ctx: click.Context, url: str | None, timeout: float) -> None:
    """Search your past commands, find failures like the last one, export, check, mute (the console critic)."""
    ctx.obj = Options(url, timeout)


_JSON = click.option("--json", "as_json", is_flag=True, help="print JSON (times in UTC)")


@critic_command.command("search", short_help="past commands like TEXT")
@click.argument("text")
@click.option("--take", type=click.IntRange(1, 500), default=20, show_default=True, help="at most this many")
@click.option("--failed", is_flag=True, help="only commands that failed")
@_JSON
@click.pass_obj
def search(options: Options, text: str, take: int, failed: bool, as_json: bool) -> None:
    """Past commands like TEXT, best first: semantic when the critic has its model, else by keywords."""
    body = Critic(options, "search").call(
        "POST", "/v1/critic/search", {"text": text, "take": take, "failed_only": failed}
    )
    hits = [hit_json(hit) for hit in body.get("hits") or []]
    if as_json:
        click.echo(json.dumps(hits))
    elif hits:
        _print_hits(hits)
    else:
        click.echo(f"no remembered command is like {text!r}", err=True)


@critic_command.command("similar", short_help="past failures like the last one here")
@click.argument("record_id", required=False, default="")
@click.option("--k", "k", type=click.IntRange(1, 100), default=5, show_default=True, help="at most this many")
@_JSON
@click.pass_obj
def similar(options: Options, record_id: str, k: int, as_json: bool) -> None:
    """Past failures (never a command that succeeded) similar to RECORD_ID; without it, to the last
    failing command of this shell's session (else of this directory). Exit 3 when there is no such
    record or no failing command yet."""
    body = Critic(options, "similar").call(
        "POST",
        "/v1/critic/similar",
        {"record_id": record_id, "session": os.environ.get(SESSION_ENV, ""), "cwd": _cwd(), "k": k},
    )
    anchor = dict(body.get("anchor") or {})
    hits = [hit_json(hit) for hit in body.get("hits") or []]
    if as_json:
        click.echo(json.dumps({"anchor": anchor, "hits": hits}))
        return
    click.echo(
        f"like {anchor.get('command_line', '')!r} (exit {anchor.get('exit_status', 0)}, "
        f"{local_time(anchor.get('timestamp'))}):"
    )
    if hits:
        _print_hits(hits)
    else:
        click.echo("nothing similar is remembered", err=True)


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:  # the directory was removed under the shell
        return ""


@critic_command.command("export", short_help="the remembered commands as JSON lines")
@click.option(
    "--since", default=None, metavar="WHEN", callback=_since_option,
    help="from this long ago (7d, 12h) or this date (2025-10-01); default: all that is kept",
)  # fmt: skip
@click.option(
    "--redact/--no-redact", default=True, show_default=True,
    help="mask paths and personal data too, for sharing (secrets were masked when kept)",
)  # fmt: skip
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None, metavar="FILE",
    help="write to FILE (created only you can read) instead of standard output",
)  # fmt: skip
@click.pass_obj
def export(options: Options, since: str | None, redact: bool, output: str | None) -> None:
    """The remembered commands from --since, oldest first, one JSON record per line."""
    params = {"redact": "true" if redact else "false"}
    if since:
        params["since"] = since
    lines = Critic(options, "export").stream_lines("/v1/critic/export", params)
    if output is None:
        for line in lines:
            sys.stdout.buffer.write(line)
        sys.stdout.flush()
        return
    count = _write_private(Path(output), lines)
    click.echo(f"wrote {count} records to {output}", err=True)


def _write_private(path: Path, lines: Any) -> int:
    """The lines into ``path`` (0600): into a new file beside it first, so a failed export leaves
    any earlier file whole."""
    scratch = path.with_name(f".{path.name}.{os.getpid()}")
    count = 0
    try:
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            for line in lines:
                handle.write(line)
                count += 1
        os.replace(scratch, path)
    except OSError as error:
        raise CommandError(
            f"kronii: critic export: cannot write {path}: {error.strerror}", exits.FAILED
        ) from None
    finally:
        scratch.unlink(missing_ok=True)
    return count


@critic_command.command("doctor", short_help="is the critic seeing your shells, and is all well")
@_JSON
@click.pass_obj
def doctor(options: Options, as_json: bool) -> None:
    """Hooks seen per shell, the spool and the hint directory, the model, records in RAM, files and
    the database, redactions, the embedding queue, and whether hints are muted. Exit 1 when the
    critic found something wrong."""
    report = doctor_json(Critic(options, "doctor").call("GET", "/v1/critic/doctor"))
    click.echo(json.dumps(report) if as_json else "\n".join(doctor_lines(report)))
    if report["problems"]:
        raise SystemExit(exits.FAILED)


@critic_command.command("mute", short_help="no hints for a while (mute 0 ends it)")
@click.argument("duration", metavar="DURATION", callback=_duration_option)
@_JSON
@click.pass_obj
def mute(options: Options, duration: int, as_json: bool) -> None:
    """No hints at the prompt for DURATION (30m, 1h, 1d; 0 unmutes). Commands are still remembered."""
    body = Critic(options, "mute").call("POST", "/v1/critic/mute", {"seconds": duration})
    state = {"muted": bool(body.get("muted", False)), "until": body.get("until") or None}
    if as_json:
        click.echo(json.dumps(state))
    elif state["muted"]:
        click.echo(f"hints muted until {local_time(state['until'])}")
    else:
        click.echo("hints unmuted")


def main(argv: Sequence[str] | None = None) -> int:
    """`kronii critic ...` as `kronii` runs it (same errors and exit codes); a leading "critic" is optional."""
    from kronii.launcher.cli.main import main as kronii_main

    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["critic"]:
        arguments = arguments[1:]
    return kronii_main(["critic", *arguments])
