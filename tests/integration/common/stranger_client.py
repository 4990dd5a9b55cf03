"""A client run as another local user: stdlib HTTP, raw gRPC (grpcio only), a Unix socket.

It is started by the system interpreter under a second uid, so it imports nothing of kronii and
nothing from the test's virtual environment but a copy of grpc. It reads a JSON list of calls on
stdin and prints a JSON list of what each got.
"""

from __future__ import annotations

import http.client
import json
import socket
import sys
from typing import Any


def http_call(call: dict[str, Any]) -> dict[str, Any]:
    connection = http.client.HTTPConnection(call["host"], call["port"], timeout=10)
    body = call.get("body")
    connection.request(call["method"], call["path"], body=body, headers=call.get("headers", {}))
    response = connection.getresponse()
    return {"status": response.status, "body": response.read().decode("utf-8", "replace")}


def grpc_call(call: dict[str, Any]) -> dict[str, Any]:
    import grpc

    with grpc.insecure_channel(call["target"]) as channel:
        metadata = tuple(call.get("metadata", {}).items()) or None
        if call.get("streaming"):
            stub = channel.unary_stream(call["method"])
            try:
                for _ in stub(b"", timeout=10, metadata=metadata):
                    pass
                return {"code": "OK", "details": ""}
            except grpc.RpcError as error:
                return {"code": error.code().name, "details": error.details() or ""}
        unary = channel.unary_unary(call["method"])
        try:
            unary(b"", timeout=10, metadata=metadata)
            return {"code": "OK", "details": ""}
        except grpc.RpcError as error:
            return {"code": error.code().name, "details": error.details() or ""}


def unix_call(call: dict[str, Any]) -> dict[str, Any]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(5)
    try:
        sock.connect(call["path"])
    except OSError as error:
        return {"connected": False, "error": type(error).__name__}
    try:
        # An HTTP/2 preface: a front door that lets us through would answer with a SETTINGS frame.
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        answer = sock.recv(64)
        return {"connected": True, "answered": len(answer) > 0}
    except OSError as error:
        return {"connected": True, "answered": False, "error": type(error).__name__}
    finally:
        sock.close()


def main() -> None:
    calls = json.load(sys.stdin)
    handlers = {"http": http_call, "grpc": grpc_call, "unix": unix_call}
    results = []
    for call in calls:
        try:
            results.append(handlers[call["kind"]](call))
        except Exception as error:  # a refused connection is an answer too
            results.append({"error": f"{type(error).__name__}: {error}"})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
