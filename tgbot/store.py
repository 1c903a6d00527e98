"""Storage in Redis: the one transaction path, the outbox, the indexes, the deadlines.

Keys (DESIGN.md, Storage): a game's own keys share the hash tag ``{g<id>}`` so they live in one
Redis Cluster slot and one Lua script can change them atomically:

- ``cheat:{g<id>}:game``   hash: ``v`` (version), ``t`` (the table, JSON), ``deal`` (JSON list)
- ``cheat:{g<id>}:log``    list: the record's actions, one JSON object each (append-only)
- ``cheat:{g<id>}:outbox`` list: announcements still to post (JSON, with ``seq``)
- ``cheat:{g<id>}:tg``     hash: Telegram bookkeeping (message ids and what they show)
- ``cheat:{g<id>}:upd``    sorted set: the ids of the game's latest taps (de-duplication)

Indexes live in other slots and are single-key entries, checked against the game when read:
``cheat:chat:<chat>:<thread>`` (live game of a chat or topic), ``cheat:live`` (set of live game
ids), ``cheat:deadlines`` (sorted set: game id → epoch seconds), ``cheat:user:<id>`` (hash:
``dm`` = the bot can write to them, ``lang`` = their own language for private messages),
``cheat:user:<id>:games`` (set: the live games they are seated at), ``cheat:chatcfg:<chat>``
(hash: the chat's settings, see :class:`ChatSettings`), ``cheat:upd:<update_id>`` (processed
updates other than taps, 24 h TTL).

:func:`connect` gives the client: one Redis, or, when ``REDIS_URL`` names a node of a Redis
Cluster, a :class:`GatedCluster` (redis-py's cluster client), or for a ``redis+sentinel://``
URL a :class:`tgbot.sentinel.SentinelRedis` (redis-py's Sentinel client, following fail-overs); every script
names all its keys in KEYS and they share one slot, and the pipelines here are
non-transactional (docs/scaling.md).

Every change to a game goes through :meth:`Store.transact`: read (one round trip), apply a pure
transition, then one Lua compare-and-set on the version that also appends to the log and the
outbox (one round trip); on a conflict it reads again and retries.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import secrets
import time
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Awaitable, Callable, NamedTuple
from urllib.parse import urlsplit

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ResponseError

from .model import Change, Refused, Table, move_chat

__all__ = ["Store", "Snapshot", "SyncGrant", "SYNC_LANES", "LOCK_MS", "ChatSettings", "Conflict", "new_game_id", "connect", "RedisClient", "GatedCluster", "MAX_CONNECTIONS", "RETRY", "UPDATE_TTL", "RECENT_TAPS", "FINISHED_TTL"]

log = logging.getLogger(__name__)

#: A game's stored table read in the same round trip as the update's de-duplication (see
#: :meth:`Store.first_delivery`): ``{"gid", "t": raw JSON or None}``, used once, by the next
#: :meth:`Store.load` of that game in the same update (context-local, so per update; the view
#: sync runs in its own context); for a card pick also ``"pick"``, its panel claimed in the
#: same script (:meth:`Store.take_pick_claim`).
_PREFETCH: contextvars.ContextVar[dict | None] = contextvars.ContextVar("cheat_prefetch", default=None)


def _prefetched(gid: str, part: str) -> tuple[bool, Any]:
    pre = _PREFETCH.get()
    if pre is None or pre["gid"] != gid or part not in pre:
        return False, None
    return True, pre.pop(part)


@lru_cache(maxsize=1024)
def _table(raw: str | None) -> Table | None:
    """The table stored as ``raw`` (``None``: no game). Tables are immutable and one stored
    version is read several times (each card pick of a turn, both sync lanes after a change),
    so the decoded table is kept per raw JSON."""
    return Table.from_json(raw) if raw else None


class Snapshot(NamedTuple):
    """What a view sync decides on: the table (``None``: no such game), the game's tg hash and
    its outbox as ``(raw, decoded)`` pairs, oldest first."""

    table: Table | None
    tg: dict[str, str]
    outbox: list[tuple[str, dict]]

    @classmethod
    def decode(cls, raw: str | None, tg_flat: list[str], outbox: list[str]) -> "Snapshot":
        """From a script's reply: HGET, HGETALL (flat field/value list), LRANGE."""
        return cls.of(_table(raw), dict(zip(tg_flat[::2], tg_flat[1::2])), outbox)

    @classmethod
    def of(cls, table: Table | None, tg: dict[str, str], outbox: list[str]) -> "Snapshot":
        """From the table, the tg hash and the outbox's raw notes (oldest first)."""
        return cls(table, tg, [(o, json.loads(o)) for o in outbox])


