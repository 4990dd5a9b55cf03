"""`kronii activity report|export|import-aw|delete`: the activity history the sensor keeps, over its
HTTP API. Titles were redacted before they were kept.

- `report [--since today] [--until ...]`: time per app and per title (tables, or --json).
- `export --format json|csv [-o FILE]`: every span of a range.
- `import-aw FILE`: ActivityWatch's own JSON export (window and AFK buckets); importing the same
  file again adds nothing.
- `delete --day 2026-12-06 | --app NAME | --all [--yes]`: the spans and the raw events, for good.

Times are local for a person (a day is the person's local day) and UTC in --json and exports. Exit
codes (kronii.launcher.cli.exits): 0 done; 1 failed; 2 usage (a bad time, a file that is not an
export); 4 refused; 5 the sensor is not running.

Only click and the standard library load here: `kronii activity --help` stays fast."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import click
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError
from kronii.launcher.cli.tables import print_table
from kronii.sensor.cli.http import Options, Sensor

__all__ = ["activity_command", "human_duration", "local_day", "resolve_since", "resolve_until"]

_AGO = re.compile(r"(\d+)([mhdw])")
_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_IMPORT_BATCH = 1000
_PAGE = 5000
_EXPORT_FIELDS = ("id", "kind", "start", "end", "app", "title", "window_id", "wm_class", "state")


# ---- times ---------------------------------------------------------------------------------------


def _midnight(day: date) -> datetime:
    """The start of a local day (the local offset of that day, so DST days are 23 or 25 hours)."""
    return datetime(day.year, day.month, day.day).astimezone()


def local_day(text: str) -> tuple[datetime, datetime]:
    """A local day YYYY-MM-DD as [its midnight, the next midnight)."""
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a day such as 2026-12-06") from None
    return _midnight(day), _midnight(day + timedelta(days=1))


def resolve_since(text: str, now: datetime) -> datetime:
    """--since: today, yesterday, a span back from now (30m, 12h, 7d, 2w), a local day
    (2026-12-06) or a date and time (local unless it says its offset)."""
    word = text.strip().lower()
    today = now.astimezone().date()
    if word == "today":
        return _midnight(today)
    if word == "yesterday":
        return _midnight(today - timedelta(days=1))
    ago = _AGO.fullmatch(word)
    if ago:
        return now - timedelta(seconds=int(ago.group(1)) * _UNITS[ago.group(2)])
    return _instant(text)


def resolve_until(text: str | None, since_text: str, now: datetime) -> datetime:
    """--until as --since reads it; unset, the end of the day --since named (yesterday), else now."""
    if text is not None:
        return resolve_since(text, now)
    if since_text.strip().lower() == "yesterday":
        return _midnight(now.astimezone().date())
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", since_text.strip()):
        return min(now, local_day(since_text)[1])
    return now


def _instant(text: str) -> datetime:
    try:
        at = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is not a time: use today, yesterday, 7d, 12h, 2026-12-06 or 2026-12-06T09:00"
        ) from None
    return at if at.tzinfo else at.astimezone()


def _utc(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def human_duration(seconds: float) -> str:
    """2h 05m, 12m 30s, 45s."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def _range(since: str, until: str | None) -> tuple[datetime, datetime]:
    now = datetime.now(UTC)
    start, end = resolve_since(since, now), resolve_until(until, since, now)
    if end <= start:
        raise click.BadParameter(f"--until ({end.astimezone():%Y-%m-%d %H:%M}) must be after --since")
    return start, end


# ---- the commands --------------------------------------------------------------------------------


@click.group(
    "activity",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit codes: 0 done, 1 failed, 2 usage, 4 refused, 5 unreachable.",
)
@click.option(
    "--url", default=None, metavar="URL",
    help="the sensor's HTTP address (default $KRONII_SENSOR_URL, else the running `kronii up`'s)",
)  # fmt: skip
@click.option(
    "--timeout", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True,
    help="seconds per call",
)  # fmt: skip
@click.pass_context
def activity_command(ctx: click.Context, url: str | None, timeout: float) -> None:
    """Your activity history: time per app and title, export, import from ActivityWatch, delete."""
    ctx.obj = Options(url, timeout)


