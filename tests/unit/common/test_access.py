"""The mesh's access decision, and the kernel lookup it rests on (a real loopback connection)."""

from __future__ import annotations

import os
import socket

import pytest
from kronii.edge.access import (
    AccessPolicy,
    AccessRules,
    Caller,
    _proc_uid,
    bearer,
    grpc_peer_address,
    tcp_peer_uid,
)

OWN = 1000
POLICY = AccessPolicy(own_uid=OWN, api_token="mesh-secret")


def test_own_user_passes_without_a_token() -> None:
    assert POLICY.decide(Caller(OWN), None).allowed


def test_other_local_user_is_refused_even_with_the_mesh_token() -> None:
    decision = POLICY.decide(Caller(OWN + 1), "mesh-secret")
    assert (decision.allowed, decision.status) == (False, 403)
    assert decision.grpc_code_name == "PERMISSION_DENIED"


def test_other_local_user_is_refused_on_token_free_routes_too() -> None:
    assert not POLICY.decide(Caller(0), None, token_free=True).allowed


def test_unplaced_caller_needs_a_token() -> None:
    decision = POLICY.decide(Caller(None), None)
    assert (decision.allowed, decision.status) == (False, 401)
    assert decision.grpc_code_name == "UNAUTHENTICATED"


def test_unplaced_caller_with_the_mesh_token_passes() -> None:
    assert POLICY.decide(Caller(None), "mesh-secret").allowed


def test_unplaced_caller_with_another_token_is_refused_unless_the_service_checks_its_own() -> None:
    assert not POLICY.decide(Caller(None), "guess").allowed
    own_checks = AccessPolicy(own_uid=OWN, api_token=None, rules=AccessRules(self_authenticating=True))
    assert own_checks.decide(Caller(None), "kst1.claims.signature").allowed
    assert not own_checks.decide(Caller(None), None).allowed


def test_token_free_route_admits_an_unplaced_caller_for_its_sign_in() -> None:
    assert POLICY.decide(Caller(None), None, token_free=True).allowed


def test_bearer_parsing() -> None:
    assert bearer("Bearer abc") == "abc"
    assert bearer("bearer  abc ") == "abc"
    assert bearer("Basic abc") is None
    assert bearer("Bearer ") is None
    assert bearer(None) is None


def test_grpc_peer_address_forms() -> None:
    assert grpc_peer_address("ipv4:127.0.0.1:5000") == ("127.0.0.1", 5000)
    assert grpc_peer_address("ipv6:[::1]:5000") == ("::1", 5000)
    assert grpc_peer_address("unix:/run/x.sock") is None


@pytest.mark.parametrize(("family", "host"), [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")])
def test_the_kernel_names_the_owner_of_a_loopback_caller(family: int, host: str) -> None:
    with socket.socket(family) as server:
        try:
            server.bind((host, 0))
        except OSError:
            pytest.skip(f"{host} is not configured on this machine")
        server.listen()
        server_port = server.getsockname()[1]
        with socket.socket(family) as client:
            client.connect((host, server_port))
            peer_host, peer_port = client.getsockname()[:2]
            assert tcp_peer_uid(peer_host, peer_port, server_port) == os.geteuid()
            assert tcp_peer_uid(peer_host, peer_port, server_port, host) == os.geteuid()
            # The slow path, for kernels without sock_diag, finds the same owner.
            assert _proc_uid(family, peer_host, peer_port, server_port) == os.geteuid()
            # The same caller port toward another server is not this connection.
            assert tcp_peer_uid(peer_host, peer_port, server_port + 1 if server_port < 65535 else 1) is None


def test_an_address_with_no_local_socket_is_unknown() -> None:
    assert tcp_peer_uid("192.0.2.7", 40000, 8101) is None
    assert tcp_peer_uid("not-an-ip", 40000, 8101) is None
