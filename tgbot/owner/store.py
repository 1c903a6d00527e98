"""Storage in Redis: the one transaction path, the outbox, the indexes.

Keys (DESIGN.md, Storage) start with the bot's prefix ``cheat:<bot id>`` (``<p>`` below), so
several bots share one Redis or Cluster. A game's own keys share the hash tag ``{g<id>}`` so they
live in one Redis Cluster slot and one Lua script can change them atomically:

- ``<p>:{g<id>}:game``   hash: ``v`` (version), ``t`` (the table, JSON), ``deal`` (JSON list),
  ``epoch`` (the fencing number of the last commit, see :mod:`tgbot.process.lease`), ``counted``
- ``<p>:{g<id>}:log``    list: the record's actions, one JSON object each (append-only)
- ``<p>:{g<id>}:outbox`` list: announcements still to post (JSON, with ``seq``); while the group
  takes no message they wait there (the newest 20, :data:`tgbot.views.sync.MAX_HELD_ANNOUNCEMENTS`)
- ``<p>:{g<id>}:tg``     hash: Telegram bookkeeping (message ids and what they show)
- ``<p>:{g<id>}:upd``    sorted set: the update ids the game's commits applied (exactly once)

Indexes live in other slots and are single-key entries, checked against the game when read:
``<p>:chat:<chat>:<thread>`` (live game of a chat or topic), ``<p>:chat:<chat>:games`` (set: the
chat's games, every topic), ``<p>:live`` (set of live game ids), ``<p>:user:<id>`` (hash: ``dm``
= the bot can write to them, ``lang`` = their own language for private messages),
``<p>:user:<id>:games`` (set: the live games they are seated at), ``<p>:chatcfg:<chat>`` (hash:
the chat's settings, see :class:`ChatSettings`), ``<p>:chat:<chat>:moved`` (string: the
supergroup a basic group became, see :mod:`tgbot.storage.chatmove`).

**The game's owner.** Only the active process writes (:mod:`tgbot.process.lease`), so the :class:`Store`
keeps each live game's table in memory after its first load and serialises the game's
transactions with a lock of its own: a transaction reads nothing from Redis, applies a pure
transition, and commits with one Lua compare-and-set that also appends to the log and the
outbox, refuses an older fencing epoch (:class:`FencedError`) and records the update that
caused it, so a second delivery of that update (Telegram's, a take-over's, or redis-py's resend
of a script that timed out) is recognised as applied and never applied again.

:func:`connect` gives the client: one Redis, or, when ``REDIS_URL`` names a node of a Redis
Cluster, a :class:`GatedCluster` (redis-py's cluster client), or for a ``redis+sentinel://``
URL a :class:`tgbot.storage.sentinel.SentinelRedis`; every script names all its keys in KEYS and they
share one slot.
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import hashlib
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ResponseError

from tgbot.game.lobby import move_chat
from tgbot.game.table import Answer, Change, RefusedError, Table

__all__ = [
    "Store", "ChatSettings", "ConflictError", "FencedError", "new_game_id", "game_id_for_update", "connect", "RedisClient",
    "GatedCluster", "MAX_CONNECTIONS", "RETRY", "RECENT_UPDATES", "FINISHED_TTL", "CHAT_MOVED_TTL", "current_update",
]

log = logging.getLogger(__name__)

#: The update being processed in this task (set by the consumer, :mod:`tgbot.ingest.stream`): its id
#: and how many commits it made so far per game, so each commit records ``<update id>.<n>``.
current_update: contextvars.ContextVar[tuple[int, dict[str, int]] | None] = contextvars.ContextVar("current_update", default=None)

#: Connections per process to Redis (a blocking pool: callers wait for a free one; Sentinel
#: keeps redis-py's own pool); on a Redis Cluster, the commands and pipelines in flight per
#: process (:class:`GatedCluster`: callers wait too) and so the connections to each node.
MAX_CONNECTIONS = 64
#: A command that meets a broken connection or times out is sent again on a new one, up to 3
#: times, after 50 ms to 1 s (redis-py's Retry). Resending the commit is safe: it records the
#: update it applies, and a second run finds it applied.
RETRY = Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), 3)
#: A game remembers the ids of the updates its last commits applied (a re-delivery comes within
#: minutes, and a game sees a few updates a second at most).
RECENT_UPDATES = 64
#: A finished game's keys are kept this long (seconds) for its record and late taps.
FINISHED_TTL = 7 * 24 * 3600
#: Seconds the record "group X became supergroup Y" is kept (30 days: longer than
#: :data:`FINISHED_TTL`, so every game that still names the old id finds the new one).
CHAT_MOVED_TTL = 30 * 24 * 3600

# The commit. KEYS: 1 the game hash, 2 its log, 3 its outbox, 4 its tg hash, 5 its applied
# updates. ARGV: 1 expected version ('' for a creation), 2 new version, 3 table JSON, 4 deal JSON
# ('' none), 5 ttl s (0 none), 6 epoch, 7 update mark ('' none), 8 its score, 9 number of log
# entries, then the log entries, then the outbox notes. Returns 1 committed, 0 version conflict,
# -1 fenced (a newer epoch wrote the game), -2 the update was applied already.
_COMMIT = f"""
if tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0') > tonumber(ARGV[6]) then return -1 end
if ARGV[7] ~= '' and redis.call('ZSCORE', KEYS[5], ARGV[7]) then return -2 end
if (redis.call('HGET', KEYS[1], 'v') or '') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 't', ARGV[3], 'epoch', ARGV[6])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'deal', ARGV[4]) end
local nlog = tonumber(ARGV[9])
for i = 1, nlog do redis.call('RPUSH', KEYS[2], ARGV[9 + i]) end
for i = 10 + nlog, #ARGV do redis.call('RPUSH', KEYS[3], ARGV[i]) end
if ARGV[7] ~= '' then
  redis.call('ZADD', KEYS[5], ARGV[8], ARGV[7])
  redis.call('ZREMRANGEBYRANK', KEYS[5], 0, -{RECENT_UPDATES + 1})
