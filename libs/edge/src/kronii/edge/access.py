"""One access model for the whole mesh: who may call a service, decided before any route runs.

- A process of the user the service runs as may call every route. Over loopback TCP the kernel
  tells who owns the calling socket (/proc/net/tcp: the uid of the socket whose local address is
  the caller's and whose remote address is ours), so this needs no token and cannot be forged by
  the caller.
- A process of another local user is refused on every route but the open ones, token or not.
- A caller the kernel cannot place (another host, another network namespace: containers) needs
  a token: the mesh token shared by kronii's own services (`KRONII_API_TOKEN`), or, on services
  that check their own capability tokens on every route (the supervisor's signed tokens, the
  capture service's agent sessions), any bearer token, which the service then verifies.
- `/healthz`, `/readyz` and `/metrics` are open: they carry no private data.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import socket
import struct
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import grpc
from kronii.edge.grpc_guard import rewrapped
from kronii.foundation.errors import code_for_status

__all__ = [
    "OPEN_GRPC_PREFIXES",
    "OPEN_HTTP_PATHS",
    "AccessDecision",
    "AccessInterceptor",
    "AccessMiddleware",
    "AccessPolicy",
    "AccessRules",
    "Caller",
    "bearer",
    "grpc_peer_address",
    "tcp_peer_uid",
]

OPEN_HTTP_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
# Health checks and reflection describe the service, never the user's data.
OPEN_GRPC_PREFIXES = ("/grpc.health.v1.Health/", "/grpc.reflection.v1alpha.ServerReflection/")

REFUSED_OTHER_USER = "this service answers only the processes of the user it runs as"
MISSING_CREDENTIAL = (
    "a token is required: the caller is not a local process of the user kronii runs as "
    "(Authorization: Bearer <token>)"
)
BAD_CREDENTIAL = "the token was refused"

_Scope = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
_Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
_Asgi = Callable[[_Scope, _Receive, _Send], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling. `uid` is None when the kernel cannot say (not a socket of this host)."""

    uid: int | None
    address: str = ""

    @property
    def actor(self) -> str:
        return f"uid:{self.uid}" if self.uid is not None else f"remote:{self.address or '?'}"


@dataclass(frozen=True, slots=True)
class AccessDecision:
    allowed: bool
    status: int = 200
    reason: str = ""

    @property
    def grpc_code_name(self) -> str:
        return "PERMISSION_DENIED" if self.status == 403 else "UNAUTHENTICATED"


@dataclass(frozen=True)
class AccessRules:
    """What a service adds to the common model.

    `self_authenticating`: every private route verifies a capability token itself, so a bearer
    token from a remote caller is passed on for the service to check. `token_free_http` and
    `token_free_grpc`: routes where a remote caller proves itself inside the call (an agent's
    challenge-response sign-in); other local users are still refused there.
    """

    self_authenticating: bool = False
    token_free_http: frozenset[str] = frozenset()
    token_free_grpc: frozenset[str] = frozenset()


@dataclass(frozen=True)
class AccessPolicy:
    own_uid: int = field(default_factory=os.geteuid)
    api_token: str | None = None
    rules: AccessRules = field(default_factory=AccessRules)

    def decide(self, caller: Caller, token: str | None, *, token_free: bool = False) -> AccessDecision:
        if caller.uid is not None:
            if caller.uid == self.own_uid:
                return AccessDecision(True)
            return AccessDecision(False, 403, REFUSED_OTHER_USER)
        if token_free:
            return AccessDecision(True)
        if not token:
            return AccessDecision(False, 401, MISSING_CREDENTIAL)
        if self.api_token and hmac.compare_digest(token.encode(), self.api_token.encode()):
            return AccessDecision(True)
        if self.rules.self_authenticating:
            return AccessDecision(True)
        return AccessDecision(False, 401, BAD_CREDENTIAL)


# ---- who owns a loopback socket ------------------------------------------------------------------

_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST = 1
_NLMSG_ERROR = 2
_NO_COOKIE = 0xFFFFFFFF
# nlmsghdr (16) + inet_diag_msg's family..retrans (4) + sockid (48) + expires, rqueue, wqueue (12)
_UID_OFFSET = 16 + 4 + 48 + 12


def _family_and_ip(ip: str) -> tuple[int, str]:
    address = ipaddress.ip_address(ip)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    family = socket.AF_INET if isinstance(address, ipaddress.IPv4Address) else socket.AF_INET6
    return family, str(address)


def _diag_uid(family: int, src: str, sport: int, dst: str, dport: int) -> int | None:
    """Ask the kernel (sock_diag, the interface `ss` uses) for one socket by its exact addresses."""

    def pad(ip: str) -> bytes:
        return socket.inet_pton(family, ip).ljust(16, b"\0")

    sockid = (
        struct.pack(">HH", sport, dport)
        + pad(src)
        + pad(dst)
        + struct.pack("=III", 0, _NO_COOKIE, _NO_COOKIE)
    )
    request = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, 0xFFFFFFFF) + sockid
    message = struct.pack("=IHHII", 16 + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0) + request
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as netlink:
        netlink.settimeout(1.0)
        netlink.sendto(message, (0, 0))
        answer = netlink.recv(4096)
    _length, kind = struct.unpack_from("=IH", answer)
    if kind == _NLMSG_ERROR or len(answer) < _UID_OFFSET + 4:
        return None
    return int(struct.unpack_from("=I", answer, _UID_OFFSET)[0])


