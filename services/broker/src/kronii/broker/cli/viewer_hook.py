"""x11vnc's -afteraccept / -gone hook: tells the broker a VNC viewer attached or left.

Run as ``python -m kronii.broker.cli.viewer_hook attached|gone`` by x11vnc, which blocks until it
exits, on every viewer connect and disconnect: so stdlib only, one JSON line to the broker's
viewer-hook Unix socket (path in $KRONII_BROKER_VIEWER_SOCKET), a short deadline, and out.
x11vnc describes the client in RFB_* variables; only its client id is forwarded, since nothing
else about the network peer is needed, or trusted, by the broker.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Mapping, Sequence

__all__ = ["EVENTS", "SOCKET_ENV", "encode_event", "main"]

SOCKET_ENV = "KRONII_BROKER_VIEWER_SOCKET"
EVENTS = ("attached", "gone")
# x11vnc waits for this process: a broker that does not answer must not freeze remote viewing.
DEADLINE_S = 2.0


def encode_event(event: str, environ: Mapping[str, str]) -> bytes:
    """The line the broker reads: {"event": ..., "client_id": ...}."""
    line = json.dumps({"event": event, "client_id": environ.get("RFB_CLIENT_ID", "")})
    return line.encode() + b"\n"


def _send(path: str, payload: bytes) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(DEADLINE_S)
        sock.connect(path)
        sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    env = os.environ if environ is None else environ
    if len(args) != 1 or args[0] not in EVENTS:
        print(f"usage: python -m kronii.broker.cli.viewer_hook {'|'.join(EVENTS)}", file=sys.stderr)
        return 2
    path = env.get(SOCKET_ENV, "")
    if not path:
        print(f"kronii viewer hook: {SOCKET_ENV} is not set", file=sys.stderr)
        return 2
    try:
        _send(path, encode_event(args[0], env))
    except OSError as error:
        reason = error.strerror or type(error).__name__
        print(f"kronii viewer hook: the broker did not take the event: {reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