end
local ttl = tonumber(ARGV[5])
if ttl > 0 then
  for i = 1, 5 do redis.call('EXPIRE', KEYS[i], ttl) end
end
return 1
"""

# Raise a game's fencing epoch (KEYS: the game hash; ARGV: epoch) before a new holder touches it.
_RAISE_EPOCH = """
if tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0') < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'epoch', ARGV[1])
end
return 1
"""

_POP_IF_HEAD = """
if redis.call('LINDEX', KEYS[1], 0) == ARGV[1] then redis.call('LPOP', KEYS[1]) return 1 end
return 0
"""

_DEL_IF = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
"""

_SET_IF = """
local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end
return 0
"""


@dataclass(frozen=True)
class ChatSettings:
    """A chat's settings (hash ``cheat:chatcfg:<chat_id>``, one field per setting, absent =
    default). ``lang``: the group's language (``None``: not chosen, Russian); ``variant``:
    the variant a new lobby opens with (``None``: Russian); ``seating``: ``shuffle`` when the
    seats are shuffled at the start (``None``/``join``: join order). The turn timer is the
    field ``turn`` (see :meth:`Store.chat_turn_timeout`)."""

    lang: str | None = None
    variant: str | None = None
    seating: str | None = None

    @property
    def shuffle(self) -> bool:
        """Whether seats are shuffled when the game starts."""
        return self.seating == "shuffle"

    @classmethod
    def from_hash(cls, raw: dict[str, str]) -> "ChatSettings":
        """From the stored hash; unknown fields are ignored."""
        return cls(lang=raw.get("lang") or None, variant=raw.get("variant") or None, seating=raw.get("seating") or None)


class ConflictError(Exception):
    """A transaction lost the compare-and-set too many times in a row (another writer: only
    possible while two processes briefly believe they are active)."""


class FencedError(Exception):
    """A commit was refused: a process with a newer lease epoch has written the game. This
    process is no longer the active one and must stop (:mod:`tgbot.process.lease`)."""


def new_game_id() -> str:
    """A fresh game id: 8 characters of ``A-Za-z0-9_-`` (48 random bits)."""
    return secrets.token_urlsafe(6)


def game_id_for_update(bot_id: str, update_id: int) -> str:
    """The id of a game an update opens (``/start_game``, «Play again»): derived from the update,
    so a second delivery of it finds the game it opened instead of opening another."""
    digest = hashlib.blake2b(f"{bot_id}:{update_id}".encode(), digest_size=6).digest()
    return base64.urlsafe_b64encode(digest).decode()


#: The clients a :class:`Store` works over: one Redis (or fakeredis), or a Redis Cluster.
RedisClient = Redis | RedisCluster

#: Set while a task holds one of a :class:`GatedCluster`'s slots (a pipeline's redirected
#: commands then run under the pipeline's slot instead of waiting for a second one).
_GATE_HELD: contextvars.ContextVar[bool] = contextvars.ContextVar("cheat_cluster_gate", default=False)


