"""Redis Sentinel (``REDIS_URL=redis+sentinel://[[user]:password@]host[:port][,…]/<service>[/<db>]``):
redis-py's ``Sentinel(...).master_for(service)`` plus the two additions the fail-over test
(``tests/tgbot/test_sentinel.py``) needs: :class:`SentinelPool` and :meth:`SentinelRedis.follow`."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import MasterNotFoundError, Sentinel, SentinelConnectionPool
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError, RedisError, ResponseError, TimeoutError

from tgbot.settings import SentinelURL, parse_sentinel_url
from tgbot.storage.timed import TimedRedis

log = logging.getLogger(__name__)

#: Seconds to connect to a sentinel and for it to answer (one that does not is skipped).
SENTINEL_TIMEOUT = 1.0


class SentinelPool(SentinelConnectionPool):
    """redis-py's Sentinel pool that closes a connection released while connected to an old
    primary, as its synchronous pool does (``owns_connection``, cf. redis/redis-py#4187)."""

    # Without it, the ingest tail's blocking XREADGROUP in flight as the pool moves goes on
    # reading the old primary: taps ingested on the new one are never read (the game stops;
    # test_sentinel.py::test_a_game_goes_on_through_a_failover).
    async def release(self, connection: Any) -> None:
        if connection.is_connected and (connection.host, connection.port) != self.master_address:
            await connection.disconnect()
        await super().release(connection)


class SentinelRedis(TimedRedis):
    """redis-py's client of the primary that also follows the sentinels' announcements of a
    fail-over (redis/redis-py#3867); :meth:`aclose` stops that and closes the sentinels' connections."""

    _listeners: tuple[asyncio.Task[None], ...] = ()

    def follow(self, service: str) -> None:
        """Listen to each sentinel for fail-overs of ``service`` (tasks of the running loop)."""
        pool = self.connection_pool
        assert isinstance(pool, SentinelConnectionPool)
        self._listeners = tuple(
            asyncio.create_task(self._listen(pool, node, service), name=f"sentinel-listener-{i}")
            for i, node in enumerate(pool.sentinel_manager.sentinels)
        )

    # Without it, the pool stays on the old primary, which accepts writes until the sentinels
    # demote it 8 to 20 s later and then drops them: committed moves are lost
    # (test_sentinel.py::test_a_game_goes_on_through_a_failover).
    @staticmethod
    async def _listen(pool: SentinelConnectionPool, node: Redis, service: str) -> None:
        """On each ``+switch-master`` of ``service``, ask the sentinels for the primary: redis-py's
        ``get_master_address`` moves the pool once they name another. Subscribes again after a loss."""
        while True:
            try:
                async with node.pubsub() as channel:
                    await channel.subscribe("+switch-master")
                    while True:
                        note = await channel.get_message(ignore_subscribe_messages=True, timeout=60)
                        if note and note["data"].split()[:1] == [service.encode()]:
                            before = pool.master_address
                            if await pool.get_master_address() != before:
                                log.warning(
                                    "Redis Sentinel: the primary of %r is now %s:%s", service, *pool.master_address
                                )
            except (RedisError, OSError) as e:
                log.debug("sentinel listener: %s; again in 1 s", e)
                await asyncio.sleep(1)

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        """Stop the listeners, close the client (and its pool) and the sentinels' connections."""
        # cancelled again until they end: on Python 3.11, asyncio.wait_for (redis-py's send) drops
        # a cancellation that comes as the awaited write completes (python/cpython#86296;
        # test_sentinel.py::test_connect_gives_the_primary closes ten clients at once)
        while pending := [task for task in self._listeners if not task.done()]:
            for task in pending:
                task.cancel()
            await asyncio.wait(pending, timeout=0.1)
        await super().aclose(close_connection_pool)
        pool = self.connection_pool
        assert isinstance(pool, SentinelConnectionPool)
        await pool.sentinel_manager.aclose()


async def connect_sentinel(url: str, retry: Retry | None = None) -> SentinelRedis:
    """A :class:`SentinelRedis` of the primary the URL names, which answered a PING and follows fail-overs.
    Raises ``ValueError`` (a malformed URL, a host that is no sentinel), ``MasterNotFoundError`` (why, in one line)."""
    parts = parse_sentinel_url(url)
    sentinel = Sentinel(parts.sentinels, sentinel_kwargs=_sentinel_options(parts))
    try:
        await sentinel.discover_master(parts.service)
    except MasterNotFoundError:
        await sentinel.aclose()
        raise MasterNotFoundError(await _no_primary(parts)) from None
    except ResponseError as e:  # e.g. "unknown command 'SENTINEL'": a data node's address
        await sentinel.aclose()
        raise ValueError(
            f"a host of the redis+sentinel:// URL is not a Redis Sentinel ({e}); "
            "a primary's own address is given as redis://"
        ) from None
    client = sentinel.master_for(
        parts.service,
        redis_class=SentinelRedis,
        connection_pool_class=SentinelPool,
        decode_responses=True,
        retry=retry,
        db=parts.db,
        username=parts.username,
        password=parts.password,
    )
    assert isinstance(client, SentinelRedis)
    try:
        await client.ping()
    except BaseException:
        await client.aclose()
        raise
    client.follow(parts.service)
    return client


def _sentinel_options(parts: SentinelURL) -> dict[str, Any]:
    """The sentinels' password, timeouts, and no retry: the next sentinel is asked instead."""
    return {
        "password": parts.sentinel_password,
        "socket_timeout": SENTINEL_TIMEOUT,
        "socket_connect_timeout": SENTINEL_TIMEOUT,
        "retry": Retry(NoBackoff(), 0),
    }


async def _no_primary(parts: SentinelURL) -> str:
    """Why no sentinel of ``parts`` named a usable primary, in one line."""
    reached, lost = [], []
    for host, port in parts.sentinels:
        async with Redis(host=host, port=port, **_sentinel_options(parts)) as node:
            try:
                await node.ping()
                reached.append(f"{host}:{port}")
            except (ConnectionError, TimeoutError, ResponseError) as e:
                lost.append(f"{host}:{port} ({e})")
    if not reached:
        return "cannot reach any sentinel: " + ", ".join(lost)
    why = f"no sentinel ({', '.join(reached)}) names a primary that is up for service {parts.service!r}"
    return why + (f"; cannot reach {', '.join(lost)}" if lost else "")