class SyncGrant(NamedTuple):
    """The view sync's lanes as a commit left them (:meth:`Store.transact` with ``sync=True``),
    so the sync that follows needs no round trip of its own to start.

    ``token``: what the lanes' locks were taken with; ``busy``: per lane (:data:`SYNC_LANES`),
    ``None`` when this commit took its lock, else the milliseconds left on another holder's
    lock (the lane was marked dirty for that holder in the same step); ``snapshot``: the table
    as committed, with the tg hash and outbox read in the same step; ``at``:
    ``time.monotonic()`` when the commit returned (the locks last :data:`LOCK_MS` from then)."""

    token: str
    busy: dict[str, int | None]
    snapshot: Snapshot
    at: float


#: Connections per process to Redis (a blocking pool: callers wait for a free one; with
#: Sentinel, to the primary); on a Redis Cluster, the commands and pipelines in flight per
#: process (:class:`GatedCluster`: callers wait too) and so the connections to each node.
MAX_CONNECTIONS = 64
#: A command that meets a broken connection is sent again on a new one, up to 3 times, after
#: 50 ms to 1 s (redis-py's Retry: ConnectionError and TimeoutError). Resending is safe here:
#: a compare-and-set that did apply answers a conflict, and the retried transaction finds its
#: own change (a tap's turn is then stale, a deadline no longer due). With Sentinel, a write
#: refused as READONLY by a primary since demoted is such an error too (redis-py's Sentinel
#: connection turns it into a ConnectionError), and the new connection asks the sentinels for
#: the primary (:class:`SentinelConnection`).
RETRY = Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), 3)
#: Processed update ids are remembered for a day (issue: re-delivered updates apply once).
UPDATE_TTL = 24 * 3600
#: A game remembers the ids of this many of its latest taps (a re-delivery comes within a few
#: seconds, while a game sees a few taps a second at most; an older id counts as seen).
RECENT_TAPS = 32
#: A finished game's keys are kept this long (seconds) for its record and late taps.
FINISHED_TTL = 7 * 24 * 3600
#: The view sync's lanes (:mod:`tgbot.sync`): players' panels, then the group's messages. Each
#: has a lock and a dirty marker in the game's slot (:meth:`Store.k_sync`).
SYNC_LANES = ("dm", "group")
#: Milliseconds a process holds a game lane's lock (a crashed holder's lock runs out after this).
LOCK_MS = 10_000

