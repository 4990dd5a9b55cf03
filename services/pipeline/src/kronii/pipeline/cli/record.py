"""`kronii record` (a click command, the ``kronii.commands`` entry point ``record``): the live bus of a
running `kronii up` into a file that `kronii replay` reads.

Defining the command imports click alone; the bus and the recording load when it runs."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Callable
from datetime import datetime, timedelta

import click
from kronii.launcher.cli import exits

__all__ = ["record_command"]


async def _record(out: str, minutes: float, ready: Callable[[], None]) -> int:
    from kronii.launcher.status import infra_url
    from kronii.pipeline.adapters.recording import record_from_bus
    from kronii.stores.bus import Bus

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):  # stop early, keeping what was recorded
        loop.add_signal_handler(signum, stop.set)
    bus = Bus("record")
    try:
        await asyncio.wait_for(bus.connect(infra_url("nats"), connect_timeout=3, wait_for_server=False), 5)
    except Exception as error:
        raise exits.CommandError(
            f"kronii record: cannot reach the bus of `kronii up` ({type(error).__name__}); is it running?",
            exits.UNREACHABLE,
        ) from None
    try:
        return await record_from_bus(bus, out, minutes * 60, stop=stop, ready=ready)
    finally:
        await bus.close()


def _until(minutes: float) -> str:
    """When a recording of `minutes` started now ends, in local time."""
    end = datetime.now() + timedelta(minutes=minutes)
    return end.strftime("%H:%M" if end.date() == datetime.now().date() else "%Y-%m-%d %H:%M")


@click.command(
    "record", help="Write the live activity of a running `kronii up` to a file for `kronii replay`."
)
@click.option(
    "--minutes",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="how long to record",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default="activity.jsonl",
    show_default=True,
    help="where to write",
)
@click.option("--json", "as_json", is_flag=True, help="print the count and the file as JSON when it ends")
def record_command(minutes: float, out: str, as_json: bool) -> None:
    from kronii.foundation.settings import SettingsError

    def ready() -> None:
        # With --json, standard output carries the JSON alone.
        click.echo(
            f"recording activity to {out} for {minutes:g} min (until {_until(minutes)});"
            " Ctrl-C stops early and keeps what it has",
            err=as_json,
        )

    try:
        count = asyncio.run(_record(out, minutes, ready))
    except SettingsError as error:
        raise exits.CommandError(error.message, exits.USAGE) from None
    except OSError as error:
        raise exits.CommandError(
            f"kronii record: cannot write {out!r}: {error.strerror}", exits.USAGE
        ) from None
    if as_json:
        click.echo(json.dumps({"events": count, "out": out}))
    else:
        click.echo(f"recorded {count} events to {out}")
