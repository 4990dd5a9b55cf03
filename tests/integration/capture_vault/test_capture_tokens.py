"""GetScreenshot tokens on real Redis: single use, bound to one screenshot id, short-lived, and
never stored in a form that would open anything."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import redis.asyncio as aioredis
from kronii.capture.adapters.tokens import TokenBook


async def test_a_token_opens_its_screenshot_once(redis: aioredis.Redis) -> None:
    book = TokenBook(redis, ttl_secs=60)
    token, expires_at = await book.issue("shot-one-abcdefghijkl", "local:uid:0")

    assert expires_at - datetime.now(UTC) <= timedelta(seconds=60)
    assert await book.redeem("shot-one-abcdefghijkl", token) is True
    assert await book.redeem("shot-one-abcdefghijkl", token) is False


async def test_a_token_for_one_screenshot_never_opens_another(redis: aioredis.Redis) -> None:
    book = TokenBook(redis)
    token, _ = await book.issue("shot-a-abcdefghijklmnop", "agent:a1")

    assert await book.redeem("shot-b-abcdefghijklmnop", token) is False
    # The wrong try burned it: it cannot be tried against ids one after another.
    assert await book.redeem("shot-a-abcdefghijklmnop", token) is False


async def test_concurrent_redeems_of_one_token_succeed_exactly_once(redis: aioredis.Redis) -> None:
    book = TokenBook(redis)
    token, _ = await book.issue("shot-race-abcdefghijkl", "agent:a1")

    results = await asyncio.gather(*(book.redeem("shot-race-abcdefghijkl", token) for _ in range(20)))

    assert results.count(True) == 1


async def test_a_token_expires_after_its_lifetime(redis: aioredis.Redis) -> None:
    book = TokenBook(redis, ttl_secs=1)
    token, _ = await book.issue("shot-late-abcdefghijkl", "agent:a1")

    await asyncio.sleep(1.3)

    assert await book.redeem("shot-late-abcdefghijkl", token) is False


async def test_redis_never_holds_the_token_itself(redis: aioredis.Redis) -> None:
    book = TokenBook(redis)
    token, _ = await book.issue("shot-dump-abcdefghijkl", "agent:a1")

    keys = [key.decode() async for key in redis.scan_iter(match="kronii:capture:token:*")]
    values = [await redis.get(key) for key in keys]

    assert keys
    assert not any(token in key for key in keys)
    assert not any(value is not None and token.encode() in value for value in values)
    grant = await book.redeem_grant("shot-dump-abcdefghijkl", token)
    assert grant is not None
    assert grant.identity == "agent:a1"


async def test_made_up_and_empty_tokens_open_nothing(redis: aioredis.Redis) -> None:
    book = TokenBook(redis)

    assert await book.redeem("shot-x-abcdefghijklmnop", "") is False
    assert await book.redeem("shot-x-abcdefghijklmnop", "not-a-token") is False
    assert await book.redeem("shot-x-abcdefghijklmnop", "x" * 10_000) is False
