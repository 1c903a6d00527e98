"""The connection to Redis: one Redis, redis-py's own ``RedisCluster`` (found from any node's
URL), Redis Sentinel (:mod:`tgbot.storage.sentinel`) or the embedded ``memory://`` store."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ResponseError

from tgbot.storage.timed import TimedRedis, TimedRedisCluster, fake_client

log = logging.getLogger(__name__)

#: Connections to one Redis per process (a blocking pool: a burst waits for a free one).
MAX_CONNECTIONS = 64
#: Connections per Cluster node: redis-py's cluster raises ``MaxConnectionsError`` past it
#: instead of waiting (redis/redis-py#3135), so it is far above the take-over's burst of syncs.
CLUSTER_CONNECTIONS = 1000
#: A command that meets a broken connection or times out is sent again, up to 3 times, after
#: 50 ms to 1 s. Resending a commit is safe: it records the update it applies.
RETRY = Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), 3)

#: Seconds a command (or a connection) may take before it fails as a timeout (and is resent, see
#: ``RETRY``): above the consumer's blocking read (1 s) so that read never times out, and equal to
#: the lease (5 s), so that a Redis frozen for longer fails the round trips and the process steps
#: down instead of waiting on it (its lease has lapsed by then anyway). redis-py's default, made
#: explicit for one Redis and a Cluster's nodes (docs/DESIGN.md, "Redis timeouts").
COMMAND_TIMEOUT = 5.0

#: The clients the bot works over: one Redis (or fakeredis), or a Redis Cluster.
RedisClient = Redis | RedisCluster


async def connect(url: str) -> RedisClient:
    """A checked ``decode_responses=True`` client for ``url``: ``memory://`` (or ``""``) an
    embedded fakeredis; ``redis+sentinel://…/<service>`` the primary the sentinels name; a Cluster
    node's URL the whole Cluster (database 0 only); else one Redis.

    Raises ``redis.exceptions.ConnectionError`` when Redis is unreachable (``MasterNotFoundError``
    for Sentinel), ``ValueError`` for a malformed URL, another scheme, or a sentinel or a replica
    given as ``redis://``, and ``RedisClusterException`` when the cluster's nodes cannot be learnt."""
    if url in ("", "memory://") or url.startswith("memory:"):
        fake = fake_client()  # (its commands timed: tgbot.storage.timed)
        await fake.ping()
        return fake
    scheme = urlsplit(url).scheme
    if scheme == "redis+sentinel":
        from tgbot.storage.sentinel import connect_sentinel

        return await connect_sentinel(url, RETRY)
    if scheme not in ("redis", "rediss", "unix"):
        raise ValueError(
            f"REDIS_URL must start with redis://, rediss://, unix://, redis+sentinel:// or memory://, not {scheme or url.partition(':')[0]!r}"
        )
    return await _connect_node(url)


async def _connect_node(url: str) -> RedisClient:
    """:func:`connect` for a ``redis://`` URL: one Redis, or the Cluster that node is part of."""
    pool = BlockingConnectionPool.from_url(
        url,
        decode_responses=True,
        retry=RETRY,
        max_connections=MAX_CONNECTIONS,
        timeout=20,
        socket_timeout=COMMAND_TIMEOUT,
        socket_connect_timeout=COMMAND_TIMEOUT,
    )
    client = TimedRedis.from_pool(pool)  # (its commands timed: tgbot.storage.timed)
    try:
        if not await _is_cluster(client):
            return client
    except BaseException:
        await client.aclose()
        raise
    await client.aclose()
    nodes = TimedRedisCluster.from_url(  # (timed too)
        url,
        decode_responses=True,
        max_connections=CLUSTER_CONNECTIONS,
        socket_timeout=COMMAND_TIMEOUT,
        socket_connect_timeout=COMMAND_TIMEOUT,
    )
    try:
        await nodes.ping()
    except BaseException:
        await nodes.aclose()
        raise
    log.info("REDIS_URL is a node of a Redis Cluster: %d primaries", len(nodes.get_primaries()))
    return nodes


async def _is_cluster(client: Redis) -> bool:
    """Whether ``client``'s node is part of a Cluster (not when INFO is refused, as by a restricted
    proxy). Raises ``ValueError`` for a Sentinel or a read-only replica."""
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
    return mode == "cluster"