def _proc_uid(family: int, src: str, sport: int, dport: int) -> int | None:
    """The slow way (the kernel walks every socket): only where sock_diag is not available."""
    packed = socket.inet_pton(family, src)
    words = struct.unpack(f"={len(packed) // 4}I", packed)
    local = "".join(f"{word:08X}" for word in words) + f":{sport:04X}"
    table = "/proc/net/tcp" if family == socket.AF_INET else "/proc/net/tcp6"
    try:
        with open(table, encoding="ascii") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) > 7 and fields[1] == local and fields[2].endswith(f":{dport:04X}"):
                    return int(fields[7])
    except OSError:
        return None
    return None


def tcp_peer_uid(peer_ip: str, peer_port: int, server_port: int, server_ip: str | None = None) -> int | None:
    """The uid owning the TCP socket at `peer_ip:peer_port` connected to our `server_port`.

    None when no such socket is visible in this network namespace (a caller on another host or
    in a container), which callers must treat as unknown, never as allowed. Without `server_ip`
    (gRPC does not tell the local address) the loopback address of the caller's family is tried.
    """
    try:
        family, src = _family_and_ip(peer_ip)
        dst = (
            _family_and_ip(server_ip)[1]
            if server_ip
            else ("127.0.0.1" if family == socket.AF_INET else "::1")
        )
    except ValueError:
        return None
    try:
        uid = _diag_uid(family, src, peer_port, dst, server_port)
        if uid is not None or server_ip:
            return uid
    except OSError:
        pass
    return _proc_uid(family, src, peer_port, server_port)


def grpc_peer_address(peer: str) -> tuple[str, int] | None:
    """`ipv4:127.0.0.1:5000` or `ipv6:[::1]:5000` as (ip, port); None for other transports."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return None
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")
    try:
        return host, int(port)
    except ValueError:
        return None


def bearer(value: str | None) -> str | None:
    scheme, _, token = (value or "").strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


# ---- HTTP ---------------------------------------------------------------------------------------


def _header(scope: _Scope, name: bytes) -> str | None:
    headers: Iterable[tuple[bytes, bytes]] = scope.get("headers", ())
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def http_caller(scope: _Scope) -> Caller:
    client = scope.get("client")
    server = scope.get("server")
    if not client or not server or client[0] is None:
        return Caller(None, "")
    uid = tcp_peer_uid(str(client[0]), int(client[1]), int(server[1]), str(server[0]))
    return Caller(uid, f"{client[0]}:{client[1]}")


class AccessMiddleware:
    """Pure ASGI, so a refusal costs no routing and no body is read from a refused caller."""

    def __init__(self, app: _Asgi, policy: AccessPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_HTTP_PATHS:
            await self.app(scope, receive, send)
            return
        caller = http_caller(scope)
        token_free = scope.get("path") in self.policy.rules.token_free_http
        decision = self.policy.decide(caller, bearer(_header(scope, b"authorization")), token_free=token_free)
        if not decision.allowed:
            await _refuse(send, decision)
            return
        scope.setdefault("state", {})["caller"] = caller
        await self.app(scope, receive, send)


async def _refuse(send: _Send, decision: AccessDecision) -> None:
    body = json.dumps({"code": code_for_status(decision.status), "detail": decision.reason}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if decision.status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="kronii"'))
    await send({"type": "http.response.start", "status": decision.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


# ---- gRPC ---------------------------------------------------------------------------------------


class AccessInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # grpc ships no stubs
    """The same decision for gRPC; the peer is known only inside the call, so behaviours are wrapped."""

    def __init__(self, policy: AccessPolicy, server_port: Callable[[], int]) -> None:
        self.policy = policy
        self.server_port = server_port

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or method.startswith(OPEN_GRPC_PREFIXES):
            return handler
        metadata = dict(handler_call_details.invocation_metadata or ())
        token = bearer(str(metadata.get("authorization", "")))
        token_free = method in self.policy.rules.token_free_grpc
        return _guarded(handler, lambda context: self._check(context, token, token_free))

    async def _check(
        self, context: grpc.aio.ServicerContext[Any, Any], token: str | None, token_free: bool
    ) -> None:
        address = grpc_peer_address(context.peer())
        caller = Caller(None, "")
        if address is not None:
            caller = Caller(
                tcp_peer_uid(address[0], address[1], self.server_port()), f"{address[0]}:{address[1]}"
            )
        decision = self.policy.decide(caller, token, token_free=token_free)
        if not decision.allowed:
            await context.abort(getattr(grpc.StatusCode, decision.grpc_code_name), decision.reason)


_Check = Callable[[Any], Awaitable[None]]


def _guarded(handler: grpc.RpcMethodHandler, check: _Check) -> grpc.RpcMethodHandler:
    def wrap(behaviour: Any, _streaming_in: bool, streaming_out: bool) -> Any:
        async def call(request: Any, context: Any) -> Any:
            await check(context)
            return await behaviour(request, context)

        async def stream(request: Any, context: Any) -> Any:
            await check(context)
            result = behaviour(request, context)
            if hasattr(result, "__aiter__"):
                async for item in result:
                    yield item
            else:
                await result

        return stream if streaming_out else call

    return rewrapped(handler, wrap)
