"""Deadlines: fire_due with an explicit clock."""

from __future__ import annotations

from tgbot import model, timers
from tgbot.model import Seat, Status
from tgbot.store import Store
from tests.tgbot.helpers import lobby


async def test_untouched_lobby_expires_exactly_once(store, syncer):
    t = lobby(2, gid="L", now=1000, timeout=60)
    await store.claim_chat(t.chat_id, None, "L")
    await store.create(t)
    assert await timers.fire_due(store, syncer, now=1059) == 0
    assert (await store.load("L")).status is Status.LOBBY
    assert await timers.fire_due(store, syncer, now=1060) == 1
    got = await store.load("L")
    assert got.status is Status.CANCELLED and got.ended == "expired" and got.deadline is None
    assert syncer.requests == ["L"]
    assert await store.redis.zscore(store.k_deadlines, "L") is None
    assert await store.chat_game(t.chat_id, None) is None
    assert await timers.fire_due(store, syncer, now=1061) == 0
    assert await timers.fire_due(store, syncer, now=5000) == 0
    assert syncer.requests == ["L"] and (await store.load("L")).version == got.version


async def test_touched_lobby_left_alone_and_reindexed(store, syncer):
    await store.create(lobby(1, gid="T", now=1000, timeout=60))  # deadline 1060
    # touched at 1050: its own deadline moves to 1110 (the index follows on commit)
    await store.transact("T", lambda t: model.join(t, Seat(9, "Z"), 1050, 60))
    # simulate a stale index entry (e.g. a crash before the index update)
    await store.redis.zadd(store.k_deadlines, {"T": 1060})
    assert await timers.fire_due(store, syncer, now=1070) == 0
    t = await store.load("T")
    assert t.status is Status.LOBBY and t.deadline == 1110
    assert await store.redis.zscore(store.k_deadlines, "T") == 1110  # re-indexed
    assert syncer.requests == []
    assert await timers.fire_due(store, syncer, now=1110) == 1
    assert (await store.load("T")).status is Status.CANCELLED


async def test_deadline_passed_while_down_fires_once_on_first_poll(store, syncer):
    import time

    old = time.time() - 3600
    await store.create(lobby(3, gid="D", now=old, timeout=60))
    fresh = Store(store.redis)  # "the bot after a restart"
    assert await timers.fire_due(fresh, syncer) == 1
    assert await timers.fire_due(fresh, syncer) == 0
    assert (await fresh.load("D")).ended == "expired"
    assert syncer.requests == ["D"]


async def test_two_processes_fire_once(store, syncer):
    import asyncio

    await store.create(lobby(0, gid="X", now=0, timeout=10))
    other = Store(store.redis)
    r = await asyncio.gather(timers.fire_due(store, syncer, now=100), timers.fire_due(other, syncer, now=100))
    assert sorted(r) == [0, 1] and syncer.requests == ["X"]


async def test_running_game_and_gone_game(store, syncer):
    await store.create(lobby(3, gid="R", now=0, timeout=10))
    await store.transact("R", lambda t: model.start(t, 1, False, 3))
    await store.redis.zadd(store.k_deadlines, {"R": 5, "gone": 5})
    assert await timers.fire_due(store, syncer, now=100) == 0
    assert (await store.load("R")).status is Status.PLAYING
    assert await store.redis.zcard(store.k_deadlines) == 0


async def test_turn_timers_through_the_store_fire_once_each(store, syncer):
    import asyncio

    t = lobby(3, gid="P", now=0, timeout=10)
    await store.create(t)
    await store.transact("P", lambda t: model.start(t, 1, False, 4, now=0, turn_timeout=100, ai_delay=0.5))
    # the index is never later than the table's deadline, but a deadline that moved later is
    # not written with the change: the lobby's earlier entry fires as stale and is moved then
    assert await store.redis.zscore(store.k_deadlines, "P") == 10
    assert await timers.fire_due(store, syncer, now=20) == 0
    assert await store.redis.zscore(store.k_deadlines, "P") == 75
    other = Store(store.redis)
    # the reminder, then the automatic move, each fired by exactly one of two processes
    r = await asyncio.gather(timers.fire_due(store, syncer, now=80), timers.fire_due(other, syncer, now=80))
    assert sorted(r) == [0, 1]
    assert [n["kind"] for _, n in await store.outbox("P")] == ["remind"]
    r = await asyncio.gather(timers.fire_due(store, syncer, now=100), timers.fire_due(other, syncer, now=100))
    assert sorted(r) == [0, 1]
    got = await store.load("P")
    assert got.turn == 1 and got.deadline == 175 and got.deadline_kind == "remind"
    assert await store.redis.zscore(store.k_deadlines, "P") == 175
    _, log = await store.record("P")
    assert len(log) == 1
    assert [n["kind"] for _, n in await store.outbox("P")] == ["remind", "auto"]
    # a stale index entry (the player acted meanwhile) does nothing and is re-indexed
    await store.redis.zadd(store.k_deadlines, {"P": 120})
    assert await timers.fire_due(store, syncer, now=130) == 0
    assert (await store.load("P")).version == got.version
    assert await store.redis.zscore(store.k_deadlines, "P") == 175