# KEYS: 1 the game hash, 2 its log, 3 its outbox, 4 its tg hash, 5-8 the view sync's lanes
# (lock, dirty marker) × (dm, group). ARGV: 1 expected version ('' for a creation), 2 new
# version, 3 table JSON, 4 deal JSON ('' none), 5 ttl s (0 none), 6 sync token ('' none), 7 lock
# ms, 8 number of log entries, then the log entries, then the outbox notes. Returns 0 on a
# version conflict; 1 when committed without a token; with a token also takes each lane's lock
# as tgbot.sync's _ACQUIRE does (or marks the lane dirty for its holder; taking it drops a marker
# left for a dead holder) and reads what the sync
# decides on: {1, dm taken (1/0), dm holder's ms left, group taken, group ms left, tg (flat),
# outbox}.
_CAS = """
local cur = redis.call('HGET', KEYS[1], 'v')
if (cur or '') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 't', ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'deal', ARGV[4]) end
local nlog = tonumber(ARGV[8])
for i = 1, nlog do redis.call('RPUSH', KEYS[2], ARGV[8 + i]) end
for i = 9 + nlog, #ARGV do redis.call('RPUSH', KEYS[3], ARGV[i]) end
local ttl = tonumber(ARGV[5])
if ttl > 0 then
  for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ttl) end
end
if ARGV[6] == '' then return 1 end
local function take(lock, dirty)
  if redis.call('SET', lock, ARGV[6], 'NX', 'PX', ARGV[7]) then
    redis.call('DEL', dirty)
    return 1, 0
  end
  redis.call('SET', dirty, 1, 'PX', ARGV[7])
  return 0, redis.call('PTTL', lock)
end
local dm, dm_left = take(KEYS[5], KEYS[6])
local group, group_left = take(KEYS[7], KEYS[8])
return {1, dm, dm_left, group, group_left, redis.call('HGETALL', KEYS[4]), redis.call('LRANGE', KEYS[3], 0, -1)}
"""

# A tap's de-duplication and its game's table read, in one round trip on the game's slot. KEYS:
# 1 the game's recent update ids (sorted set, score = id), 2 the game hash, 3 its tg hash. ARGV:
# 1 update id, 2 how many ids to keep, 3 their ttl (s), and for a card pick 4 the tapped message
# id, 5 the picks, 6 the user id. An id below every kept one counts as seen. A card pick also
# claims its panel as Store.claim_panel does, by the identity 'k<version>:<picks>' (the panel is a
# pure function of the table version, the seat and the picks), finding the seat by the user
# (tg field 's<user id>', written with each new panel): {first, t, code, seat, old, identity};
# code 0 (and nothing more) when that is not known to be the user's current panel.
_FIRST_TAP = """
local first = 0
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  local keep, n = tonumber(ARGV[2]), redis.call('ZCARD', KEYS[1])
  local lowest = nil
  if n >= keep then lowest = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]) end
  if lowest == nil or tonumber(ARGV[1]) > lowest then
    redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1])
    if n >= keep then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - keep) end
    redis.call('EXPIRE', KEYS[1], ARGV[3])
    first = 1
  end
end
local t = redis.call('HGET', KEYS[2], 't')
if first == 0 or not ARGV[5] then return {first, t} end
local seat = redis.call('HGET', KEYS[3], 's' .. ARGV[6])
if not seat or redis.call('HGET', KEYS[3], 'p' .. seat) ~= ARGV[4] then return {first, t, 0} end
local id = 'k' .. (redis.call('HGET', KEYS[2], 'v') or '') .. ':' .. ARGV[5]
local old = redis.call('HGET', KEYS[3], 'pd' .. seat)
if old == id then return {first, t, 1, seat, '', id} end
redis.call('HSET', KEYS[3], 'pd' .. seat, id)
return {first, t, 2, seat, old or '', id}
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

# KEYS: a game's tg hash; ARGV: field, expected value, then field/value pairs to set.
_TG_SET_IF = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
return 1
"""

# KEYS: a game's tg hash; ARGV: 1 panel id field, 2 the tapped message id, 3 digest field,
# 4 new digest, 5 key field ('' none), 6 key. See Store.claim_panel.
_CLAIM_PANEL = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return {0} end
local old, oldkey = redis.call('HGET', KEYS[1], ARGV[3]), ''
if ARGV[5] ~= '' then
  oldkey = redis.call('HGET', KEYS[1], ARGV[5]) or ''
  redis.call('HSET', KEYS[1], ARGV[5], ARGV[6])
end
if old == ARGV[4] then return {1} end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
return {2, old or '', oldkey}
"""

_CLAIM_DEADLINE = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
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


class Conflict(Exception):
    """A transaction lost the compare-and-set too many times in a row."""


def new_game_id() -> str:
    """A fresh game id: 8 characters of ``A-Za-z0-9_-`` (48 random bits)."""
    return secrets.token_urlsafe(6)


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
      Sentinels monitor as ``service``, a :class:`tgbot.sentinel.SentinelRedis` (redis-py's
      ``Sentinel.master_for``) over a blocking pool of :data:`MAX_CONNECTIONS` connections,
      which finds the new primary after a fail-over;
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
        from .sentinel import connect_sentinel  # (it builds on this module's RETRY and pool size)

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
    as it was before (``None`` for a creation)."""

    change: Change
    before: Table | None
    grant: SyncGrant | None = None


