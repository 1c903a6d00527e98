"""The bot on a real Redis Cluster: three primaries started for these tests
(``redis_cluster``, tests/redis_server.py), never a Redis already running.

``connect()`` finds the cluster from any node's URL; games of many ids spread over every
primary and the store's indexes (SCAN included) see all of them; a complete game is played
through the real bot in-process (tests/tgbot/live.py, the simulated players of
tests/e2e/harness.py), its result posted and its statistics counted.

The :func:`guard` fixture makes every Lua script run in Redis 7's strict mode (a ``#!lua``
shebang: the cluster then refuses a script that touches any key outside its slot, declared in
KEYS or not, where a legacy script would touch another slot of the same node unnoticed),
records every script's declared keys, every Redis error (outside redis-py's own NOSCRIPT
fallback) and every ERROR logged: the bot's error handlers log and swallow what goes wrong in
a handler, a sync lane or the timer loop, and the guard turns each of those into a failure.
"""

from __future__ import annotations

import importlib
import logging
import random
import re

import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.crc import key_slot
from redis.exceptions import NoScriptError, RedisClusterException, RedisError

from tests.e2e.harness import Table
from tests.e2e.test_full_game import open_table
from tests.tgbot.helpers import as_update, lobby, play_on
from tests.tgbot.live import running
from tests.tgbot.test_metrics import timed_commands
from tgbot.game import lobby as game_lobby
from tgbot.game.table import Status
from tgbot.owner.store import Store, UpdateMark, game_id_for_update
from tgbot.storage import chatmove, stats
from tgbot.storage.redis import connect

pytestmark = pytest.mark.e2e

#: What the guard puts before every script: Redis 7's shebang without flags (strict mode).
STRICT = "#!lua\n"
#: Taps the simulated players make through the bot before the rest of a long game is played
#: through the store (keeps the module near 20 s).
TAPS = 250
#: The modules whose Lua scripts are checked.
SCRIPT_MODULES = (
    "tgbot.owner.store",
    "tgbot.storage.stats",
    "tgbot.process.lease",
    "tgbot.ingest.stream",
    "tgbot.sync.syncer",
)  # (the rate limiter has none)
#: Scripts that must be among those checked (the commit, the fencing, the lease, the ingest).
REQUIRED_SCRIPTS = {
    "tgbot.owner.store._COMMIT",
    "tgbot.owner.store._RAISE_EPOCH",
    "tgbot.process.lease._ACQUIRE",
    "tgbot.process.lease._RELEASE",
    "tgbot.ingest.stream._INGEST",
}


def _text(value: object) -> str:
    return value.decode() if isinstance(value, (bytes, bytearray, memoryview)) else str(value)


def _slot(key: str) -> int:
    return key_slot(key.encode())


class SlotGuard:
    """What the cluster was asked: every script's command and declared keys, and every Redis
    error raised to the bot."""

    def __init__(self) -> None:
        self.scripts: list[tuple[str, list[str]]] = []
        self.errors: list[BaseException] = []

    def pack(self, tokens: list[object]) -> list[object]:
        """Record a command about to be sent; a script's body gets the strict shebang."""
        name = _text(tokens[0]).upper()
        if name in ("EVAL", "EVALSHA"):
            self.scripts.append((name, [_text(k) for k in tokens[3 : 3 + int(_text(tokens[2]))]]))
        at = 1 if name == "EVAL" else 2 if name == "SCRIPT" and _text(tokens[1]).upper() == "LOAD" else None
        if at is not None and not _text(tokens[at]).startswith("#!"):
            tokens[at] = STRICT + _text(tokens[at])
        return tokens

    def problems(self, caplog: pytest.LogCaptureFixture) -> list[str]:
        """Scripts declared over several slots, Redis errors, errors logged."""
        out = [
            f"{name} over slots {sorted({_slot(k) for k in keys})}: {keys}"
            for name, keys in self.scripts
            if len({_slot(k) for k in keys}) > 1
        ]
        out += [f"{type(e).__name__}: {e}" for e in self.errors]
        out += [
            f"logged by {r.name}: {r.getMessage()} {r.exc_info[1] if r.exc_info else ''}"
            for r in caplog.records
            if r.levelno >= logging.ERROR and not r.getMessage().startswith(_REDIS_PY_GC_NOTE)
        ]
        return out

    def nodes(self, client: RedisCluster) -> set[str]:
        """The primaries the recorded scripts ran on."""
        return {client.nodes_manager.get_node_from_slot(_slot(keys[0])).name for _, keys in self.scripts if keys}


#: redis-py's own resource note when the garbage collector meets a ClusterNode it created during
#: a slots refresh and dropped without disconnecting (``ClusterNode._DEL_MESSAGE``, logged by
#: asyncio's exception handler): not ours to close, and its timing follows the collector's (it
#: failed one suite run in about six). Every other error logged still fails the test.
_REDIS_PY_GC_NOTE = "Unclosed ClusterNode object"


def _recording(guard: SlotGuard, method):
    async def call(self, *args, **kwargs):
        try:
            return await method(self, *args, **kwargs)
        except NoScriptError:
            raise  # redis-py loads the script and runs it again
        except (RedisError, RedisClusterException) as e:
            guard.errors.append(e)
            raise

    return call