class GatedCluster(RedisCluster):
    """redis-py's asyncio :class:`~redis.asyncio.cluster.RedisCluster` with at most
    ``max_connections`` commands and pipelines in flight per process, the others waiting
    for a free slot, as the plain path's blocking pool makes them wait. (redis-py's cluster
    pool does not wait: past ``max_connections`` connections to one node it raises
    ``MaxConnectionsError``, which a burst, such as every live game's sync at start-up, would
    hit.) A pipeline or an all-primaries command holds one slot and at most one connection
    per node, so no node ever needs more than ``max_connections``."""

    __slots__ = ("_gate",)

    def __init__(self, *args: Any, max_connections: int = 100, **kwargs: Any) -> None:
        super().__init__(*args, max_connections=max_connections, **kwargs)
        self._gate = asyncio.Semaphore(max_connections)

    async def gated(self, run: Callable[[], Awaitable[Any]]) -> Any:
        """``await run()`` holding one slot (at once when this task holds one already)."""
        if _GATE_HELD.get():
            return await run()
        async with self._gate:
            token = _GATE_HELD.set(True)
            try:
                return await run()
            finally:
                _GATE_HELD.reset(token)

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`RedisCluster.execute_command`, holding a slot."""
        return await self.gated(lambda: super(GatedCluster, self).execute_command(*args, **kwargs))

    def pipeline(self, transaction: Any | None = None, shard_hint: Any | None = None) -> ClusterPipeline:
        """A :class:`~redis.asyncio.cluster.ClusterPipeline` whose ``execute`` holds a slot."""
        if shard_hint:
            return super().pipeline(transaction, shard_hint)  # (raises, as redis-py does)
        return _GatedPipeline(self, transaction)


class _GatedPipeline(ClusterPipeline):
    """A cluster pipeline that runs holding one of its client's slots."""

    __slots__ = ()

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
        client = self.cluster_client
        assert isinstance(client, GatedCluster)
        return await client.gated(lambda: super(_GatedPipeline, self).execute(raise_on_error, allow_redirections))


async def _mode(client: Redis) -> str:
    """How the node ``client`` talks to serves (``INFO server``'s ``redis_mode``): "cluster" or
    "standalone" (also when INFO is refused, as by a restricted proxy). Raises ``ValueError``
    for a Redis Sentinel (its URL form is ``redis+sentinel://``) and for a replica (read-only:
    every write would fail), ``redis.exceptions.ConnectionError`` when it does not answer."""
    try:
        mode = (await client.info("server")).get("redis_mode", "standalone")
        if mode == "sentinel":
            raise ValueError("REDIS_URL names a Redis Sentinel: give it as redis+sentinel://host:port/<service> (docs/scaling.md)")
        role = await client.role() if mode != "cluster" else ["master"]
        if role[0] == "slave":
            raise ValueError(f"REDIS_URL names a read-only replica (of {role[1]}:{role[2]}): give the primary, or redis+sentinel:// to follow fail-overs")
    except ResponseError:
        mode = "standalone"  # INFO or ROLE refused (a restricted proxy): one Redis, as far as we can tell
    await client.ping()  # (raises what INFO met, if that was not a refusal: a database a cluster lacks)
    return mode


