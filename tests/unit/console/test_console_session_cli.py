"""`kronii console` when the console is not there: a sentence saying to run `kronii up`, exit code 5
(kronii.launcher.cli.exits.UNREACHABLE), never a traceback; and a refusal is exit code 4."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from kronii.console.cli.console import console_command, fetch_login_link
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError
from kronii.launcher.infra import free_port


def test_a_console_that_is_not_running_is_a_sentence_and_exit_code_5() -> None:
    with pytest.raises(CommandError) as refused:
        fetch_login_link(f"http://127.0.0.1:{free_port()}", timeout=2)
    assert refused.value.code == exits.UNREACHABLE
    assert "`kronii up`" in refused.value.message


@pytest.fixture
def refusing_console() -> Iterator[str]:
    class Refuse(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.dumps(
                {"code": "permission_denied", "detail": "a login link is given only to `kronii console`"}
            )
            self.send_response(403)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_a_refused_link_is_exit_code_4_with_the_consoles_reason(refusing_console: str) -> None:
    with pytest.raises(CommandError) as refused:
        fetch_login_link(refusing_console)
    assert refused.value.code == exits.REFUSED
    assert "only to `kronii console`" in refused.value.message


def test_the_command_prints_the_sentence_not_a_traceback() -> None:
    result = CliRunner().invoke(console_command, ["--no-browser", "--url", f"http://127.0.0.1:{free_port()}"])
    assert isinstance(result.exception, CommandError)
    assert result.exception.code == exits.UNREACHABLE