@pytest.fixture
def guard(monkeypatch, caplog):
    """A :class:`SlotGuard` watching every Redis client of this process during the test; the
    test fails (at teardown at the latest) on any problem it saw."""
    g = SlotGuard()
    pack = AbstractConnection.pack_command

    def strict_pack(self, *args):
        tokens = [*_text(args[0]).split(), *args[1:]] if isinstance(args[0], (str, bytes)) else list(args)
        return pack(self, *g.pack(tokens))

    monkeypatch.setattr(AbstractConnection, "pack_command", strict_pack)
    monkeypatch.setattr(RedisCluster, "execute_command", _recording(g, RedisCluster.execute_command))
    monkeypatch.setattr(ClusterPipeline, "execute", _recording(g, ClusterPipeline.execute))
    caplog.set_level(logging.WARNING)
    yield g
    assert g.problems(caplog) == []


async def _client(url: str) -> RedisCluster:
    redis = await connect(url)
    assert isinstance(redis, RedisCluster)
    await redis.flushdb()
    return redis


def _calls(body: str, fn: str) -> list[list[str]]:
    """The argument lists (top-level commas, stripped) of every call of ``fn`` in ``body``."""
    out = []
    for m in re.finditer(rf"(?<!function )\b{fn}\(", body):
        depth, args, cur = 1, [], ""
        for ch in body[m.end() :]:
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                break
            if ch == "," and depth == 1:
                args.append(cur.strip())
                cur = ""
            else:
                cur += ch
        out.append([*args, cur.strip()])
    return out


def test_every_script_names_its_keys_in_KEYS():
    # Scripts the game below does not run (a contested chat index, a lease released, a
    # webhook's ingest) are checked by reading: every key a script touches is KEYS[...], or the
    # parameter of a local function that is only ever called with KEYS[...].
    scripts = {
        f"{m}.{name}": value
        for m in SCRIPT_MODULES
        for name, value in vars(importlib.import_module(m)).items()
        if isinstance(value, str) and "redis.call(" in value
    }
    assert set(scripts) >= REQUIRED_SCRIPTS, sorted(scripts)
    for name, body in scripts.items():
        helpers = {
            fn: [p.strip() for p in params.split(",")]
            for fn, params in re.findall(r"local function (\w+)\(([\w, ]+)\)", body)
        }
        as_key: set[str] = set()  # helper parameters a redis.call uses as its key
        for cmd, key in re.findall(r"redis\.call\('(\w+)'\s*(?:,\s*([^,)]+))?", body):
            if cmd == "TIME":
                continue
            if cmd == "XREADGROUP":  # XREADGROUP GROUP <group> <consumer> … STREAMS <key> <id>
                key = re.search(r"'XREADGROUP'[^)]*'STREAMS',\s*([^,)]+)", body).group(1)  # type: ignore[union-attr]
            if any(key in ps for ps in helpers.values()):
                as_key.add(key)
                continue
            assert re.fullmatch(r"KEYS\[\w+\]", key), (name, cmd, key)
        for fn, ps in helpers.items():
            for args in _calls(body, fn):
                for param, arg in zip(ps, args):
                    if param in as_key:
                        assert re.fullmatch(r"KEYS\[\w+\]", arg), (name, fn, arg)


async def test_the_guard_fails_a_script_that_leaves_its_slot(redis_cluster, guard, caplog):
    redis = await _client(redis_cluster.url)
    try:
        # two hash tags of one node in different slots: a legacy script declaring one and
        # touching the other is run by the cluster; the guard's strict mode refuses it
        by_node: dict[str, list[str]] = {}
        for i in range(100):
            by_node.setdefault(redis.get_node_from_key(f"{{t{i}}}").name, []).append(f"{{t{i}}}")
        here, there = next(tags for tags in by_node.values() if len(tags) > 1)[:2]
        elsewhere = next(tags for tags in by_node.values() if here not in tags)[0]
        with pytest.raises(RedisError, match="same slot"):
            await redis.eval("return redis.call('SET', ARGV[1], 1)", 1, here + "a", there + "b")
        with pytest.raises(RedisClusterException, match="same key slot"):
            await redis.eval("return 1", 2, here + "a", elsewhere + "b")  # redis-py refuses it
        logging.getLogger("tgbot.sync.syncer").error("sync failed")  # what a swallowed error leaves
        found = guard.problems(caplog)
        assert len(found) == 3 and "same slot" in found[0] and "sync failed" in found[2], found
        guard.errors.clear()
        caplog.clear()
    finally:
        await redis.aclose()


async def test_cluster_commands_and_pipelines_are_timed_but_not_blocking_reads(redis_cluster):
    redis = await _client(redis_cluster.url)
    try:
        assert await timed_commands(redis) == (1, 1, 0)
    finally:
        await redis.aclose()


