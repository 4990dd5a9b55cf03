"""Ed25519 challenge-response on real Redis and PostgreSQL: a registered key gets a session, a
wrong key, a replayed challenge, an unknown or a revoked client do not."""

from __future__ import annotations

import uuid

import pytest
import redis.asyncio as aioredis
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from kronii.capture.adapters.callers import client_sessions
from kronii.capture.core.capabilities import AGENT_DEFAULT, Capability, names
from kronii.capture.core.identity import Identity
from kronii.edge.client_sessions import AuthError, ClientSessions, sign_challenge
from kronii.edge.peers import PeerIdentity

from tests.integration.capture_vault.conftest import Sessions


def _public(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def _client_id() -> str:
    return f"agent-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def book(redis: aioredis.Redis, db: Sessions) -> ClientSessions:
    return client_sessions(redis, db, challenge_ttl_secs=30, session_ttl_secs=600)


async def test_a_registered_key_signing_the_challenge_gets_a_session(
    book: ClientSessions, redis: aioredis.Redis
) -> None:
    key = Ed25519PrivateKey.generate()
    client_id = _client_id()
    await book.register_client(client_id, _public(key), ["list_meta", " READ_REDACTED "])

    challenge = await book.begin(client_id)
    session = await book.authenticate(challenge.challenge_id, client_id, sign_challenge(key, challenge.nonce))

    assert len(challenge.nonce) == 32
    # Stored and returned as capture's names, in its order, whatever the case and order they came in.
    assert session.capabilities == ("READ_REDACTED", "LIST_META")
    resolved = await book.resolve(session.token)
    assert resolved is not None
    assert resolved.client_id == client_id
    assert await redis.exists(f"kronii:capture:challenge:{challenge.challenge_id}") == 0  # used once
    identity = Identity.agent(resolved.client_id, resolved.capabilities)
    assert identity.kind == "agent"
    assert identity.allows(Capability.LIST_META)
    assert not identity.allows(Capability.REQUEST_CAPTURE)
    assert await book.resolve("made-up-token") is None


async def test_a_signature_by_another_key_is_refused_and_burns_the_challenge(book: ClientSessions) -> None:
    key = Ed25519PrivateKey.generate()
    client_id = _client_id()
    await book.register_client(client_id, _public(key))
    challenge = await book.begin(client_id)

    with pytest.raises(AuthError) as caught:
        await book.authenticate(
            challenge.challenge_id, client_id, sign_challenge(Ed25519PrivateKey.generate(), challenge.nonce)
        )
    assert caught.value.reason == "bad_signature"

    with pytest.raises(AuthError) as again:
        await book.authenticate(challenge.challenge_id, client_id, sign_challenge(key, challenge.nonce))
    assert again.value.reason == "challenge_unknown_or_used"


async def test_a_replayed_challenge_is_refused(book: ClientSessions) -> None:
    key = Ed25519PrivateKey.generate()
    client_id = _client_id()
    await book.register_client(client_id, _public(key))
    challenge = await book.begin(client_id)
    signature = sign_challenge(key, challenge.nonce)
    first = await book.authenticate(challenge.challenge_id, client_id, signature)

    with pytest.raises(AuthError) as caught:
        await book.authenticate(challenge.challenge_id, client_id, signature)

    assert first.capabilities == tuple(names(AGENT_DEFAULT))
    assert caught.value.reason == "challenge_unknown_or_used"


async def test_a_revoked_client_loses_its_sessions_and_gets_no_new_one(book: ClientSessions) -> None:
    key = Ed25519PrivateKey.generate()
    client_id = _client_id()
    await book.register_client(client_id, _public(key))
    challenge = await book.begin(client_id)
    session = await book.authenticate(challenge.challenge_id, client_id, sign_challenge(key, challenge.nonce))

    assert await book.revoke_client(client_id) is True

    assert await book.resolve(session.token) is None
    challenge = await book.begin(client_id)
    with pytest.raises(AuthError) as caught:
        await book.authenticate(challenge.challenge_id, client_id, sign_challenge(key, challenge.nonce))
    assert caught.value.reason == "revoked_client"
    assert await book.revoke_client(client_id) is False


async def test_an_unknown_client_gets_a_challenge_but_no_session(book: ClientSessions) -> None:
    key = Ed25519PrivateKey.generate()
    client_id = _client_id()

    challenge = await book.begin(client_id)
    with pytest.raises(AuthError) as caught:
        await book.authenticate(challenge.challenge_id, client_id, sign_challenge(key, challenge.nonce))

    assert caught.value.reason == "unknown_client"


async def test_a_challenge_answered_for_another_client_is_refused(book: ClientSessions) -> None:
    key = Ed25519PrivateKey.generate()
    mine, theirs = _client_id(), _client_id()
    await book.register_client(mine, _public(key))
    await book.register_client(theirs, _public(key))
    challenge = await book.begin(theirs)

    with pytest.raises(AuthError) as caught:
        await book.authenticate(challenge.challenge_id, mine, sign_challenge(key, challenge.nonce))

    assert caught.value.reason == "challenge_for_another_client"


async def test_registration_refuses_what_is_not_an_ed25519_key_or_a_known_capability(
    book: ClientSessions,
) -> None:
    key = _public(Ed25519PrivateKey.generate())

    with pytest.raises(ValueError, match="32 raw bytes"):
        await book.register_client(_client_id(), key[:31])
    with pytest.raises(ValueError, match="unknown capability"):
        await book.register_client(_client_id(), key, ["READ_EVERYTHING"])
    with pytest.raises(ValueError, match="client id"):
        await book.register_client("has spaces", key)


async def test_re_registering_a_key_ends_sessions_proven_with_the_old_one(book: ClientSessions) -> None:
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    client_id = _client_id()
    await book.register_client(client_id, _public(old))
    challenge = await book.begin(client_id)
    session = await book.authenticate(challenge.challenge_id, client_id, sign_challenge(old, challenge.nonce))

    await book.register_client(client_id, _public(new))

    assert await book.resolve(session.token) is None


def test_a_local_identity_carries_the_peer_and_may_only_request_captures() -> None:
    identity = Identity.local(PeerIdentity(uid=1000, pid=42, exe="/usr/bin/kronii-client"))

    assert identity.kind == "local"
    assert identity.actor == "local:uid:1000"
    assert (identity.uid, identity.pid) == (1000, 42)
    assert identity.allows(Capability.REQUEST_CAPTURE)
    # Reading needs a person's proof of presence first (kronii.edge.presence), never the bare socket.
    assert not identity.allows(Capability.READ_REDACTED)
    assert not identity.allows(Capability.LIST_META)
    assert not identity.allows(Capability.READ_RAW_ENCRYPTED)