async def connect(url: str) -> RedisClient:
    """A redis-py asyncio client (``decode_responses=True``) for ``url``, checked to answer.

    - ``memory://`` (or ``""``): an embedded in-process store (fakeredis with Lua);
    - a node of a Redis Cluster (any node, primary or replica; found by ``INFO cluster``
      answering ``cluster_enabled:1``): a :class:`GatedCluster` from the same URL, which learns
      the other nodes from that one; the URL's database must be 0 (or absent);
    - ``redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/service[/db]`` (with
      ``?sentinel_password=`` when the sentinels have their own): the primary that these Redis
      Sentinels monitor as ``service``, a :class:`tgbot.storage.sentinel.SentinelRedis` (redis-py's
      ``Sentinel.master_for`` and its pool), which follows the primary after a fail-over;
    - else one Redis (or a proxy in front of it): a client over a blocking pool of
      :data:`MAX_CONNECTIONS` connections.

    Raises ``redis.exceptions.ConnectionError`` when Redis is unreachable (for a Sentinel URL,
    its subclass ``MasterNotFoundError`` when no sentinel can be reached or none names a primary
    that is up for the service), ``ValueError`` for a malformed URL, another scheme, and a
    ``redis://`` URL naming a sentinel or a read-only replica,
    ``redis.exceptions.ResponseError`` ("SELECT is not allowed in cluster mode") for a cluster
    node's URL naming another database than 0, and
    ``redis.exceptions.RedisClusterException`` when the cluster's nodes cannot be learnt."""
    if url in ("", "memory://") or url.startswith("memory:"):
        import fakeredis

        fake: Redis = fakeredis.FakeAsyncRedis(decode_responses=True)
        await fake.ping()
        return fake
    scheme = urlsplit(url).scheme
    if scheme == "redis+sentinel":
        from tgbot.storage.sentinel import connect_sentinel  # (it builds on this module's RETRY and pool size)

        return await connect_sentinel(url)
    if scheme not in ("redis", "rediss", "unix"):
        raise ValueError(f"REDIS_URL must start with redis://, rediss://, unix://, redis+sentinel:// or memory://, not {scheme or url.partition(':')[0]!r}")
    # A blocking pool: under a burst (hundreds of games syncing at once) a call waits for a
    # free connection instead of failing with "Too many connections" (seen in the benchmark).
    # A connection that died while idle (Redis restarted, or closed it) fails its next command,
    # which reconnects and is sent again (RETRY); that replaces a health check before each
    # command (about 25 µs of CPU per round trip, measured).
    pool = BlockingConnectionPool.from_url(url, decode_responses=True, retry=RETRY, max_connections=MAX_CONNECTIONS, timeout=20)
    client = Redis(connection_pool=pool)
    try:
        mode = await _mode(client)
    except BaseException:
        await client.aclose()
        await pool.disconnect()
        raise
    if mode != "cluster":
        return client
    await client.aclose()
    await pool.disconnect()
    node = GatedCluster.from_url(url, decode_responses=True, max_connections=MAX_CONNECTIONS)
    try:
        await node.ping()
    except BaseException:
        await node.aclose()
        raise
    log.info("REDIS_URL is a node of a Redis Cluster: %d primaries", len(node.get_primaries()))
    return node



@dataclass
class Committed:
    """What a successful :meth:`Store.transact` returns: the committed change and the table
    as it was before."""

    change: Change
    before: Table | None