async def test_connect_finds_the_cluster_from_any_node(redis_cluster, redis_server):
    for node in redis_cluster.nodes:
        redis = await connect(node.url)
        try:
            assert isinstance(redis, RedisCluster)
            assert len(redis.get_primaries()) == 3
            await redis.set("cheat:probe", "1")
            assert await redis.get("cheat:probe") == "1"
        finally:
            await redis.delete("cheat:probe")
            await redis.aclose()
    plain = await connect(redis_server.url)
    assert isinstance(plain, Redis) and not isinstance(plain, RedisCluster)
    await plain.aclose()


async def test_games_of_many_ids_spread_over_every_primary(redis_cluster, guard):
    redis = await _client(redis_cluster.url)
    store = Store(redis, prefix="cheat:123")
    try:
        gids = [game_id_for_update("123", update_id) for update_id in range(24)]
        assert len({redis.get_node_from_key(store.keys.game(g)).name for g in gids}) == 3
        for thread, gid in enumerate(gids, 1):
            # a lobby per forum topic: the chat indexes spread over the nodes too
            assert await store.create(lobby(3, gid=gid, thread=thread))
            assert await store.claim_chat(-100, thread, gid)
            await store.transact(gid, lambda t: game_lobby.start(t, 1, False, 7))
            # the commit records its update in the game's slot; a second delivery is recognised
            for _ in range(2):
                mark = UpdateMark(5000 + thread)
                await as_update(store, mark).transact(gid, lambda t: game_lobby.set_seat_lang(t, 1, "en"))
            assert await redis.zrange(store.keys.applied(gid), 0, -1) == [f"{5000 + thread}.0"]
        assert sorted(t.id for t in await store.chat_games(-100)) == sorted(gids)  # SCAN on every primary
        assert sorted(await store.records.live_games()) == sorted(gids)
        assert {t.id for t in await store.user_games(2)} == set(gids)
        # the chat becomes a supergroup: its games, settings, notifications and board move
        # (their keys in several slots; the board's in the statistics' one)
        await store.records.set_chat_settings(-100, lang="en")
        await store.records.want_notify(-100, 2)
        await redis.hset(store.keys.board(-100), mapping={"2:games": 3, "2:wins": 1, "2:name": "Борис"})
        assert sorted(await chatmove.move_chat(store, -100, -200)) == sorted(gids)
        assert sorted(t.id for t in await store.chat_games(-200)) == sorted(gids) and await store.chat_games(-100) == []
        assert (await store.records.chat_settings(-200)).lang == "en"
        assert await redis.smembers(f"{store.keys.prefix}:notify:-200") == {"2"}
        assert await redis.hgetall(store.keys.board(-200)) == {"2:games": "3", "2:wins": "1", "2:name": "Борис"}
        assert await chatmove.move_chat(store, -100, -200) == []
        assert await redis.hgetall(store.keys.board(-200)) == {"2:games": "3", "2:wins": "1", "2:name": "Борис"}
        assert len(guard.nodes(redis)) == 3
    finally:
        await redis.flushdb()
        await redis.aclose()


async def test_a_complete_game_on_the_cluster(redis_cluster, guard, caplog):
    async with running(redis_cluster.url) as live:
        store, emu = live.store, live.emu
        assert isinstance(store.redis, RedisCluster)
        group, users = await open_table(emu, 3, chat_id=-1017)
        gid = (await store.chat_game(group.id, None)).id
        table = Table(emu, group, users, random.Random(11))
        # The players tap through the bot (a game takes 300 to 800 taps at about 45 ms each);
        # past TAPS, a game still running is played on through the store, as another bot
        # process would, and this bot's sync shows its end and counts it.
        while table.taps < TAPS and await table.step(timeout=30):
            pass
        if not table.finished():
            await play_on(store, gid)
            live.app.bot_data["services"].syncer.request(gid)
        await emu.wait_for(table.finished, timeout=60)
        await live.settle()
        assert [key async for key in store.redis.scan_iter(match=store.keys.game_pattern())] == [store.keys.game(gid)]
        t = await store.load(gid)
        assert t.status is Status.OVER and t.ended == "finished"
        # the result was posted once and the game counted once, then it left the live set
        assert len([m for m in emu.chat_messages(group.id) if m.text and "Игра окончена" in m.text]) == 1
        assert (
            await store.redis.hget(store.keys.game(gid), "counted") == "1"
            and gid not in await store.records.live_games()
        )
        board = await store.redis.hgetall(store.keys.board(group.id))
        figures = await stats.game_figures(store.records, t)
        for i, seat in enumerate(t.seats):
            tot, places = await stats.totals(store.records, seat.user_id)
            assert tot.games == 1 and places == {figures[i].place: 1}
            assert board[f"{seat.user_id}:games"] == "1"
        assert await stats.count_game(store.records, t) is False  # another process, a restart
        # /forget_me: its keys live in several slots
        await users[0].send(users[0], "/forget_me")
        await live.settle()
        assert (await stats.totals(store.records, users[0].id))[0].games == 0
        assert f"{users[0].id}:games" not in await store.redis.hgetall(store.keys.board(group.id))
        assert emu.errors == [] and emu.violations == [] and table.unanswered == []
        # the game's slot, the limiter's, the chat's and the players' are not all on one node
        assert len(guard.nodes(store.redis)) >= 2
        assert guard.problems(caplog) == []
