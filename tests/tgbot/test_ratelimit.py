"""The Redis rate limiter: group and overall windows shared across limiter instances (processes),
uncounted calls never wait, a 429 blocks only its chat, deferring callers get Throttled."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis
from telegram.error import NetworkError, RetryAfter

from tgbot import ratelimit
from tgbot.ratelimit import RedisRateLimiter, Throttled, counted

DB = 9


@pytest.fixture
async def rredis(redis_server):
    client = Redis.from_url(redis_server.url.replace("/0", f"/{DB}"), decode_responses=True)
    await client.flushdb()
    yield client
    await client.flushdb()
    await client.aclose()


def _limiter(redis, **kw) -> RedisRateLimiter:
    lim = RedisRateLimiter(**{"group_max": 3, "group_period": 30.0, "overall_max": 100, "overall_period": 1.0, **kw})
    lim.attach(redis)
    return lim


def test_counted_methods():
    assert counted("sendMessage") and counted("editMessageText") and counted("copyMessage")
    assert not counted("answerCallbackQuery") and not counted("getUpdates") and not counted("sendChatAction")
    assert not counted("deleteMessage")


async def test_group_window_is_shared_between_processes(rredis):
    a, b = _limiter(rredis), _limiter(rredis)  # two processes on one Redis
    assert (await a.admit(-1))[1] == 0
    assert (await b.admit(-1))[1] == 0
    assert (await a.admit(-1))[1] == 0
    wait, reason = await b.admit(-1)
    assert reason == 2 and 29 < wait <= 30 * ratelimit.SAFETY + ratelimit.LATENCY + 0.05
    # another group and a private chat are not held up
    assert (await b.admit(-2))[1] == 0
    assert (await a.admit(42))[1] == 0


async def test_overall_slots_are_leased_in_growing_batches_from_the_shared_window(rredis, monkeypatch):
    monkeypatch.setattr(ratelimit, "LEASE_TTL", 60.0)  # no lease runs out during the test
    a = _limiter(rredis, overall_max=100)
    assert [(await a.admit(40 + i))[1] for i in range(7)] == [0] * 7
    assert a.calls == 3  # leases of 1, 2 and 4 slots, each spent in time
    # another process gets what is left of the shared window, then waits
    b = _limiter(rredis, overall_max=9)
    assert [(await b.admit(50 + i))[1] for i in range(3)] == [0, 0, 1]
    # a group's message takes a leased slot and one round trip for its own window
    c = _limiter(rredis, overall_max=100)
    assert (await c.admit(-1))[1] == 0 and c.calls == 2


async def test_a_lease_left_unspent_is_given_back_and_shrinks(rredis, monkeypatch):
    monkeypatch.setattr(ratelimit, "LEASE_TTL", 60.0)
    lim = _limiter(rredis)
    for i in range(4):
        await lim.admit(42)  # leases of 1, 2, then 4 (one of them spent)
    assert await rredis.zcard(lim.overall_keys[0]) == 7
    lim._slots_until = 0.0  # the 4-slot lease runs out
    await lim.admit(42)
    # its 3 unspent slots were given back; the new lease is one slot again
    assert await rredis.zcard(lim.overall_keys[0]) == 5 and lim._lease_size == 1


async def test_uncounted_never_touch_redis_and_deferred_calls_raise(rredis):
    lim = _limiter(rredis, group_max=1)
    made = []

    async def call(*args, **kw):
        made.append(args)
        return True

    for _ in range(5):
        await lim.process_request(call, ("ans",), {}, "answerCallbackQuery", {"callback_query_id": "1"}, None)
    assert lim.calls == 0 and len(made) == 5
    await lim.process_request(call, ("m1",), {}, "sendMessage", {"chat_id": -5}, {"defer": True})
    with pytest.raises(Throttled) as e:
        await lim.process_request(call, ("m2",), {}, "editMessageText", {"chat_id": -5}, {"defer": True})
    assert e.value.seconds > 25 and ("m2",) not in made


async def test_429_blocks_that_chat_only(rredis):
    lim = _limiter(rredis, group_max=100)
    other = _limiter(rredis, group_max=100)

    async def too_many(*args, **kw):
        raise RetryAfter(2)

    async def ok(*args, **kw):
        return True

    with pytest.raises(RetryAfter):
        await lim.process_request(too_many, (), {}, "sendMessage", {"chat_id": -7}, {"defer": True})
    # every process sees the block for that chat; another chat goes at once
    wait, reason = await other.admit(-7)
    assert reason == 3 and 1 < wait <= 2
    assert await asyncio.wait_for(other.process_request(ok, (), {}, "sendMessage", {"chat_id": -8}, None), 1)
    with pytest.raises(Throttled):
        await other.process_request(ok, (), {}, "sendMessage", {"chat_id": -7}, {"defer": True})


async def test_429_in_a_private_chat_blocks_it_for_every_process(rredis):
    lim, other = _limiter(rredis), _limiter(rredis)

    async def too_many(*args, **kw):
        raise RetryAfter(2)

    with pytest.raises(RetryAfter):
        await lim.process_request(too_many, (), {}, "editMessageText", {"chat_id": 42}, {"defer": True})
    assert (await lim.admit(42))[1] == 3
    # another process learns of it with its next lease; other private chats go on
    wait, reason = await other.admit(42)
    assert reason == 3 and 1 < wait <= 2
    assert (await other.admit(43))[1] == 0


async def test_only_one_of_several_starting_processes_sets_the_webhook(rredis):
    workers = [_limiter(rredis) for _ in range(3)]
    made = []

    async def set_webhook(*args, **kw):
        made.append(1)
        return True

    results = await asyncio.gather(*(w.process_request(set_webhook, (), {}, "setWebhook", {"url": "https://x/h"}, None) for w in workers))
    assert results == [True, True, True] and len(made) == 1


async def test_a_failed_set_webhook_leaves_it_to_the_next_process(rredis):
    first, second = _limiter(rredis), _limiter(rredis)

    async def refused(*args, **kw):
        raise NetworkError("timed out")

    with pytest.raises(NetworkError):
        await first.process_request(refused, (), {}, "setWebhook", {"url": "https://x/h"}, None)
    made = []

    async def set_webhook(*args, **kw):
        made.append(1)
        return True

    # (a worker restarted after the failure, within the lock's 30 s, sets it after all)
    assert await second.process_request(set_webhook, (), {}, "setWebhook", {"url": "https://x/h"}, None) is True
    assert made == [1]


async def test_a_reply_that_would_wait_past_reply_wait_is_dropped(rredis, monkeypatch):
    # a group spamming commands past its window: a reply waits a few seconds at most, then is
    # dropped (Throttled) rather than sent a minute late or holding its update that long
    monkeypatch.setattr(ratelimit, "REPLY_WAIT", 1.0)
    lim = _limiter(rredis, group_max=1)
    made = []

    async def call(*args, **kw):
        made.append(args)
        return True

    await lim.process_request(call, ("r1",), {}, "sendMessage", {"chat_id": -9}, None)
    with pytest.raises(Throttled):
        await asyncio.wait_for(lim.process_request(call, ("r2",), {}, "sendMessage", {"chat_id": -9}, None), 0.5)
    assert made == [("r1",)]
    # a short wait is still waited out
    short = _limiter(rredis, group_max=1, group_period=0.2)
    await short.process_request(call, ("s1",), {}, "sendMessage", {"chat_id": -10}, None)
    await asyncio.wait_for(short.process_request(call, ("s2",), {}, "sendMessage", {"chat_id": -10}, None), 2)
    assert made[-2:] == [("s1",), ("s2",)]