_SINCE = click.option(
    "--since", default="today", show_default=True, metavar="WHEN",
    help="today, yesterday, 7d, 12h, a day (2026-12-06) or a time (2026-12-06T09:00, local)",
)  # fmt: skip
_UNTIL = click.option(
    "--until",
    default=None,
    metavar="WHEN",
    help="as --since; default now (or the end of the day --since names)",
)


@activity_command.command("report", short_help="time per app and per title")
@_SINCE
@_UNTIL
@click.option("--json", "as_json", is_flag=True, help="print JSON (times in UTC, seconds)")
@click.option("--top", type=click.IntRange(1, 1000), default=15, show_default=True, help="titles shown")
@click.pass_obj
def report(options: Options, since: str, until: str | None, as_json: bool, top: int) -> None:
    """Time per app and per title from --since to --until, each span clipped to the range."""
    start, end = _range(since, until)
    sensor = Sensor(options, "report")
    params = {"since": _utc(start), "until": _utc(end)}
    apps = sensor.call("GET", "/v1/activity/summary", params={**params, "by": "app"})
    titles = sensor.call("GET", "/v1/activity/summary", params={**params, "by": "title"})
    states = sensor.call("GET", "/v1/activity/summary", params={**params, "by": "state"})
    if as_json:
        click.echo(
            json.dumps(
                {
                    "since": apps["since"],
                    "until": apps["until"],
                    "total_seconds": apps["total_seconds"],
                    "apps": [{"app": row["key"], "seconds": row["seconds"]} for row in apps["rows"]],
                    "titles": [
                        {"title": row["key"], "app": row["app"], "seconds": row["seconds"]}
                        for row in titles["rows"]
                    ],
                    "states": [{"state": row["key"], "seconds": row["seconds"]} for row in states["rows"]],
                }
            )
        )
        return
    _print_report(start, end, apps, titles, states, top)


def _share(seconds: float, total: float) -> str:
    return f"{100 * seconds / total:.0f}%" if total else "-"


def _print_report(
    start: datetime,
    end: datetime,
    apps: dict[str, Any],
    titles: dict[str, Any],
    states: dict[str, Any],
    top: int,
) -> None:
    total = float(apps["total_seconds"])
    click.echo(
        f"{start.astimezone():%Y-%m-%d %H:%M} to {end.astimezone():%Y-%m-%d %H:%M}: {human_duration(total)} in focus"
    )
    if not apps["rows"]:
        click.echo("no activity is kept for this range", err=True)
        return
    click.echo()
    print_table(
        ("APP", "TIME", "SHARE"),
        [[row["key"], human_duration(row["seconds"]), _share(row["seconds"], total)] for row in apps["rows"]],
    )
    click.echo()
    rows = [
        [human_duration(row["seconds"]), row["app"] or "", row["key"] or "(no title)"]
        for row in titles["rows"][:top]
    ]
    print_table(("TIME", "APP", "TITLE"), rows)
    if states["rows"]:
        click.echo()
        click.echo("  ".join(f"{row['key']} {human_duration(row['seconds'])}" for row in states["rows"]))


def _pages(sensor: Sensor, start: datetime, end: datetime) -> Iterator[dict[str, Any]]:
    cursor: str | None = None
    while True:
        params = {"since": _utc(start), "until": _utc(end), "limit": _PAGE}
        if cursor:
            params["cursor"] = cursor
        body = sensor.call("GET", "/v1/activity/spans", params=params)
        yield from body["spans"]
        cursor = body.get("next_cursor")
        if not cursor:
            return


@activity_command.command("export", short_help="every span of a range, as JSON or CSV")
@click.option("--format", "form", type=click.Choice(["json", "csv"]), default="json", show_default=True)
@click.option("--since", default="400d", show_default=True, metavar="WHEN", help="as for report")
@_UNTIL
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None, metavar="FILE",
    help="write to FILE (created only you can read) instead of standard output",
)  # fmt: skip
@click.pass_obj
def export(options: Options, form: str, since: str, until: str | None, output: str | None) -> None:
    """The spans from --since (default: all that is kept) to --until, oldest first, times in UTC."""
    start, end = _range(since, until)
    spans = list(_pages(Sensor(options, "export"), start, end))
    if form == "json":
        text = json.dumps({"since": _utc(start), "until": _utc(end), "spans": spans}, indent=1) + "\n"
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=_EXPORT_FIELDS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(
            {key: "" if span.get(key) is None else span[key] for key in _EXPORT_FIELDS} for span in spans
        )
        text = buffer.getvalue()
    if output is None:
        click.echo(text, nl=False)
        return
    _write_private(Path(output), text)
    click.echo(f"wrote {len(spans)} spans to {output}", err=True)


