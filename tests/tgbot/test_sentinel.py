"""The bot on Redis Sentinel: a primary, a replica and three sentinels started for each test
(``sentinels``, tests/redis_server.py), never a Redis already running.

``connect('redis+sentinel://…/cheat')`` gives a client of the primary (passwords for the data
nodes and for the sentinels included) over a pool that makes a burst wait; a game played
partway through the store goes on to its end through the same client after ``SENTINEL
FAILOVER``, every action once, on the new primary, its Lua scripts loaded there again; a client
left on a demoted primary is moved to the new one by its READONLY error; closing the client
leaves no task behind; malformed URLs are refused with ``ValueError``.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from redis.asyncio import Redis
from redis.asyncio.sentinel import MasterNotFoundError, Sentinel
from redis.exceptions import ConnectionError as RedisConnectionError

import core
from core.record import replay
from tgbot import model, stats
from tgbot.sentinel import BlockingSentinelConnectionPool, SentinelConnection, SentinelRedis, parse_sentinel_url
from tgbot.store import MAX_CONNECTIONS, RETRY, Store, connect
from tests.redis_server import RedisSentinelServers
from tests.tgbot.helpers import ai_players, lobby

GID = "sentinel1"


@pytest.fixture
def sentinels():
    """One primary, one replica, three sentinels (quorum 2, down after 1 s), as service
    ``cheat``; stopped after the test."""
    servers = RedisSentinelServers()
    yield servers
    servers.stop()


async def _until(ready, what: str, timeout: float = 15) -> None:
    """Poll ``ready()`` every 50 ms, letting the event loop run (the client's listeners), until
    it is true; fails the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


async def _fail_over(servers: RedisSentinelServers, client: Redis | None = None) -> int:
    """Once the replica has every write so far (a planned fail-over then loses none),
    ``SENTINEL FAILOVER``, then wait until every sentinel names the replica as the primary, it
    answers as one, and ``client`` (when given) is connected to it; returns its port."""
    replica = servers.replicas[0]
    servers.wait_in_sync()
    assert servers.sentinel_cli(servers.sentinel_ports[0], "sentinel", "failover", servers.service).strip() == "OK"
    await _until(lambda: servers.primary_ports() == {replica.port}, "the sentinels did not switch")
    await _until(lambda: servers.node_cli(replica, "role").startswith("master"), "the replica is not promoted")
    if client is not None:
        await _until(lambda: client.connection_pool.master_address == ("127.0.0.1", replica.port), "the client did not follow the switch")
    return replica.port


def test_url_parts():
    got = parse_sentinel_url("redis+sentinel://bot:p%3Aw@a.example:26380,b.example,[::1]:5000/cheat/3?sentinel_password=s%20p")
    assert got.sentinels == [("a.example", 26380), ("b.example", 26379), ("::1", 5000)]
    assert (got.service, got.db, got.username, got.password, got.sentinel_password) == ("cheat", 3, "bot", "p:w", "s p")
    plain = parse_sentinel_url("redis+sentinel://s1/cheat")
    assert (plain.db, plain.username, plain.password, plain.sentinel_password) == (0, None, None, None)
    assert parse_sentinel_url("redis+sentinel://:pw@s1/cheat/").password == "pw"
    assert parse_sentinel_url("redis+sentinel://:@s1/cheat").password == ""


@pytest.mark.parametrize("url, words", [
    ("redis://s1:26379/cheat", "scheme"),
    ("redis+sentinel://s1:26379", "service"),
    ("redis+sentinel://s1:26379/", "service"),
    ("redis+sentinel://s1:26379/cheat/0/x", "service"),
    ("redis+sentinel://s1:26379/cheat/zero", "database"),
    ("redis+sentinel:///cheat", "host"),
    ("redis+sentinel://s1,,s2/cheat", "host"),
    ("redis+sentinel://s1:port/cheat", "port"),
    ("redis+sentinel://s1:70000/cheat", "port"),
    ("redis+sentinel://:secret@s1/cheat?password=secret", "sentinel_password"),
])
def test_malformed_urls_are_refused(url, words):
    with pytest.raises(ValueError, match=words) as e:
        parse_sentinel_url(url)
    assert "secret" not in str(e.value).replace("sentinel_password", "")


async def test_connect_gives_the_primary_and_a_burst_waits(sentinels):
    client = await connect(sentinels.url)
    try:
        assert isinstance(client, SentinelRedis) and isinstance(client.connection_pool, BlockingSentinelConnectionPool)
        assert client.connection_pool.master_address == ("127.0.0.1", sentinels.primary.port)
        await client.set("cheat:probe", "1")
        assert sentinels.node_cli(sentinels.primary, "get", "cheat:probe").strip() == "1"
        replica = sentinels.replicas[0]
        assert sentinels.node_cli(replica, "role").startswith("slave")
        await _until(lambda: sentinels.node_cli(replica, "get", "cheat:probe").strip() == "1", "not replicated")
        # more commands at once than the pool has connections: they wait for one
        got = await asyncio.gather(*(client.get("cheat:probe") for _ in range(3 * MAX_CONNECTIONS)))
        assert got == ["1"] * (3 * MAX_CONNECTIONS)
        assert len(client.connection_pool._in_use_connections) + len(client.connection_pool._available_connections) <= MAX_CONNECTIONS
    finally:
        await client.aclose()
    for _ in range(10):  # closed at once: a cancellation may come as a listener subscribes
        await (await connect(sentinels.url)).aclose()
    assert [t for t in asyncio.all_tasks() if t.get_name().startswith("sentinel-listener")] == []


async def test_passwords_of_the_data_nodes_and_of_the_sentinels():
    servers = RedisSentinelServers(sentinels=1, password="data pw", sentinel_password="sentinel-pw")
    try:
        url = servers.url
        assert "data%20pw" in url
        client = await connect(url)
        try:
            await client.set("cheat:probe", "2")
            assert servers.node_cli(servers.primary, "get", "cheat:probe").strip() == "2"
        finally:
            await client.aclose()
        with pytest.raises(MasterNotFoundError, match="cannot reach any sentinel.*password"):  # a wrong password
            await (await connect(url.replace("sentinel-pw", "wrong"))).aclose()
    finally:
        servers.stop()


async def test_a_game_goes_on_through_a_failover(sentinels):
    client = await connect(sentinels.url)
    store = Store(client)
    try:
        assert await store.create(lobby(4, gid=GID))
        await store.transact(GID, lambda t: model.start(t, 1, False, 7))
        players = ai_players(4, 7)

        async def play(steps: int | None) -> int:
            """Actions committed, ``steps`` of them or to the end; each tap carries the turn it
            was drawn for (a second application of one would be refused as stale)."""
            done = 0
            table = await store.load(GID)
            while table.status is model.Status.PLAYING and done != steps:
                seat, turn = table.state.current, table.turn
                action = players[seat].act(core.view(table.state, seat))
                got = await store.transact(GID, lambda cur: model.act(cur, cur.seats[seat].user_id, turn, action))
                table = got.change.table
                done += 1
            return done

        before = await play(40)
        # a script the store has loaded on the old primary only
        assert await store.claim_chat(-100, None, GID)
        new = await _fail_over(sentinels, client)
        assert await store.redis.execute_command("SCRIPT", "EXISTS", store._commit_script.sha) == [0]  # not on the new primary
        after = await play(None)
        assert after > 0
        table = await store.load(GID)
        assert table.status is model.Status.OVER and table.ended == "finished"
        # every committed action is in the log once, on the new primary: the record replays to
        # the stored state
        deal, log = await store.record(GID)
        assert len(log) == table.turn == before + after
        outcome = replay(stats.record_of_game(table, deal, log))
        assert outcome.error is None and outcome.state == table.state
        direct = Redis(port=new, decode_responses=True)
        try:
            assert await direct.hget(store.k_game(GID), "t") == table.to_json()
            assert await direct.llen(store.k_log(GID)) == len(log)
        finally:
            await direct.aclose()
        assert await store.redis.execute_command("SCRIPT", "EXISTS", store._commit_script.sha) == [1]  # loaded again
        assert await store.chat_game(-100, None) is None  # the game's end freed the chat (a script)
    finally:
        await client.aclose()


async def test_a_demoted_primary_sends_its_client_to_the_new_one(sentinels):
    # Clients without the listener: their pooled connection stays on the old primary after the
    # switch (why SentinelRedis listens) until a write there is refused as READONLY once it is
    # a replica; redis-py turns that into a ConnectionError, sent again by RETRY on a new
    # connection, which SentinelConnection makes ask the sentinels (redis-py's own reconnects
    # to the old address: redis-py issue 3874).
    sentinel = Sentinel([("127.0.0.1", p) for p in sentinels.sentinel_ports])
    options = dict(connection_pool_class=BlockingSentinelConnectionPool, decode_responses=True, retry=RETRY, max_connections=4, timeout=20)
    ours = sentinel.master_for(sentinels.service, connection_class=SentinelConnection, **options)
    bare = sentinel.master_for(sentinels.service, **options)
    store = Store(ours)
    try:
        old = sentinels.primary.port
        assert await store.create(lobby(2, gid=GID)) and await bare.set("cheat:probe", "1")
        new = await _fail_over(sentinels)
        await store.transact(GID, lambda t: model.join(t, model.Seat(9, "Z"), 1000, 900))
        await bare.set("cheat:probe", "2")
        assert ours.connection_pool.master_address == bare.connection_pool.master_address == ("127.0.0.1", old)  # written there
        # the sentinels turn the old primary into a replica 8 to 20 s after the switch; here at once
        sentinels.node_cli(sentinels.primary, "replicaof", "127.0.0.1", str(new))
        await _until(lambda: "master_link_status:up" in sentinels.node_cli(sentinels.primary, "info", "replication"), "no resync")
        assert await store.transact(GID, lambda t: model.join(t, model.Seat(10, "Y"), 1000, 900))  # the compare-and-set script
        assert ours.connection_pool.master_address == ("127.0.0.1", new)
        assert [s.user_id for s in (await store.load(GID)).seats] == [1, 2, 10]  # (Z went with the old primary)
        with pytest.raises(RedisConnectionError, match="previous master is now a slave"):
            await bare.set("cheat:probe", "3")
    finally:
        await ours.aclose()
        await bare.aclose()
        await sentinel.aclose()


async def test_sentinels_that_know_no_such_service(sentinels):
    with pytest.raises(MasterNotFoundError) as e:
        await connect(sentinels.url.replace("/cheat/", "/other/"))
    assert "'other'" in str(e.value) and "no sentinel" in str(e.value)
