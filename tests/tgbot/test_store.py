"""Store: the game's owner (tables in memory, a lock per game), the compare-and-set commit, its
guarantees (exactly once per update, fencing by the lease's epoch), and the indexes (fakeredis and
a private redis-server)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

import core
from tgbot.game import lobby as game_lobby
from tgbot.game import play as game_play
from tgbot.game import table as game_table
from tgbot.game.table import Answer, RefusedError, Seat, Status
from tgbot.codec import _GID
from tgbot.game.table import Table
from tgbot.process.lease import Lease
from tgbot.owner.store import FINISHED_TTL, RECENT_UPDATES, FencedError, Store, UpdateMark, game_id_for_update
from tests.tgbot.helpers import Fenced, as_update, lobby, started

REAL_DB_FOR_RETRY = 8  # conftest.REAL_DB is 7; the e2e tests use 1 and 2


async def test_create_load_round_trip(store):
    t = lobby(2, gid="abc")
    assert await store.create(t)
    got = await store.load("abc")
    assert got == replace(t, version=1)
    assert not await store.create(t)  # the id is taken
    assert await store.load("nope") is None
    with pytest.raises(RefusedError) as e:
        await store.transact("nope", lambda t: game_table.Change(t))
    assert e.value.code == "no_game"
    assert "abc" in await store.records.live_games()


async def test_started_table_round_trip(store):
    t, deal = started(4, gid="s1")
    assert await store.create(t)
    assert await store.load("s1") == replace(t, version=1)


async def test_concurrent_joins_both_seated(store):
    await store.create(lobby(1, gid="g"))
    a = store.transact("g", lambda t: game_lobby.join(t, Seat(10, "A"), 1000, 900))
    b = store.transact("g", lambda t: game_lobby.join(t, Seat(11, "B"), 1000, 900))
    ra, rb = await asyncio.gather(a, b)
    t = await store.load("g")
    assert sorted(s.user_id for s in t.seats) == [1, 10, 11]
    assert t.version == 3
    assert {ra.change.reply, rb.change.reply} == {"joined"}


async def test_many_concurrent_joins(store):
    await store.create(lobby(0, gid="g"))
    res = await asyncio.gather(
        *[store.transact("g", lambda t, i=i: game_lobby.join(t, Seat(100 + i, str(i)), 1000, 900)) for i in range(5)]
    )
    t = await store.load("g")
    assert sorted(s.user_id for s in t.seats) == [100, 101, 102, 103, 104]
    assert all(r.change.reply == "joined" for r in res)


async def test_same_user_twice_seated_once(store):
    await store.create(lobby(1, gid="g"))
    r1, r2 = await asyncio.gather(
        *[store.transact("g", lambda t: game_lobby.join(t, Seat(10, "A"), 1000, 900)) for _ in range(2)]
    )
    t = await store.load("g")
    assert [s.user_id for s in t.seats] == [1, 10]
    assert sorted([r1.change.reply, r2.change.reply]) == ["already_joined", "joined"]
    assert t.version == 2  # the no-op was not written


async def test_stale_version_commit_fails_and_transact_retries(store):
    await store.create(lobby(1, gid="g"))
    stale = await store.load("g")
    # another writer commits first
    await store.transact("g", lambda t: game_lobby.join(t, Seat(10, "A"), 1000, 900))
    ch = game_lobby.join(stale, Seat(11, "B"), 1000, 900)
    ch.log.append({"seat": 0, "believe": True})
    ch.outbox.append({"seq": 1, "kind": "x"})
    assert await store._commit(stale, ch, None) == 0
    cur = await store.load("g")
    assert [s.user_id for s in cur.seats] == [1, 10] and cur.version == 2
    assert await store.redis.llen(store.keys.log("g")) == 0  # nothing of the failed commit
    assert await store.redis.llen(store.keys.outbox("g")) == 0
    # transact: a racing write during fn forces a retry, which sees it
    calls = []

    def fn(t):
        calls.append(t.version)
        return game_lobby.join(t, Seat(12, "C"), 1000, 900)

    orig_load = store._read
    raced = False

    async def racing_load(gid):
        nonlocal raced
        t = await orig_load(gid)
        if not raced:
            raced = True
            other = Store(store.redis)
            await other.transact(gid, lambda t: game_lobby.join(t, Seat(13, "D"), 1000, 900))
        return t

    store._read = racing_load  # type: ignore[method-assign]
    try:
        done = await store.transact("g", fn)
    finally:
        store._read = orig_load  # type: ignore[method-assign]
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
    done = await store.transact("q", lambda t: game_lobby.start(t, 1, False, 11))
    got_deal, log = await store.records.record("q")
    assert got_deal == done.change.deal and log == []
    table = done.change.table
    seat = table.state.current
    v = core.view(table.state, seat)
    r = v.hand.ranks()[0]
    d1 = await store.transact(
        "q", lambda t: game_play.act(t, t.seats[seat].user_id, t.action_count, core.Play((r,), r))
    )
    nxt = d1.change.table
    d2 = await store.transact(
        "q", lambda t: game_play.act(t, t.seats[t.state.current].user_id, t.action_count, core.Challenge())
    )
    stored = await store.load("q")
    assert stored.action_count == 2 and stored.version == 4
    _, log = await store.records.record("q")
    assert log == d1.change.log + d2.change.log and len(log) == 2
    box = await store.records.outbox("q")
    assert [o for _, o in box] == d2.change.outbox and box[0][1]["kind"] == "challenge_resolved"
    await store.records.outbox_drop("q", [box[0][0]])
    assert await store.records.outbox("q") == []
    assert nxt.action_count == 1


async def test_ended_game_gets_ttl_and_frees_chat(store):
    t = lobby(3, gid="e")
    assert await store.claim_chat(t.chat_id, None, "e")
    await store.create(t)
    assert (await store.chat_game(t.chat_id, None)).id == "e"
    assert not await store.claim_chat(t.chat_id, None, "other")  # one live game per chat
    for k in (store.keys.game("e"), store.keys.log("e")):
        assert await store.redis.ttl(k) in (-1, -2)
    await store.transact("e", lambda t: game_lobby.cancel(t, 1, False))
    assert 0 < await store.redis.ttl(store.keys.game("e")) <= FINISHED_TTL
    assert await store.redis.get(store.keys.chat(t.chat_id, None)) is None
    assert await store.chat_game(t.chat_id, None) is None
    assert await store.claim_chat(t.chat_id, None, "next")
    # the ended game stays in the live set until the syncer forgets it
    assert "e" in await store.records.live_games()
    await store.records.forget_live("e")
    assert "e" not in await store.records.live_games()


async def test_claim_chat_takes_over_a_dead_index(store):
    await store.redis.set(store.keys.chat(-5, 3), "ghost")
    assert await store.claim_chat(-5, 3, "new")
    assert await store.redis.get(store.keys.chat(-5, 3)) == "new"


async def test_dm_flag(store):
    assert not await store.records.can_dm(5)
    await store.records.set_dm(5, True)
    assert await store.records.can_dm(5)
    await store.records.set_dm(5, False)
    assert not await store.records.can_dm(5)


async def test_a_connection_redis_dropped_is_replaced_on_the_next_command(redis_server):
    """Redis closed every client connection (a restart, a timeout): the bot's next command
    reconnects and succeeds instead of failing one update per pooled connection."""
    from redis.asyncio import Redis

    from tgbot.storage.redis import connect

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


# -- exactly once: a second delivery of an update is recognised from what its commit stored -----


async def _stored(store: Store, gid: str) -> tuple[Table, int, int]:
    """The game as Redis holds it (not the copy in memory): table, log length, outbox length."""
    raw = await store.redis.hget(store.keys.game(gid), "table")
    return (
        Table.from_json(raw),
        await store.redis.llen(store.keys.log(gid)),
        await store.redis.llen(store.keys.outbox(gid)),
    )


async def test_a_second_delivery_of_an_update_is_applied_once(store):
    await store.create(lobby(1, gid="g"))
    calls = []

    def join_b(t):
        calls.append(t.version)
        return game_lobby.join(t, Seat(10, "B"), 1000, 900)

    mark = UpdateMark(500)
    first = await as_update(store, mark).transact("g", join_b)
    assert first.change.reply == "joined" and calls == [1]
    assert await store.redis.zrange(store.keys.applied("g"), 0, -1) == ["500.0"]
    # Telegram delivers it again (this process): recognised from memory, fn not even run
    mark = UpdateMark(500)
    again = await as_update(store, mark).transact("g", join_b)
    assert calls == [1] and again.change.reply == "ok" and again.change.table.version == 2
    # a take-over delivers it again (another process, nothing in memory): recognised from Redis
    other = Store(store.redis)
    mark = UpdateMark(500)
    third = await as_update(other, mark).transact("g", join_b)
    assert calls == [1] and third.change.table.version == 2
    table, _, _ = await _stored(store, "g")
    assert table.version == 2 and [s.user_id for s in table.seats] == [1, 10]
    # a first delivery of another update is never taken for a second one
    mark = UpdateMark(501)
    assert (
        await as_update(other, mark).transact("g", lambda t: game_lobby.join(t, Seat(11, "C"), 1000, 900))
    ).change.reply == "joined"
    assert [s.user_id for s in (await _stored(store, "g"))[0].seats] == [1, 10, 11]


async def test_an_update_that_commits_twice_to_a_game_is_recognised_commit_by_commit(store):
    """An update may commit twice to one game (the sixth join, then the start): each commit
    records ``<update id>.<n>``, so a second delivery skips what was applied and applies the rest
    (a crash between the two commits)."""
    await store.create(lobby(1, gid="g"))
    mark = UpdateMark(700)
    await as_update(store, mark).transact("g", lambda t: game_lobby.join(t, Seat(10, "B"), 1000, 900))
    # a change that writes nothing takes no mark: the next commit is still ``.1``
    await as_update(store, mark).transact("g", lambda t: game_table.Change(t))
    assert await store.redis.zrange(store.keys.applied("g"), 0, -1) == ["700.0"]
    # "crash" before the second commit; the update is delivered again to a new process
    other = Store(store.redis)
    mark = UpdateMark(700)
    assert (
        await as_update(other, mark).transact("g", lambda t: game_lobby.join(t, Seat(10, "B"), 1000, 900))
    ).change.reply == "ok"
    assert (
        await as_update(other, mark).transact("g", lambda t: game_lobby.join(t, Seat(11, "C"), 1000, 900))
    ).change.reply == "joined"
    assert sorted(await store.redis.zrange(store.keys.applied("g"), 0, -1)) == ["700.0", "700.1"]
    assert [s.user_id for s in (await _stored(store, "g"))[0].seats] == [1, 10, 11]


async def test_a_game_remembers_its_latest_updates(store):
    await store.create(lobby(0, gid="g"))
    for i in range(RECENT_UPDATES + 5):
        await store.transact("g", lambda t, i=i: game_lobby.set_lang(t, ("en", "ru")[i % 2]), UpdateMark(1000 + i))
    marks = await store.redis.zrange(store.keys.applied("g"), 0, -1)
    assert len(marks) == RECENT_UPDATES and marks[-1] == f"{1000 + RECENT_UPDATES + 4}.0"


async def test_a_creation_delivered_twice_makes_one_game(store):
    gid = game_id_for_update("42", 900)
    mark = UpdateMark(900)
    assert await as_update(store, mark).create(lobby(1, gid=gid))
    mark = UpdateMark(900)
    assert not await as_update(Store(store.redis), mark).create(lobby(1, gid=gid))  # the handler finds its game
    assert (await store.load(gid)).version == 1


async def test_a_commit_sent_again_by_redis_py_counts_as_committed(store):
    """redis-py sends a script again when its answer did not come in time (RETRY): the second run
    finds the update it records and answers -2, which the Store takes for its commit."""
    await store.create(lobby(1, gid="g"))
    script = store._commit_script
    runs: list[int] = []

    async def sent_twice(keys, args):
        runs.append(int(await script(keys=keys, args=args)))  # the answer is lost...
        runs.append(int(await script(keys=keys, args=args)))  # ...and the command sent again
        return runs[-1]

    store._commit_script = sent_twice
    mark = UpdateMark(77)
    done = await as_update(store, mark).transact(
        "g",
        lambda t: game_lobby.join(t, Seat(10, "B"), 1000, 900).__class__(
            game_lobby.join(t, Seat(10, "B"), 1000, 900).table,
            log=[{"x": 1}],
            outbox=[{"seq": 1, "kind": "k"}],
            reply=Answer.JOINED,
        ),
    )
    store._commit_script = script
    assert runs == [1, -2]
    assert done.change.reply == "joined" and done.change.table.version == 2
    table, nlog, nout = await _stored(store, "g")
    assert table == done.change.table == await store.load("g")  # memory and Redis agree
    assert (nlog, nout) == (1, 1)  # log and outbox appended once
    # the same script run twice by hand: committed, then "applied already"
    args_keys = [
        store.keys.game("h"),
        store.keys.log("h"),
        store.keys.outbox("h"),
        store.keys.telegram("h"),
        store.keys.applied("h"),
    ]
    argv = ["", "1", lobby(0, gid="h").to_json(), "", "0", "0", "5.0", 5, "0"]
    assert [await script(keys=args_keys, args=argv) for _ in range(2)] == [1, -2]


# -- fencing: a process whose lease epoch is older can never commit ------------------------------


async def test_an_older_epoch_is_fenced_and_changes_nothing(store):
    old = Store(store.redis)
    old.fence = Fenced(5)
    assert await old.create(lobby(1, gid="f"))
    assert (await old.load("f")).version == 1  # cached by the old holder
    assert await store.redis.hget(store.keys.game("f"), "epoch") == "5"
    # a new holder takes over: it raises the game's epoch before it first touches the game
    new = Store(store.redis)
    new.fence = Fenced(9)
    await new.raise_epoch("f")
    assert await store.redis.hget(store.keys.game("f"), "epoch") == "9"
    before = await _stored(store, "f")
    with pytest.raises(FencedError):
        await old.transact("f", lambda t: game_lobby.join(t, Seat(10, "B"), 1000, 900))
    assert await _stored(store, "f") == before  # nothing of it written
    assert old._tables == {}  # the fenced holder dropped what it kept in memory
    # the new holder commits; the old one stays fenced, also after reading the game again
    await new.transact("f", lambda t: game_lobby.join(t, Seat(11, "C"), 1000, 900))
    with pytest.raises(FencedError):
        await old.transact("f", lambda t: game_lobby.join(t, Seat(10, "B"), 1000, 900))
    table, _, _ = await _stored(store, "f")
    assert [s.user_id for s in table.seats] == [1, 11] and table.version == 2
    assert await store.redis.hget(store.keys.game("f"), "epoch") == "9"


async def test_raise_epoch_never_lowers_it(store):
    s = Store(store.redis)
    s.fence = Fenced(9)
    assert await s.create(lobby(1, gid="f"))
    s.fence = Fenced(3)
    await s.raise_epoch("f")
    assert await store.redis.hget(store.keys.game("f"), "epoch") == "9"
    s.fence = Fenced(12)
    await s.raise_epoch("f")
    assert await store.redis.hget(store.keys.game("f"), "epoch") == "12"
    await s.transact("f", lambda t: game_lobby.join(t, Seat(10, "B"), 1000, 900))  # the same epoch commits
    assert await store.redis.hget(store.keys.game("f"), "epoch") == "12"


# -- the owner: the table in memory is the one in Redis ------------------------------------------


async def test_the_table_in_memory_stays_the_one_in_redis(store):
    await store.create(lobby(3, gid="m"))
    await store.transact("m", lambda t: game_lobby.start(t, 1, False, 11))
    from tests.tgbot.helpers import ai_players

    players = ai_players(3, 3)
    reads = 0
    orig = store.redis.pipeline

    def counting_pipeline(*a, **kw):
        nonlocal reads
        reads += 1
        return orig(*a, **kw)

    store.redis.pipeline = counting_pipeline
    try:
        for _ in range(30):
            t = await store.load("m")
            if not t.live:
                break
            seat = t.state.current
            action = players[seat].act(core.view(t.state, seat))
            await store.transact("m", lambda cur: game_play.act(cur, cur.seats[seat].user_id, cur.action_count, action))
            assert store._tables["m"] == (await _stored(store, "m"))[0]
    finally:
        del store.redis.pipeline
    assert reads == 0  # every load and transaction after the first read came from memory
    assert await Store(store.redis).load("m") == await store.load("m")
    # the game's end drops it from memory; a load reads the ended table from Redis
    await store.transact("m", lambda t: game_lobby.cancel(t, 1, False))
    assert "m" not in store._tables
    assert (await store.load("m")).status is Status.CANCELLED


@pytest.mark.parametrize("ending", [False, True], ids=["move", "end"])
async def test_a_load_racing_a_commit_never_caches_an_older_table(store, ending):
    """A load (the view sync's) reads the game from Redis while a transaction wants to commit:
    the transaction waits for the read, so what stays in memory is never older than what was
    committed."""
    await store.create(lobby(2, gid="r"))
    store.forget_tables()
    gate, read = asyncio.Event(), asyncio.Event()
    orig = store.redis.pipeline

    class SlowRead:
        """The first load's read: done in Redis, then its answer held back until the commit."""

        def __init__(self, pipe):
            self.pipe = pipe

        def __getattr__(self, name):
            return getattr(self.pipe, name)

        async def execute(self):
            got = await self.pipe.execute()
            read.set()
            await gate.wait()
            return got

    def pipeline(*a, **kw):
        del store.redis.pipeline  # only the first
        return SlowRead(orig(*a, **kw))

    store.redis.pipeline = pipeline
    racing = asyncio.create_task(store.load("r"))
    await read.wait()
    fn = (
        (lambda t: game_lobby.cancel(t, 1, False))
        if ending
        else (lambda t: game_lobby.join(t, Seat(10, "B"), 1000, 900))
    )
    committing = asyncio.create_task(store.transact("r", fn))
    for _ in range(20):
        await asyncio.sleep(0)
    assert not committing.done()  # a read from Redis holds the game's lock: the commit waits
    gate.set()
    raced = await racing
    done = await committing
    assert raced.version == 1
    newest = (await _stored(store, "r"))[0]
    assert newest == done.change.table and newest.version == 2
    assert store._tables.get("r") in (None, newest)
    assert await store.load("r") == newest


def test_game_id_for_update_is_deterministic():
    a = game_id_for_update("123", 42)
    assert a == game_id_for_update("123", 42)  # a second delivery opens (finds) the same game
    assert len({a, game_id_for_update("123", 43), game_id_for_update("124", 42)}) == 3
    assert len(a) == 8 and _GID.match(a)  # fits a callback's game id


async def test_a_commit_after_a_late_renewal_goes_through_while_the_lease_is_ours(store, monkeypatch):
    # The runner gives the store the lease's check (tgbot.process.runner): a holder whose own
    # clock says its renewal is late asks Redis, instead of refusing its own commit.
    from tests.tgbot.test_lease import clock_ahead
    from tgbot.process import lease as lease_module

    lease = Lease(store.redis, store.keys.lease())
    assert await lease.try_acquire()
    store.fence = lease
    assert await store.create(lobby(1, gid="late"))
    monkeypatch.setattr(lease_module, "time", clock_ahead(3600))
    assert not lease.held()
    committed = await store.transact("late", lambda t: game_lobby.join(t, Seat(10, "B"), 1000, 900))
    assert [seat.user_id for seat in committed.change.table.seats] == [1, 10]
    await store.redis.set(store.keys.lease()[0], "someone-else 99")  # taken over meanwhile
    monkeypatch.setattr(lease_module, "time", clock_ahead(7200))
    with pytest.raises(FencedError):
        await store.transact("late", lambda t: game_lobby.join(t, Seat(11, "C"), 1000, 900))
