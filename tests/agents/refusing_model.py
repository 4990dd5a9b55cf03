"""A model endpoint that refuses every request at once (HTTP 401), for running the real Codex CLI
offline. Codex sends each submitted prompt as its own turn, gets the refusal, shows the error and is
ready again within a second, so every prompt it took lands in its own `history.jsonl` entry. (With
no endpoint at all Codex waits for the network for minutes, and later prompts stay in its queue.)"""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator

__all__ = ["refusing_model_server"]

_BODY = (
    b'{"error":{"message":"kronii test endpoint: no model here","type":"invalid_request_error",'
    b'"code":"invalid_api_key"}}'
)


class _Refuse(http.server.BaseHTTPRequestHandler):
    def _refuse(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(_BODY)))
        self.end_headers()
        self.wfile.write(_BODY)

    do_GET = _refuse
    do_POST = _refuse

    def log_message(self, format: str, *args: object) -> None:
        return


@contextlib.contextmanager
def refusing_model_server() -> Iterator[str]:
    """Serve on a free loopback port; yields the base URL Codex's provider setting takes."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refuse)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