def _write_private(path: Path, text: str) -> None:
    scratch = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(scratch, path)
    except OSError as error:
        raise CommandError(
            f"kronii: activity export: cannot write {path}: {error.strerror}", exits.FAILED
        ) from None
    finally:
        scratch.unlink(missing_ok=True)


@activity_command.command("import-aw", short_help="bring in an ActivityWatch export")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("--json", "as_json", is_flag=True, help="print the counts as JSON")
@click.pass_obj
def import_aw(options: Options, file: str, as_json: bool) -> None:
    """Bring in FILE, ActivityWatch's own JSON export (Settings, Export all buckets as JSON): its
    window buckets become focus spans, its AFK buckets state spans (not-afk active, afk inactive).
    Titles are redacted on the way in; a span already imported is skipped."""
    from kronii.sensor.core.aw_export import AwSummary, read_aw_export

    try:
        with open(file, encoding="utf-8") as handle:
            export_body = json.load(handle)
        summary = AwSummary()
        spans = [span.as_json() for span in read_aw_export(export_body, summary)]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, ValueError) as error:
        raise CommandError(f"kronii: activity import-aw: {file}: {error}", exits.USAGE) from None
    sensor, added, old = Sensor(options, "import-aw"), 0, 0
    for first in range(0, len(spans), _IMPORT_BATCH):
        batch = spans[first : first + _IMPORT_BATCH]
        body = sensor.call("POST", "/v1/activity/import", body={"source": "activitywatch", "spans": batch})
        added += int(body.get("added", 0))
        old += int(body.get("beyond_retention", 0))
        if len(spans) > _IMPORT_BATCH:
            click.echo(f"imported {first + len(batch)}/{len(spans)} spans", err=True)
    counts = {
        "spans": len(spans),
        "added": added,
        "already_there": len(spans) - added,
        "beyond_retention": old,
        "buckets": summary.buckets_read,
        "buckets_skipped": summary.buckets_skipped,
        "events_skipped": summary.events_skipped,
    }
    if old:
        click.echo(
            f"kronii: {old} of the spans added are older than the sensor keeps history "
            "(KRONII_SENSOR_ACTIVITY_RETENTION_DAYS): its next retention run deletes them; "
            "raise that setting and import again to keep them",
            err=True,
        )
    if as_json:
        click.echo(json.dumps(counts))
        return
    click.echo(
        f"{len(spans)} spans read from {len(summary.buckets_read)} buckets: {added} added, "
        f"{len(spans) - added} already there"
        + (f"; left out: {', '.join(summary.buckets_skipped)}" if summary.buckets_skipped else "")
    )


@activity_command.command("delete", short_help="delete a day, an app, or everything")
@click.option("--day", default=None, metavar="YYYY-MM-DD", help="one local day")
@click.option("--app", default=None, metavar="NAME", help="every span of one app")
@click.option("--all", "everything", is_flag=True, help="everything kept")
@click.option("--yes", is_flag=True, help="do not ask")
@click.pass_obj
def delete(options: Options, day: str | None, app: str | None, everything: bool, yes: bool) -> None:
    """Delete the spans and the raw activity events of a local day, of one app, or all of them, for
    good (the sensor's audit log keeps the counts, never a title)."""
    if sum((day is not None, app is not None, everything)) != 1:
        raise click.UsageError("say what to delete: --day YYYY-MM-DD, --app NAME or --all (one of them)")
    params: dict[str, str]
    if day is not None:
        start, end = local_day(day)
        params, what = {"since": _utc(start), "until": _utc(end)}, f"the activity of {day}"
    elif app is not None:
        params, what = {"app": app}, f"every span of {app}"
    else:
        params, what = {"all": "true"}, "all the activity history"
    if not yes:
        if not sys.stdin.isatty():
            raise CommandError(
                f"kronii: activity delete: to delete {what} without a terminal, add --yes", exits.USAGE
            )
        click.confirm(f"Delete {what}? This cannot be undone", abort=True)
    body = Sensor(options, "delete").call("DELETE", "/v1/activity", params=params)
    click.echo(f"deleted {body['deleted_spans']} spans and {body['deleted_events']} events ({what})")
