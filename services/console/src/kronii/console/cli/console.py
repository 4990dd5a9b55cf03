"""`kronii console`: open the person's console in a browser, signed in through a one-time link (as
Jupyter does). `--no-browser` only prints the link. The link comes from the running console through a
request a web page cannot make (api/security.py); it is good once, for two minutes.

Exit codes (kronii.launcher.cli.exits): 0 opened or printed; 4 the console refused; 5 it is not running.

Only click and the standard library load here, so `kronii --help` stays fast."""

from __future__ import annotations

import click
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError

__all__ = ["console_command", "fetch_login_link"]

_START_IT = "the console is not running: start kronii with `kronii up`, then run `kronii console` again"


def fetch_login_link(base_url: str, timeout: float = 5.0) -> str:
    """A fresh one-time login link from the console at `base_url`; CommandError with a sentence else."""
    from kronii.launcher.local_http import JsonClient

    client = JsonClient(base_url, timeout, headers={"x-kronii-console": "link"})
    try:
        answer = client.request("POST", "/console/link")
    except OSError:
        raise CommandError(_START_IT, exits.UNREACHABLE) from None
    body = answer.body if isinstance(answer.body, dict) else {}
    if answer.status == 503:
        raise CommandError("the console is still starting: try again in a moment", exits.UNREACHABLE)
    if answer.status != 200 or not isinstance(body.get("url"), str):
        detail = body.get("detail") or f"HTTP {answer.status}"
        raise CommandError(f"the console refused a login link: {detail}", exits.REFUSED)
    return str(body["url"])


def _console_url(flag: str | None) -> str:
    from kronii.console.settings import ConsoleSettings
    from kronii.runtime.rendezvous import service_http_url

    return service_http_url("console", ConsoleSettings, flag=flag).url


@click.command("console")
@click.option("--no-browser", is_flag=True, help="Print the login link instead of opening a browser.")
@click.option("--url", default=None, help="The console's address (default: the running `kronii up`'s).")
def console_command(no_browser: bool, url: str | None) -> None:
    """Open the console (a local web page) signed in, with a one-time link good for two minutes."""
    link = fetch_login_link(_console_url(url))
    if no_browser:
        click.echo(link)
        return
    import webbrowser

    if webbrowser.open(link, new=2):
        click.echo("kronii console: opened in your browser (the link is good once, for two minutes)")
        return
    click.echo(
        "kronii console: no browser could be opened here; open this link (good once, for two minutes):"
    )
    click.echo(link)
