"""The connection to Redis: one Redis, a Redis Cluster (:class:`GatedCluster`), Redis Sentinel
(:mod:`tgbot.storage.sentinel`) or the embedded ``memory://`` store; redis-py's retry policy."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ResponseError

__all__ = ["MAX_CONNECTIONS", "RETRY", "GatedCluster", "RedisClient", "connect"]

log = logging.getLogger(__name__)

#: Connections per process to Redis (a blocking pool: callers wait for a free one); on a
#: Cluster, the commands and pipelines in flight per process (:class:`GatedCluster`).
MAX_CONNECTIONS = 64
#: A command that meets a broken connection or times out is sent again on a new one, up to 3
#: times, after 50 ms to 1 s. Resending a commit is safe: it records the update it applies.
RETRY = Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), 3)

#: The clients the bot works over: one Redis (or fakeredis), or a Redis Cluster.
RedisClient = Redis | RedisCluster

#: Set while a task holds one of a :class:`GatedCluster`'s slots (a pipeline's redirected
#: commands then run under the pipeline's slot instead of waiting for a second one).
_GATE_HELD: contextvars.ContextVar[bool] = contextvars.ContextVar("cheat_cluster_gate", default=False)


class GatedCluster(RedisCluster):
    """redis-py's :class:`~redis.asyncio.cluster.RedisCluster` with at most ``max_connections``
    commands and pipelines in flight, the others waiting (redis-py's cluster pool raises
    ``MaxConnectionsError`` instead, which a burst of syncs at start-up would hit)."""

    __slots__ = ("_gate",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max_connections", 100)
        super().__init__(*args, **kwargs)
        self._gate = asyncio.Semaphore(kwargs["max_connections"])

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
        return _GatedPipeline(self, transaction)  # type: ignore[abstract]  # (redis-py's stubs: set in __init__)


class _GatedPipeline(ClusterPipeline):
    """A cluster pipeline that runs holding one of its client's slots."""

    __slots__ = ()

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
        client = self.cluster_client
        assert isinstance(client, GatedCluster)
        return await client.gated(lambda: super(_GatedPipeline, self).execute(raise_on_error, allow_redirections))


async def _mode(client: Redis) -> str:
    """``"cluster"`` or ``"standalone"`` (also when INFO is refused, as by a restricted proxy).
    Raises ``ValueError`` for a Sentinel or a read-only replica, ``ConnectionError`` when the
    node does not answer."""
    try:
        mode = (await client.info("server")).get("redis_mode", "standalone")
        if mode == "sentinel":
            raise ValueError(
                "REDIS_URL names a Redis Sentinel: give it as redis+sentinel://host:port/<service> (docs/scaling.md)"
            )
        role = await client.role() if mode != "cluster" else ["master"]
        if role[0] == "slave":
            raise ValueError(
                f"REDIS_URL names a read-only replica (of {role[1]}:{role[2]}): give the primary, or redis+sentinel:// to follow fail-overs"
            )
    except ResponseError:
        mode = "standalone"  # INFO or ROLE refused: one Redis, as far as we can tell
    await client.ping()  # (raises what INFO met, if that was not a refusal)
    return mode


async def connect(url: str) -> RedisClient:
    """A redis-py asyncio client (``decode_responses=True``) for ``url``, checked to answer:
    ``memory://`` (or ``""``) an embedded fakeredis; ``redis+sentinel://…/<service>`` the
    primary Sentinels name (:func:`tgbot.storage.sentinel.connect_sentinel`); a Cluster node's
    URL a :class:`GatedCluster` (database 0 only); else one Redis over a blocking pool of
    :data:`MAX_CONNECTIONS`.

    Raises ``redis.exceptions.ConnectionError`` when Redis is unreachable (``MasterNotFoundError``
    for Sentinel), ``ValueError`` for a malformed URL, another scheme, a sentinel or a replica
    given as ``redis://``, ``ResponseError`` for a Cluster URL naming a database other than 0,
    and ``RedisClusterException`` when the cluster's nodes cannot be learnt."""
    if url in ("", "memory://") or url.startswith("memory:"):
        import fakeredis

        fake: Redis = fakeredis.FakeAsyncRedis(decode_responses=True)
        await fake.ping()
        return fake
    scheme = urlsplit(url).scheme
    if scheme == "redis+sentinel":
        from tgbot.storage.sentinel import connect_sentinel

        return await connect_sentinel(url)
    if scheme not in ("redis", "rediss", "unix"):
        raise ValueError(
            f"REDIS_URL must start with redis://, rediss://, unix://, redis+sentinel:// or memory://, not {scheme or url.partition(':')[0]!r}"
        )
    return await _connect_node(url)


async def _connect_node(url: str) -> RedisClient:
    """:func:`connect` for a ``redis://`` URL: one Redis, or the Cluster that node is part of."""
    # A blocking pool: a burst waits for a free connection instead of failing. A connection that
    # died while idle fails its next command, which reconnects and is sent again (RETRY).
    pool = BlockingConnectionPool.from_url(
        url, decode_responses=True, retry=RETRY, max_connections=MAX_CONNECTIONS, timeout=20
    )
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