class Store:
    """The game store over one redis-py asyncio client (``decode_responses=True``), and each live
    game's owner in this process (see the module docstring).

    ``epoch``: the fencing number every commit carries (the lease's, set when this process
    becomes active; 0 in tests that run without a lease). ``on_commit(before, after)``: called
    after each commit under the game's lock (the view sync and the timer are told there)."""

    def __init__(self, redis: RedisClient, prefix: str = "cheat") -> None:
        self.redis = redis
        self.p = prefix
        self.epoch = 0
        self.on_commit: Callable[[Table | None, Table], None] = lambda before, after: None
        #: Whether this process may commit now (the runner sets :meth:`tgbot.process.lease.Lease.held`):
        #: a commit is refused here, without a round trip, once the lease is lost.
        self.holds: Callable[[], bool] = lambda: True
        self._tables: dict[str, Table] = {}
        self._applied: dict[str, dict[str, None]] = {}  # per game, the marks its commits recorded (oldest first)
        self._locks: dict[str, asyncio.Lock] = {}
        self._commit_script = redis.register_script(_COMMIT)
        self._raise_epoch = redis.register_script(_RAISE_EPOCH)
        self._pop_if_head = redis.register_script(_POP_IF_HEAD)
        self._del_if = redis.register_script(_DEL_IF)
        self._set_if = redis.register_script(_SET_IF)

    # -- key names (the one key schema) ----------------------------------------------------

    def k_game(self, gid: str) -> str:
        return f"{self.p}:{{g{gid}}}:game"

    def k_log(self, gid: str) -> str:
        return f"{self.p}:{{g{gid}}}:log"

    def k_outbox(self, gid: str) -> str:
        return f"{self.p}:{{g{gid}}}:outbox"

    def k_tg(self, gid: str) -> str:
        return f"{self.p}:{{g{gid}}}:tg"

    def k_applied(self, gid: str) -> str:
        return f"{self.p}:{{g{gid}}}:upd"

    def k_chat(self, chat_id: int, thread_id: int | None) -> str:
        return f"{self.p}:chat:{chat_id}:{thread_id or 0}"

    def k_chat_games(self, chat_id: int) -> str:
        return f"{self.p}:chat:{chat_id}:games"

    def k_chatcfg(self, chat_id: int) -> str:
        return f"{self.p}:chatcfg:{chat_id}"

    def k_chat_moved(self, chat_id: int) -> str:
        return f"{self.p}:chat:{chat_id}:moved"

    def k_user(self, user_id: int) -> str:
        return f"{self.p}:user:{user_id}"

    def k_user_games(self, user_id: int) -> str:
        return f"{self.p}:user:{user_id}:games"

    @property
    def k_live(self) -> str:
        return f"{self.p}:live"

    def k_bot(self, name: str) -> str:
        """A key of the bot's own process coordination (lease, ingest): one slot, ``{b…}``."""
        return f"{self.p}:{{b{self.p.rpartition(':')[2]}}}:{name}"

    # -- the owner: tables in memory, one transaction at a time per game ---------------------

    def forget_tables(self) -> None:
        """Drop every table kept in memory (this process lost the lease, or a test restarts)."""
        self._tables.clear()
        self._applied.clear()

    def lock(self, gid: str) -> asyncio.Lock:
        """The game's lock: its transactions and its timer run one at a time."""
        return self._locks.setdefault(gid, asyncio.Lock())

    async def load(self, gid: str) -> Table | None:
        """The table of game ``gid`` (from memory once loaded), or ``None`` if there is none. A
        read from Redis waits for the game's transaction in flight, so it never keeps a table
        older than the one that transaction commits."""
        table = self._tables.get(gid)
        if table is not None:
            return table
        async with self.lock(gid):
            return await self._read(gid)

    async def _read(self, gid: str) -> Table | None:
        """:meth:`load` for the holder of the game's lock."""
        table = self._tables.get(gid)
        if table is not None:
            return table
        pipe = self.redis.pipeline(transaction=False)
        pipe.hget(self.k_game(gid), "t")
        pipe.zrange(self.k_applied(gid), 0, -1)
        raw, applied = await pipe.execute()
        if not raw:
            return None
        table = Table.from_json(raw)
        if table.live:
            self._tables[gid] = table
            self._applied[gid] = dict.fromkeys(applied)
        return table

    async def raise_epoch(self, gid: str) -> None:
        """Mark game ``gid`` as this epoch's before this process first touches it."""
        await self._raise_epoch(keys=[self.k_game(gid)], args=[self.epoch])

    async def create(self, table: Table) -> bool:
        """Store a new table (version 1). False if the id is taken (then, when the current
        update created it, it is this game: see :func:`game_id_for_update`)."""
        async with self.lock(table.id):
            return await self._commit(None, Change(table), self._mark(table.id)) == 1

    async def transact(self, gid: str, fn: Callable[[Table], Change], attempts: int = 8) -> Committed:
        """Apply ``fn`` to game ``gid``'s table and commit it, under the game's lock.

        ``fn`` must be pure; it may raise :class:`~tgbot.game.table.RefusedError`, which propagates (as
        does ``RefusedError(Answer.NO_GAME)`` when there is no such game). A change whose table is the
        loaded one is not written. When the current update (:data:`current_update`) was applied
        to this game already, nothing is applied and the result's change is the current table
        with reply ``"ok"``. Raises :class:`FencedError` (a newer holder wrote the game) and
        :class:`ConflictError` (every attempt met another writer)."""
        async with self.lock(gid):
            for _ in range(attempts):
                table = await self._read(gid)
                if table is None:
                    raise RefusedError(Answer.NO_GAME)
                mark = self._mark(gid)
                if mark and mark[0] in self._applied.get(gid, ()):
                    return Committed(Change(table), table)
                change = fn(table)
                if change.table is table and not change.log and not change.outbox:
                    self._unmark(gid, mark)
                    return Committed(change, table)
                got = await self._commit(table, change, mark)
                if got in (1, -2):
                    return Committed(change, table)
                self._tables.pop(gid, None)  # another writer: read it again
                self._unmark(gid, mark)
            raise ConflictError(f"game {gid}: {attempts} conflicting attempts")

    def _mark(self, gid: str) -> tuple[str, int] | None:
        """The current update's mark for its next commit to ``gid``: ``("<id>.<n>", id)``."""
        current = current_update.get()
        if current is None:
            return None
        update_id, counts = current
        n = counts.get(gid, 0)
        counts[gid] = n + 1
        return f"{update_id}.{n}", update_id

    @staticmethod
    def _unmark(gid: str, mark: tuple[str, int] | None) -> None:
        current = current_update.get()
        if mark is not None and current is not None:
            current[1][gid] -= 1

    async def _commit(self, before: Table | None, change: Change, mark: tuple[str, int] | None) -> int:
        """One compare-and-set (see ``_COMMIT``); 1 committed (or applied before: -2), 0 conflict.
        Raises :class:`FencedError`."""
        if not self.holds():
            raise FencedError(f"game {change.table.id}: this process no longer holds the lease")
        version = (before.version if before else 0) + 1
        new = change.table = replace(change.table, version=version)
        ttl = FINISHED_TTL if not new.live else 0
        args: list[Any] = [
            str(before.version) if before else "",
            str(version),
            new.to_json(),
            json.dumps(change.deal) if change.deal is not None else "",
            str(ttl),
            str(self.epoch),
            mark[0] if mark else "",
            mark[1] if mark else 0,
            str(len(change.log)),
            *[json.dumps(a, separators=(",", ":")) for a in change.log],
            *[json.dumps(o, ensure_ascii=False, separators=(",", ":")) for o in change.outbox],
        ]
        gid = new.id
        keys = [self.k_game(gid), self.k_log(gid), self.k_outbox(gid), self.k_tg(gid), self.k_applied(gid)]
        got = int(await self._commit_script(keys=keys, args=args))
        if got == -1:
            self.forget_tables()
            raise FencedError(f"game {gid}: a newer active process wrote it")
        if got == -2 and before is None:
            return -2  # (a creation already made by this update: the caller loads it)
        if got == 0:
            return 0
        if new.live:
            self._tables[gid] = new
            if mark:
                marks = self._applied.setdefault(gid, {})
                marks[mark[0]] = None
                if len(marks) > RECENT_UPDATES:
                    del marks[next(iter(marks))]  # as the stored set keeps only the latest
        else:
            self._tables.pop(gid, None)
            self._applied.pop(gid, None)
            if not self.lock(gid).locked():
                self._locks.pop(gid, None)
        await self._after_commit(before, new)
        self.on_commit(before, new)
        return 1

    async def _after_commit(self, before: Table | None, after: Table) -> None:
        """Bring the indexes in line with a committed table (one pipelined round trip, none for
        a change that moves no index, such as a play). Each index is checked against the game
        when read, so a crash between the commit and this leaves nothing wrong."""
        now_in = {x.user_id for x in after.seats if x.human} if after.live else set()
        was_in = {x.user_id for x in before.seats if x.human} if before is not None else set()
        if before is not None and before.live == after.live and now_in == was_in and before.chat_id == after.chat_id:
            return
        pipe = self.redis.pipeline(transaction=False)
        # An ended game stays in the live set until the sync has shown its end (its result may
        # still be in the outbox); its chat is freed at once for the next game.
        pipe.sadd(self.k_live, after.id)
        pipe.sadd(self.k_chat_games(after.chat_id), after.id)
        if not after.live:
            pipe.eval(_DEL_IF, 1, self.k_chat(after.chat_id, after.thread_id), after.id)
            pipe.srem(self.k_chat_games(after.chat_id), after.id)
        for uid in now_in - was_in:
            pipe.sadd(self.k_user_games(uid), after.id)
        for uid in was_in - now_in:
            pipe.srem(self.k_user_games(uid), after.id)
        await pipe.execute()

    # -- indexes ---------------------------------------------------------------------------

    async def chat_game(self, chat_id: int, thread_id: int | None) -> Table | None:
        """The live table of a chat (topic), checked against the game itself."""
        gid = await self.redis.get(self.k_chat(chat_id, thread_id))
        if not gid:
            return None
        table = await self.load(gid)
        if table is None or not table.live or table.chat_id != chat_id:
            return None
        return table

    async def claim_chat(self, chat_id: int, thread_id: int | None, gid: str) -> bool:
        """Point the chat's index at ``gid`` unless another live game holds it."""
        key = self.k_chat(chat_id, thread_id)
        if await self.redis.set(key, gid, nx=True):
            return True
        old = await self.redis.get(key)
        if old and await self.chat_game(chat_id, thread_id) is not None:
            return False
        return bool(await self._set_if(keys=[key], args=[old or "", gid]))

    async def release_chat(self, chat_id: int, thread_id: int | None, gid: str) -> None:
        """Drop the chat's index if it still points at ``gid``."""
        await self._del_if(keys=[self.k_chat(chat_id, thread_id)], args=[gid])

    async def user_games(self, user_id: int) -> list[Table]:
        """The live tables ``user_id`` is seated at (index checked against each game; stale
        entries are dropped)."""
        out = []
        for gid in sorted(await self.redis.smembers(self.k_user_games(user_id))):
            table = await self.load(gid)
            if table is None or not table.live or table.seat_of(user_id) is None:
                await self.redis.srem(self.k_user_games(user_id), gid)
                continue
            out.append(table)
        return out

    async def chat_games(self, chat_id: int) -> list[Table]:
        """Every live table of a chat, in all its forum topics (the chat's games index, checked
        against each game)."""
        out = []
        for gid in sorted(await self.redis.smembers(self.k_chat_games(chat_id))):
            table = await self.load(gid)
            if table is not None and table.live and table.chat_id == chat_id:
                out.append(table)
            else:
                await self.redis.srem(self.k_chat_games(chat_id), gid)
        return out

    async def move_chat(self, old_chat_id: int, new_chat_id: int, also: tuple[str, ...] = ()) -> list[str]:
        """Move the live games of group ``old_chat_id`` to supergroup ``new_chat_id``
        (a group upgrade). Crash-safe order: the new chat index first, then the table's
        ``chat_id`` (one transaction), then the old index dropped; readers check indexes
        against the game, so at every moment the game is reachable under one of the ids.
        ``also``: game ids to move even if no longer live (their end is still to be shown).
        Idempotent. Returns the moved game ids."""
        tables = {t.id: t for t in await self.chat_games(old_chat_id)}
        for gid in also:
            t = await self.load(gid)
            if t is not None and t.chat_id == old_chat_id:
                tables[gid] = t
        moved = []
        for table in tables.values():
            if table.live:
                await self.redis.set(self.k_chat(new_chat_id, table.thread_id), table.id, nx=True)
            await self.transact(table.id, lambda t: move_chat(t, old_chat_id, new_chat_id))
            await self.release_chat(old_chat_id, table.thread_id, table.id)
            await self.redis.srem(self.k_chat_games(old_chat_id), table.id)
            moved.append(table.id)
        return moved

    async def chat_moved_to(self, chat_id: int) -> int | None:
        """The supergroup that group ``chat_id`` became (see :meth:`set_chat_moved`), or ``None``."""
        raw = await self.redis.get(self.k_chat_moved(chat_id))
        return int(raw) if raw else None

    async def set_chat_moved(self, old_chat_id: int, new_chat_id: int) -> None:
        """Record that group ``old_chat_id`` became supergroup ``new_chat_id`` (kept
        :data:`CHAT_MOVED_TTL` seconds: longer than any of the group's games is kept), so what
        still names the old id (a finished game's «Play again», its count) finds the new one."""
        await self.redis.set(self.k_chat_moved(old_chat_id), str(new_chat_id), ex=CHAT_MOVED_TTL)

    async def live_games(self) -> list[str]:
        """Ids of the games that may be live or still have something to show (the caller
        checks each)."""
        return sorted(await self.redis.smembers(self.k_live))

    async def forget_live(self, gid: str) -> None:
        """Drop an ended game from the live set once everything of it has been shown."""
        await self.redis.srem(self.k_live, gid)

    async def set_dm(self, user_id: int, reachable: bool) -> None:
        """Record whether the bot can write to the user privately."""
        await self.redis.hset(self.k_user(user_id), "dm", 1 if reachable else 0)

    async def can_dm(self, user_id: int) -> bool:
        """Whether the user has started the bot (and not blocked it since, as far as known)."""
        return await self.redis.hget(self.k_user(user_id), "dm") == "1"

    async def user_lang(self, user_id: int) -> str | None:
        """The user's own language for private messages (``/language`` in private), or ``None``."""
        return await self.redis.hget(self.k_user(user_id), "lang") or None

    async def set_user_lang(self, user_id: int, lang: str) -> None:
        """Record the user's own language for private messages."""
        await self.redis.hset(self.k_user(user_id), "lang", lang)

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        """The chat's settings (defaults when none were set)."""
        return ChatSettings.from_hash(await self.redis.hgetall(self.k_chatcfg(chat_id)))

    async def set_chat_settings(self, chat_id: int, **fields: str | None) -> ChatSettings:
        """Change some of the chat's settings (``None`` resets a field); returns them all."""
        keep = {k: v for k, v in fields.items() if v is not None}
        drop = [k for k, v in fields.items() if v is None]
        if keep:
            await self.redis.hset(self.k_chatcfg(chat_id), mapping=keep)
        if drop:
            await self.redis.hdel(self.k_chatcfg(chat_id), *drop)
        return await self.chat_settings(chat_id)

    async def chat_turn_timeout(self, chat_id: int, default: float) -> float:
        """The chat's turn timer in seconds (hash ``cheat:chatcfg:<chat>`` field ``turn``), or
        ``default`` (``TURN_TIMEOUT``) when the chat never set one."""
        raw = await self.redis.hget(self.k_chatcfg(chat_id), "turn")
        try:
            return float(raw) if raw else default
        except ValueError:
            return default

    async def set_chat_turn_timeout(self, chat_id: int, seconds: float) -> None:
        """Store the chat's turn timer (seconds; the caller checks the allowed range)."""
        await self.redis.hset(self.k_chatcfg(chat_id), "turn", str(int(seconds)))

    async def move_chat_settings(self, old_chat_id: int, new_chat_id: int) -> dict[str, str]:
        """Carry group ``old_chat_id``'s settings (every field of its ``chatcfg`` hash) to
        supergroup ``new_chat_id``: a field the new chat has already set is kept (HSETNX), and
        only then are the copied fields dropped from the old hash, so a crash midway or a second
        run copies nothing twice and loses nothing. Returns the fields found in the old hash."""
        old_key, new_key = self.k_chatcfg(old_chat_id), self.k_chatcfg(new_chat_id)
        fields = await self.redis.hgetall(old_key)
        if not fields:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for name, value in fields.items():
            pipe.hsetnx(new_key, name, value)
        await pipe.execute()
        await self.redis.hdel(old_key, *fields)
        return fields


    # -- Telegram side ---------------------------------------------------------------------

    async def tg_get(self, gid: str) -> dict[str, str]:
        """The game's Telegram bookkeeping (message ids, shown-content hashes)."""
        return await self.redis.hgetall(self.k_tg(gid))

    async def tg_set(self, gid: str, **fields: Any) -> None:
        """Record Telegram bookkeeping fields (``None`` deletes a field)."""
        keep = {k: v for k, v in fields.items() if v is not None}
        drop = [k for k, v in fields.items() if v is None]
        if not drop:
            await self.redis.hset(self.k_tg(gid), mapping=keep)  # the usual case: one command
            return
        pipe = self.redis.pipeline(transaction=False)
        if keep:
            pipe.hset(self.k_tg(gid), mapping=keep)
        if drop:
            pipe.hdel(self.k_tg(gid), *drop)
        await pipe.execute()

    async def tg_set_many(self, changes: dict[str, dict[str, Any]]) -> None:
        """:meth:`tg_set` for several games in one round trip (``{game id: fields}``)."""
        pipe = self.redis.pipeline(transaction=False)
        for gid, fields in changes.items():
            keep = {k: v for k, v in fields.items() if v is not None}
            drop = [k for k, v in fields.items() if v is None]
            if keep:
                pipe.hset(self.k_tg(gid), mapping=keep)
            if drop:
                pipe.hdel(self.k_tg(gid), *drop)
        await pipe.execute()

    async def outbox(self, gid: str) -> list[tuple[str, dict]]:
        """The announcements still to post, oldest first, as (raw, decoded)."""
        return [(raw, json.loads(raw)) for raw in await self.redis.lrange(self.k_outbox(gid), 0, -1)]

    async def outbox_done(self, gid: str, raw: str) -> None:
        """Drop the oldest announcement once posted (only if it is still ``raw``)."""
        await self._pop_if_head(keys=[self.k_outbox(gid)], args=[raw])

    async def outbox_drop(self, gid: str, raws: list[str]) -> None:
        """Drop these announcements wherever they are in the outbox (each is unique: it carries
        its ``seq``): one posted past others that wait, or the oldest of those kept beyond
        the most a game keeps while its group takes no message."""
        if not raws:
            return
        pipe = self.redis.pipeline(transaction=False)
        for raw in raws:
            pipe.lrem(self.k_outbox(gid), 1, raw)
        await pipe.execute()

    async def outbox_clear(self, gid: str) -> None:
        """Drop every announcement still to post (the group can no longer be written to)."""
        await self.redis.delete(self.k_outbox(gid))

    async def record(self, gid: str) -> tuple[list[str] | None, list[dict]]:
        """The game's deal (compact hands) and its action log."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hget(self.k_game(gid), "deal")
        pipe.lrange(self.k_log(gid), 0, -1)
        deal, actions = await pipe.execute()
        return (json.loads(deal) if deal else None), [json.loads(a) for a in actions]

    async def marked(self, gid: str, what: str, user_id: int) -> bool:
        """Whether ``what`` was marked for ``user_id`` in game ``gid`` (:meth:`first_time`)."""
        return bool(await self.redis.hexists(self.k_game(gid), f"once:{what}:{user_id}"))

    async def first_time(self, gid: str, what: str, user_id: int) -> bool:
        """True the first time ``what`` is marked for ``user_id`` in game ``gid`` (a field of
        the game's hash, which expires with it), False ever after: a side effect at most once."""
        return bool(await self.redis.hsetnx(self.k_game(gid), f"once:{what}:{user_id}", 1))
