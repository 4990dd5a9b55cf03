"""The local front door's pure parts (kronii.edge.local_door): who the peer policy lets in, and how
a gRPC peer string is mapped back to the local client (loopback only, forgotten ports stay forgotten);
and the sign-in's capability names (kronii.edge.client_sessions), checked before any database."""

from __future__ import annotations

import os

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from kronii.edge.client_sessions import ClientSessions, clients_table
from kronii.edge.local_door import PeerPolicy, PeerRegistry
from kronii.edge.peers import PeerIdentity

ME = PeerIdentity(uid=os.getuid(), pid=100, exe="/usr/bin/kronii")


def test_the_policy_lets_in_the_services_own_user_by_default_and_no_other() -> None:
    policy = PeerPolicy.build()

    assert policy.check(ME).allowed
    refused = policy.check(PeerIdentity(uid=os.getuid() + 1, pid=100, exe="/usr/bin/kronii"))
    assert (refused.allowed, refused.reason) == (False, "uid_not_allowed")


def test_an_executable_allow_list_refuses_other_and_unknown_executables() -> None:
    policy = PeerPolicy.build(executables=["/usr/bin/kronii"])

    assert policy.check(ME).allowed
    assert policy.check(PeerIdentity(ME.uid, 100, "/usr/bin/other")).reason == "executable_not_allowed"
    assert policy.check(PeerIdentity(ME.uid, 100, "")).reason == "executable_unknown"


def test_the_registry_maps_only_loopback_peers_and_forgets_closed_ports() -> None:
    peers = PeerRegistry()
    peers.register(54321, ME)

    assert peers.identity_for_peer("ipv4:127.0.0.1:54321") == ME
    assert peers.identity_for_peer("ipv6:[::1]:54321") == ME
    assert peers.identity_for_peer("ipv4:10.0.0.7:54321") is None  # another host's port number
    assert peers.identity_for_peer("unix:/run/x.sock") is None
    peers.forget(54321)
    assert peers.identity_for_peer("ipv4:127.0.0.1:54321") is None
    assert len(peers) == 0


def _book(default: list[str]) -> ClientSessions:
    return ClientSessions(
        None,  # type: ignore[arg-type]  # these checks never reach Redis
        None,  # type: ignore[arg-type]  # nor the database
        service="broker",
        table=clients_table("broker_clients"),
        capabilities=["SIGN_IN", "READ"],
        default_capabilities=default,
    )


async def test_a_capability_the_service_does_not_know_is_refused_before_anything_is_stored() -> None:
    key = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    with pytest.raises(
        ValueError, match=r"unknown capability 'WRITE'; known capabilities are SIGN_IN, READ\.$"
    ):
        await _book(["READ"]).register_client("agent-1", key, ["read", "WRITE"])
    with pytest.raises(ValueError, match="unknown capability"):
        _book(["ADMIN"])


def test_a_clients_table_has_the_columns_the_sign_in_reads() -> None:
    table = clients_table("broker_clients")

    assert table.name == "broker_clients"
    assert [column.name for column in table.columns] == [
        "client_id",
        "public_key",
        "capabilities",
        "created_at",
        "revoked_at",
    ]
