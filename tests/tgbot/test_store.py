"""Store: the CAS transaction path, indexes, dedup and deadline claims (fakeredis and real Redis)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

import core
from tgbot import model
from tgbot.model import Refused, Seat, Status
from tgbot.store import FINISHED_TTL, RECENT_TAPS, Store
from tests.tgbot.helpers import lobby, started

REAL_DB_FOR_RETRY = 8  # conftest.REAL_DB is 7; the e2e tests use 1 and 2


async def test_create_load_round_trip(store):
    t = lobby(2, gid="abc")
    assert await store.create(t)
    got = await store.load("abc")
    assert got == replace(t, version=1)
    assert not await store.create(t)  # the id is taken
    assert await store.load("nope") is None
    with pytest.raises(Refused) as e:
        await store.transact("nope", lambda t: model.Change(t))
    assert e.value.code == "no_game"
    assert "abc" in await store.live_games()
    assert [g for g, _ in await store.due(t.deadline)] == ["abc"]


async def test_started_table_round_trip(store):
    t, deal = started(4, gid="s1")
    assert await store.create(t)
    assert await store.load("s1") == replace(t, version=1)


async def test_concurrent_joins_both_seated(store):
    await store.create(lobby(1, gid="g"))
    a = store.transact("g", lambda t: model.join(t, Seat(10, "A"), 1000, 900))
    b = store.transact("g", lambda t: model.join(t, Seat(11, "B"), 1000, 900))
    ra, rb = await asyncio.gather(a, b)
    t = await store.load("g")
    assert sorted(s.user_id for s in t.seats) == [1, 10, 11]
    assert t.version == 3
    assert {ra.change.reply, rb.change.reply} == {"joined"}


async def test_many_concurrent_joins(store):
    await store.create(lobby(0, gid="g"))
    res = await asyncio.gather(*[store.transact("g", lambda t, i=i: model.join(t, Seat(100 + i, str(i)), 1000, 900)) for i in range(5)])
    t = await store.load("g")
    assert sorted(s.user_id for s in t.seats) == [100, 101, 102, 103, 104]
    assert all(r.change.reply == "joined" for r in res)


async def test_same_user_twice_seated_once(store):
    await store.create(lobby(1, gid="g"))
    r1, r2 = await asyncio.gather(*[store.transact("g", lambda t: model.join(t, Seat(10, "A"), 1000, 900)) for _ in range(2)])
    t = await store.load("g")
    assert [s.user_id for s in t.seats] == [1, 10]
    assert sorted([r1.change.reply, r2.change.reply]) == ["already_joined", "joined"]
    assert t.version == 2  # the no-op was not written


async def test_stale_version_commit_fails_and_transact_retries(store):
    await store.create(lobby(1, gid="g"))
    stale = await store.load("g")
    # another writer commits first
    await store.transact("g", lambda t: model.join(t, Seat(10, "A"), 1000, 900))
    ch = model.join(stale, Seat(11, "B"), 1000, 900)
    ch.log.append({"seat": 0, "believe": True})
    ch.outbox.append({"seq": 1, "kind": "x"})
    assert not await store._commit(stale, ch)
    cur = await store.load("g")
    assert [s.user_id for s in cur.seats] == [1, 10] and cur.version == 2
    assert await store.redis.llen(store.k_log("g")) == 0  # nothing of the failed commit
    assert await store.redis.llen(store.k_outbox("g")) == 0
    # transact: a racing write during fn forces a retry, which sees it
    calls = []

    def fn(t):
        calls.append(t.version)
        return model.join(t, Seat(12, "C"), 1000, 900)

    orig_load = store.load
    raced = False

    async def racing_load(gid):
        nonlocal raced
        t = await orig_load(gid)
        if not raced:
            raced = True
            other = Store(store.redis)
            await other.transact(gid, lambda t: model.join(t, Seat(13, "D"), 1000, 900))
        return t

    store.load = racing_load  # type: ignore[method-assign]
    try:
        done = await store.transact("g", fn)
    finally:
        store.load = orig_load  # type: ignore[method-assign]
    assert calls == [2, 3]
    final = await store.load("g")
    assert [s.user_id for s in final.seats] == [1, 10, 13, 12] and final.version == 4
    assert done.before.version == 3


async def test_log_and_outbox_committed_with_state(store):
    t, deal = started(3, gid="p")
    await store.create(t)
    # store the deal as start() would
    lb = lobby(3, gid="q")
    await store.create(lb)
    done = await store.transact("q", lambda t: model.start(t, 1, False, 11))
    got_deal, log = await store.record("q")
    assert got_deal == done.change.deal and log == []
    table = done.change.table
    seat = table.state.current
    v = core.view(table.state, seat)
    r = v.hand.ranks()[0]
    d1 = await store.transact("q", lambda t: model.act(t, t.seats[seat].user_id, t.turn, core.Play((r,), r)))
    nxt = d1.change.table
    d2 = await store.transact("q", lambda t: model.act(t, t.seats[t.state.current].user_id, t.turn, core.Challenge()))
    stored = await store.load("q")
    assert stored.turn == 2 and stored.version == 4
    _, log = await store.record("q")
    assert log == d1.change.log + d2.change.log and len(log) == 2
    box = await store.outbox("q")
    assert [o for _, o in box] == d2.change.outbox and box[0][1]["kind"] == "ChallengeResolved"
    await store.outbox_done("q", "not the head")
    assert len(await store.outbox("q")) == 1
    await store.outbox_done("q", box[0][0])
    assert await store.outbox("q") == []
    assert nxt.turn == 1


async def test_ended_game_gets_ttl_and_frees_chat(store):
    t = lobby(3, gid="e")
    assert await store.claim_chat(t.chat_id, None, "e")
    await store.create(t)
    assert (await store.chat_game(t.chat_id, None)).id == "e"
    assert not await store.claim_chat(t.chat_id, None, "other")  # one live game per chat
    for k in (store.k_game("e"), store.k_log("e")):
        assert await store.redis.ttl(k) in (-1, -2)
    await store.transact("e", lambda t: model.cancel(t, 1, False))
    assert 0 < await store.redis.ttl(store.k_game("e")) <= FINISHED_TTL
    assert await store.redis.get(store.k_chat(t.chat_id, None)) is None
    assert await store.chat_game(t.chat_id, None) is None
    assert await store.redis.zscore(store.k_deadlines, "e") is None
    assert await store.claim_chat(t.chat_id, None, "next")
    # the ended game stays in the live set until the syncer forgets it
    assert "e" in await store.live_games()
    await store.forget_live("e")
    assert "e" not in await store.live_games()


async def test_claim_chat_takes_over_a_dead_index(store):
    await store.redis.set(store.k_chat(-5, 3), "ghost")
    assert await store.claim_chat(-5, 3, "new")
    assert await store.redis.get(store.k_chat(-5, 3)) == "new"


async def test_first_delivery(store):
    assert await store.first_delivery(42) is True
    assert await store.first_delivery(42) is False
    assert await store.first_delivery(43) is True
    assert 0 < await store.redis.ttl(f"{store.p}:upd:42") <= 24 * 3600


async def test_a_tap_is_remembered_with_its_game_and_reads_the_table(store):
    assert await store.create(lobby(2, gid="g1"))
    assert await store.first_delivery(100, "g1") is True
    calls = []
    store.redis.hget = lambda *a: calls.append(a)  # the next load must not ask Redis
    assert (await store.load("g1")).id == "g1" and calls == []  # read in the same round trip
    del store.redis.hget
    assert await store.first_delivery(100, "g1") is False
    assert await store.first_delivery(99, "g1") is True  # out of order, not seen yet
    # the game keeps its latest RECENT_TAPS ids; an id older than all of them counts as seen
    for i in range(101, 101 + RECENT_TAPS):
        assert await store.first_delivery(i, "g1") is True
    assert await store.redis.zcard(store.k_upd("g1")) == RECENT_TAPS
    assert await store.first_delivery(100, "g1") is False and await store.first_delivery(50, "g1") is False
    assert await store.first_delivery(101 + RECENT_TAPS, "g1") is True
    assert 0 < await store.redis.ttl(store.k_upd("g1")) <= 24 * 3600


async def test_dm_flag(store):
    assert not await store.can_dm(5)
    await store.set_dm(5, True)
    assert await store.can_dm(5)
    await store.set_dm(5, False)
    assert not await store.can_dm(5)


async def test_claim_deadline_only_one_of_two_stores(store):
    other = Store(store.redis)
    await store.create(lobby(3, gid="d", now=1000, timeout=10))  # deadline 1010
    assert not await store.claim_deadline("d", 1005, 30)  # not due
    r = await asyncio.gather(store.claim_deadline("d", 1011, 30), other.claim_deadline("d", 1011, 30))
    assert sorted(r) == [False, True]
    assert await store.redis.zscore(store.k_deadlines, "d") == 1041
    assert not await other.claim_deadline("d", 1020, 30)  # leased
    assert await other.claim_deadline("d", 1041, 30)  # the lease ran out
    assert not await store.claim_deadline("missing", 2000, 30)


async def test_deadlines_index_is_never_later_than_the_table(store):
    assert await store.create(replace(lobby(3, gid="D"), deadline=500.0))
    assert await store.redis.zscore(store.k_deadlines, "D") == 500
    # later: not written (the earlier entry fires as stale and is moved then)
    await store.transact("D", lambda t: model.Change(replace(t, deadline=800.0)))
    assert await store.redis.zscore(store.k_deadlines, "D") == 500
    # earlier: written with the change
    await store.transact("D", lambda t: model.Change(replace(t, deadline=300.0)))
    assert await store.redis.zscore(store.k_deadlines, "D") == 300
    # no deadline any more: the entry stays until it fires (stale) and is dropped
    await store.transact("D", lambda t: model.Change(replace(t, deadline=None)))
    assert await store.redis.zscore(store.k_deadlines, "D") == 300
    await store.reschedule(await store.load("D"))
    assert await store.redis.zscore(store.k_deadlines, "D") is None


async def test_a_card_pick_claims_its_panel_with_the_de_duplication(store):
    t, _ = started(3, gid="K")
    assert await store.create(t)
    t = await store.load("K")
    uid = t.seats[0].user_id
    await store.tg_set("K", p0=7, pd0="digest", **{f"s{uid}": 0})
    # the first pick of "A" at this version: claimed in the de-duplication's round trip
    assert await store.first_delivery(1, "K", (7, "A", uid))
    table = await store.load("K")
    assert await store.take_pick_claim(table, 0, 7, "A") == ("digest", None)
    assert (await store.tg_get("K"))["pd0"] == store.pick_identity(table, "A")
    # the same pick again (a double tap): the panel shows it already
    assert await store.first_delivery(2, "K", (7, "A", uid))
    assert await store.take_pick_claim(await store.load("K"), 0, 7, "A") is True
    # a pick the tap turned out not to stand for (stale: redrawn without picks) is put back
    assert await store.first_delivery(3, "K", (7, "AA", uid))
    assert await store.take_pick_claim(await store.load("K"), 0, 7, "") is None
    assert (await store.tg_get("K"))["pd0"] == store.pick_identity(table, "A")
    # not that user's current panel: no claim, the redraw's own claim decides
    assert await store.first_delivery(4, "K", (8, "A", uid))
    assert await store.take_pick_claim(await store.load("K"), 0, 8, "A") is None


async def test_a_connection_redis_dropped_is_replaced_on_the_next_command(redis_server):
    """Redis closed every client connection (a restart, a timeout): the bot's next command
    reconnects and succeeds instead of failing one update per pooled connection."""
    from redis.asyncio import Redis

    from tgbot.store import connect

    url = redis_server.url.replace("/0", f"/{REAL_DB_FOR_RETRY}")
    client = await connect(url)
    admin = Redis.from_url(url, decode_responses=True)
    try:
        await client.set("retry:x", "1")
        me = await client.client_id()
        assert await admin.client_kill_filter(_id=me) == 1
        assert await client.get("retry:x") == "1"
    finally:
        await client.delete("retry:x")
        await client.aclose()
        await admin.aclose()