class Store:
    """The game store over one redis-py asyncio client (``decode_responses=True``): one Redis
    (or fakeredis), or a Redis Cluster (every script's keys share one slot; see the module
    docstring)."""

    def __init__(self, redis: RedisClient, prefix: str = "cheat") -> None:
        self.redis = redis
        self.p = prefix
        self._cas = redis.register_script(_CAS)
        self._pop_if_head = redis.register_script(_POP_IF_HEAD)
        self._del_if = redis.register_script(_DEL_IF)
        self._set_if = redis.register_script(_SET_IF)
        self._tg_set_if = redis.register_script(_TG_SET_IF)
        self._claim = redis.register_script(_CLAIM_DEADLINE)
        self._first_tap = redis.register_script(_FIRST_TAP)
        self._claim_panel = redis.register_script(_CLAIM_PANEL)

    # -- key names -------------------------------------------------------------------------

    def k_game(self, gid: str) -> str:
        return f"{self.p}:{{g{gid}}}:game"

    def k_log(self, gid: str) -> str:
        return f"{self.p}:{{g{gid}}}:log"

    def k_outbox(self, gid: str) -> str:
        return f"{self.p}:{{g{gid}}}:outbox"

    def k_tg(self, gid: str) -> str:
        return f"{self.p}:{{g{gid}}}:tg"

    def k_upd(self, gid: str) -> str:
        return f"{self.p}:{{g{gid}}}:upd"

    def k_sync(self, gid: str, lane: str) -> list[str]:
        """A view sync lane's cross-process lock and its dirty marker (in the game's slot)."""
        base = f"{self.p}:{{g{gid}}}:sync:{lane}"
        return [base, base + ":dirty"]

    def k_chat(self, chat_id: int, thread_id: int | None) -> str:
        return f"{self.p}:chat:{chat_id}:{thread_id or 0}"

    def k_chatcfg(self, chat_id: int) -> str:
        return f"{self.p}:chatcfg:{chat_id}"

    def k_user(self, user_id: int) -> str:
        return f"{self.p}:user:{user_id}"

    def k_user_games(self, user_id: int) -> str:
        return f"{self.p}:user:{user_id}:games"

    @property
    def k_live(self) -> str:
        return f"{self.p}:live"

    @property
    def k_deadlines(self) -> str:
        return f"{self.p}:deadlines"

    # -- the transaction path --------------------------------------------------------------

    async def load(self, gid: str) -> Table | None:
        """The table of game ``gid``, or ``None`` if there is none. The first load of the game
        the update's de-duplication prefetched costs no round trip (a table that changed since
        is caught by the compare-and-set, which then reloads)."""
        hit, raw = _prefetched(gid, "t")
        if not hit:
            raw = await self.redis.hget(self.k_game(gid), "t")
        return _table(raw)

    def snapshot_keys(self, gid: str) -> list[str]:
        """The keys :meth:`snapshot` reads (the table hash, the tg hash, the outbox), for a
        script that reads them with something else (the sync lane's lock)."""
        return [self.k_game(gid), self.k_tg(gid), self.k_outbox(gid)]

    async def snapshot(self, gid: str) -> Snapshot:
        """The table, its Telegram bookkeeping hash and its outbox, in one round trip (a view
        sync decides on these; the caller holds the game lane's lock)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hget(self.k_game(gid), "t")
        pipe.hgetall(self.k_tg(gid))
        pipe.lrange(self.k_outbox(gid), 0, -1)
        raw, tg, out = await pipe.execute()
        return Snapshot.of(_table(raw), tg, out)

    async def create(self, table: Table) -> bool:
        """Store a new table (version 1). False if the id is taken."""
        return await self._commit(None, Change(table))

    async def transact(self, gid: str, fn: Callable[[Table], Change], attempts: int = 32, sync: bool = False) -> Committed:
        """Load game ``gid``, compute ``fn(table)``, commit it as one compare-and-set; on a
        conflict, load again and retry (at most ``attempts`` times).

        ``fn`` must be pure; it may raise :class:`~tgbot.model.Refused`, which propagates (as
        does ``Refused("no_game")`` when there is no such game). A change whose table is the
        loaded one is not written. Raises :class:`Conflict` when every attempt lost the race.

        With ``sync=True`` the compare-and-set also takes the view sync's lane locks and reads
        what the sync decides on, in the same round trip: the result's ``grant``, which the
        caller must hand to :meth:`tgbot.sync.Syncer.request` at once (``None`` when nothing
        was written).
        """
        for _ in range(attempts):
            table = await self.load(gid)
            if table is None:
                raise Refused("no_game")
            change = fn(table)
            if change.table is table and not change.log and not change.outbox:
                return Committed(change, table)
            got = await self._commit(table, change, secrets.token_hex(8) if sync else None)
            if got:
                await self._after_commit(table, change.table)
                return Committed(change, table, got if isinstance(got, SyncGrant) else None)
        raise Conflict(f"game {gid}: {attempts} conflicting attempts")

    async def _commit(self, before: Table | None, change: Change, token: str | None = None) -> bool | SyncGrant:
        new = change.table
        version = (before.version if before else 0) + 1
        new = replace(new, version=version)
        change.table = new
        ttl = FINISHED_TTL if not new.live else 0
        args: list[Any] = [
            str(before.version) if before else "",
            str(version),
            new.to_json(),
            json.dumps(change.deal) if change.deal is not None else "",
            str(ttl),
            token or "",
            LOCK_MS,
            str(len(change.log)),
            *[json.dumps(a, separators=(",", ":")) for a in change.log],
            *[json.dumps(o, ensure_ascii=False, separators=(",", ":")) for o in change.outbox],
        ]
        keys = [self.k_game(new.id), self.k_log(new.id), self.k_outbox(new.id), self.k_tg(new.id)]
        keys += [k for lane in SYNC_LANES for k in self.k_sync(new.id, lane)]
        got = await self._cas(keys=keys, args=args)
        if got and before is None:
            await self._after_commit(None, new)
        if not isinstance(got, list):
            return bool(got)
        assert token is not None
        busy = {lane: None if int(got[1 + 2 * i]) else int(got[2 + 2 * i]) for i, lane in enumerate(SYNC_LANES)}
        return SyncGrant(token, busy, Snapshot.of(new, dict(zip(got[5][::2], got[5][1::2])), got[6]), time.monotonic())

    async def _after_commit(self, before: Table | None, after: Table) -> None:
        """Bring the indexes in line with a committed table (one pipelined round trip). Each
        index is checked against the game when read, so a crash between the commit and this
        leaves nothing wrong.

        The deadlines index is never later than a table's own deadline, but may be earlier: a
        deadline that moves later (the next turn's timer, the usual case of a play) is not
        written, and the earlier entry fires as ``stale`` and is moved then
        (:func:`tgbot.timers.fire_due`): one write per turn-timer period instead of one per
        play. A change that moves no index this way (same liveness and human players: a play)
        costs no round trip at all."""
        now_in = {x.user_id for x in after.seats if x.human} if after.live else set()
        was_in = {x.user_id for x in before.seats if x.human} if before is not None else None
        later = after.deadline is None or (before is not None and before.deadline is not None and after.deadline >= before.deadline)
        if before is not None and before.live == after.live and later and now_in == was_in:
            return
        was_in = was_in or set()
        pipe = self.redis.pipeline(transaction=False)
        # An ended game stays in the live set until the syncer has shown its end (its result
        # may still be in the outbox); its chat is freed at once for the next game.
        pipe.sadd(self.k_live, after.id)
        if not after.live:
            # (a registered Script's __call__ is a coroutine on the asyncio client, never queued
            # on a pipeline: queue the script itself)
            pipe.eval(_DEL_IF, 1, self.k_chat(after.chat_id, after.thread_id), after.id)
        # user -> live games index (cheat:user:<id>:games), checked against the game when read
        for uid in now_in - was_in:
            pipe.sadd(self.k_user_games(uid), after.id)
        for uid in was_in - now_in:
            pipe.srem(self.k_user_games(uid), after.id)
        if after.deadline is not None:
            pipe.zadd(self.k_deadlines, {after.id: after.deadline})
        elif before is None or before.deadline is not None:
            pipe.zrem(self.k_deadlines, after.id)
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
        """Every live table of a chat, in all its forum topics (chat index, checked against
        each game)."""
        out = []
        async for key in self.redis.scan_iter(match=f"{self.p}:chat:{chat_id}:*", count=100):
            gid = await self.redis.get(key)
            table = await self.load(gid) if gid else None
            if table is not None and table.live and table.chat_id == chat_id and self.k_chat(chat_id, table.thread_id) == key:
                out.append(table)
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
            moved.append(table.id)
        return moved

    async def live_games(self) -> list[str]:
        """Ids of the games that may be live or still have something to show (the caller
        checks each)."""
        return sorted(await self.redis.smembers(self.k_live))

    async def forget_live(self, gid: str) -> None:
        """Drop an ended game from the live set once everything of it has been shown."""
        await self.redis.srem(self.k_live, gid)

    async def reschedule(self, table: Table) -> None:
        """Put the deadlines index back in line with the table's own deadline."""
        if table.deadline is not None:
            await self.redis.zadd(self.k_deadlines, {table.id: table.deadline})
        else:
            await self.redis.zrem(self.k_deadlines, table.id)

    async def first_delivery(self, update_id: int, gid: str | None = None, pick: tuple[int, str, int] | None = None) -> bool:
        """Remember ``update_id``; False if it was seen in the last 24 hours, in one round trip.
        With ``gid`` (a tap's game) the id is kept with the game (``cheat:{g<id>}:upd``, its
        :data:`RECENT_TAPS` latest, on the game's slot) and the game's table is read in the same
        script for the update's first :meth:`load` (the transaction's read, or a card pick's).
        ``pick`` (a card pick: the tapped message id, the picks and the user id) also claims
        that panel in the same script (see :meth:`take_pick_claim`)."""
        _PREFETCH.set(None)  # nothing of an earlier update processed in this context is reused
        if gid is None:
            return bool(await self.redis.set(f"{self.p}:upd:{update_id}", 1, nx=True, ex=UPDATE_TTL))
        args: list[Any] = [update_id, RECENT_TAPS, UPDATE_TTL, *(pick or ())]
        got = await self._first_tap(keys=[self.k_upd(gid), self.k_game(gid), self.k_tg(gid)], args=args)
        pre: dict[str, Any] = {"gid": gid, "t": got[1]}
        if len(got) > 2:
            code = int(got[2])
            assert pick is not None  # only a card pick's script returns its claim
            asked = (pick[0], pick[1])
            pre["pick"] = (asked, code, int(got[3]), got[4], got[5]) if code else (asked, 0, None, None, None)
        _PREFETCH.set(pre)
        return bool(got[0])

    @staticmethod
    def pick_identity(table: Table, picks: str) -> str:
        """What a card-picking panel shows, as recorded in ``pd<seat>`` instead of a digest:
        the panel is a pure function of the table version, the seat and the picks."""
        return f"k{table.version}:{picks}"

    async def take_pick_claim(self, table: Table, seat: int, message_id: int, picks: str) -> tuple[str, str | None] | bool | None:
        """The claim :meth:`first_delivery` made for this card pick, in
        :meth:`claim_panel`'s terms (True: it shows this already; else the previous
        ``(identity, None)`` to put back if the edit fails), or ``None`` when none was made for
        exactly this seat, message, picks and table version (then :meth:`claim_panel` decides).
        A claim the tap turned out not to stand for (a stale pick: ``picks`` is then empty) is
        put back first, so the redraw compares with what the panel really shows."""
        hit, got = _prefetched(table.id, "pick")
        if not hit:
            return None
        asked, code, claimed_seat, old, identity = got
        if not code or asked != (message_id, picks) or claimed_seat != seat or identity != self.pick_identity(table, picks):
            if code == 2:
                await self.tg_set_if(table.id, f"pd{claimed_seat}", identity, **{f"pd{claimed_seat}": old})
            return None
        if code == 2:
            return (old, None)
        return bool(code)

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
    # -- chat settings ---------------------------------------------------------------------

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

    # -- deadlines -------------------------------------------------------------------------

    async def due(self, now: float, limit: int = 50) -> list[tuple[str, float]]:
        """Game ids whose deadline is at or before ``now`` (epoch seconds)."""
        return await self.redis.zrangebyscore(self.k_deadlines, "-inf", now, start=0, num=limit, withscores=True)

    async def next_deadline(self) -> float | None:
        """The earliest deadline in the index (epoch seconds), or ``None``."""
        first = await self.redis.zrange(self.k_deadlines, 0, 0, withscores=True)
        return float(first[0][1]) if first else None

    async def claim_deadline(self, gid: str, now: float, lease: float) -> bool:
        """Claim a due deadline for ``lease`` seconds (pushes it to ``now + lease``), so one
        process fires it; if that process dies, the lease runs out and another one fires it."""
        return bool(await self._claim(keys=[self.k_deadlines], args=[gid, now, now + lease]))

    # -- Telegram side ---------------------------------------------------------------------

    async def tg_get(self, gid: str) -> dict[str, str]:
        """The game's Telegram bookkeeping (message ids, shown-content hashes)."""
        return await self.redis.hgetall(self.k_tg(gid))

    async def tg_add(self, gid: str, field: str, value: Any) -> bool:
        """Set one tg field unless it is set already (HSETNX); True when it was set now."""
        return bool(await self.redis.hsetnx(self.k_tg(gid), field, value))

    async def tg_set_if(self, gid: str, field: str, expected: str, **fields: Any) -> bool:
        """Set tg fields (none may be ``None``) only while ``field`` still holds ``expected``,
        atomically (a tap's redraw records what its panel shows only if that panel is still
        the current one). False when it no longer does."""
        args: list[Any] = [field, expected]
        for k, v in fields.items():
            args += [k, v]
        return bool(await self._tg_set_if(keys=[self.k_tg(gid)], args=args))

    async def claim_panel(self, gid: str, seat: int, message_id: int, digest: str, key: str | None) -> tuple[str, str] | bool:
        """Before a tap redraws its panel (message ``message_id`` of ``seat``), in one round trip:
        if that message is still the seat's current panel (``p<seat>``), record that it shows
        ``digest`` (``pd<seat>``) and, unless ``key`` is ``None``, the player's situation ``key``
        (``pk<seat>``). Returns False when it is not the current panel (do not draw), True when
        it already shows ``digest`` (nothing to draw), else the previous ``(digest, key)`` to
        put back with :meth:`tg_set_if` if the edit fails."""
        got = await self._claim_panel(keys=[self.k_tg(gid)], args=[f"p{seat}", message_id, f"pd{seat}", digest, f"pk{seat}" if key is not None else "", key or ""])
        if int(got[0]) < 2:
            return bool(int(got[0]))
        return got[1], got[2]

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

    async def outbox(self, gid: str) -> list[tuple[str, dict]]:
        """The announcements still to post, oldest first, as (raw, decoded)."""
        return [(raw, json.loads(raw)) for raw in await self.redis.lrange(self.k_outbox(gid), 0, -1)]

    async def outbox_done(self, gid: str, raw: str) -> None:
        """Drop the oldest announcement once posted (only if it is still ``raw``)."""
        await self._pop_if_head(keys=[self.k_outbox(gid)], args=[raw])

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
