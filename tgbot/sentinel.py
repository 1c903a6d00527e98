"""Redis Sentinel: ``REDIS_URL=redis+sentinel://[[user]:password@]host[:port][,…]/<service>[/<db>]``.

:func:`tgbot.store.connect` hands such a URL to :func:`connect_sentinel`, which builds on
redis-py's :class:`~redis.asyncio.sentinel.Sentinel` (``master_for``) and adds what redis-py 8
lacks to survive a fail-over without losing writes (measured against real sentinels in
``tests/tgbot/test_sentinel.py``; docs/scaling.md, Redis):

- a pool whose callers wait for a free connection (:class:`BlockingSentinelConnectionPool`), as
  with the plain path, and that closes connections released while pointing at an old primary;
- a reconnection that asks the sentinels for the primary (:class:`SentinelConnection`; redis-py
  reconnects a retried command to the address it had, redis-py issue 3874);
- the answer of a sentinel still leading a fail-over passed over (it names the old primary);
- a listener on each sentinel's ``+switch-master`` channel (:class:`SentinelRedis`): the old
  primary keeps accepting writes for 8 to 20 s after a fail-over and drops them when it is
  turned into a replica, so pooled connections must move at the announcement.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import MasterNotFoundError, Sentinel, SentinelConnectionPool, SentinelManagedConnection
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError, RedisError, ResponseError, TimeoutError

from .store import MAX_CONNECTIONS, RETRY

__all__ = ["connect_sentinel", "parse_sentinel_url", "SentinelURL", "SentinelRedis", "SentinelConnection", "BlockingSentinelConnectionPool",
           "SENTINEL_PORT", "SENTINEL_TIMEOUT", "SWITCH_WAIT"]

log = logging.getLogger(__name__)


class SentinelURL(NamedTuple):
    """A ``redis+sentinel://`` URL's parts (:func:`parse_sentinel_url`): the sentinels'
    ``(host, port)`` pairs, the service (the name the sentinels monitor the primary under), the
    database, the data nodes' user and password, the sentinels' password (``None``: not set)."""

    sentinels: list[tuple[str, int]]
    service: str
    db: int
    username: str | None
    password: str | None
    sentinel_password: str | None


#: A sentinel's port when the URL gives none.
SENTINEL_PORT = 26379
#: Seconds to connect to a sentinel and for it to answer (it answers from memory; a sentinel
#: that does not is skipped and the next one asked).
SENTINEL_TIMEOUT = 1.0
#: Seconds a client waits after a ``+switch-master`` for the sentinels it asks to agree on the
#: new primary (a sentinel learns the switch from the others within a hello period, 2 s).
SWITCH_WAIT = 5.0


def parse_sentinel_url(url: str) -> SentinelURL:
    """The parts of ``redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/service[/db]``
    with an optional query ``?sentinel_password=...``: the password is the data nodes' (primary
    and replicas), ``sentinel_password`` the sentinels' own; a port defaults to 26379 and the
    database to 0; user and passwords are percent-decoded.

    >>> parse_sentinel_url("redis+sentinel://:s%40cret@10.0.0.1:26380,sentinel-b/cheat/2?sentinel_password=x")
    SentinelURL(sentinels=[('10.0.0.1', 26380), ('sentinel-b', 26379)], service='cheat', db=2, username=None, password='s@cret', sentinel_password='x')
    >>> parse_sentinel_url("redis+sentinel://bot:pw@[::1]:5000/cheat").sentinels
    [('::1', 5000)]
    >>> parse_sentinel_url("redis+sentinel://s1:26379/")
    Traceback (most recent call last):
    ...
    ValueError: a redis+sentinel:// URL names the service after its hosts: redis+sentinel://host:26379/<service>[/<db>]

    Raises ``ValueError`` for another scheme, no host, a port that is not a number from 1 to
    65535, no service, a database that is not a number, a path of more than two parts, or a
    query parameter other than ``sentinel_password`` (the message never shows the password)."""
    parts = urlsplit(url)
    if parts.scheme != "redis+sentinel":
        raise ValueError(f"not a redis+sentinel:// URL (scheme {parts.scheme!r})")
    userinfo, _, hosts = parts.netloc.rpartition("@")
    username, _, password = userinfo.partition(":")
    sentinels = []
    for host in hosts.split(","):
        node = urlsplit("//" + host)  # urllib reads one host[:port], brackets for IPv6 included
        try:
            port = node.port or SENTINEL_PORT
        except ValueError:
            raise ValueError(f"a redis+sentinel:// URL's port must be a number from 1 to 65535, not in {host!r}") from None
        if not node.hostname:
            raise ValueError("a redis+sentinel:// URL names each sentinel as host[:port], separated by commas")
        sentinels.append((node.hostname, port))
    path = parts.path.strip("/").split("/")
    if not path[0] or len(path) > 2:
        raise ValueError("a redis+sentinel:// URL names the service after its hosts: redis+sentinel://host:26379/<service>[/<db>]")
    if len(path) == 2 and not path[1].isdigit():
        raise ValueError(f"a redis+sentinel:// URL's database is a number, not {path[1]!r}")
    query = dict(pair.partition("=")[::2] for pair in parts.query.split("&") if pair)  # (a "+" stays a "+")
    if set(query) - {"sentinel_password"}:
        raise ValueError(f"a redis+sentinel:// URL takes one query parameter, sentinel_password, not {sorted(set(query) - {'sentinel_password'})}")
    return SentinelURL(sentinels, unquote(path[0]), int(path[1]) if len(path) == 2 else 0, unquote(username) or None,
                       unquote(password) if ":" in userinfo else None, unquote(query["sentinel_password"]) if query else None)


class BlockingSentinelConnectionPool(SentinelConnectionPool, BlockingConnectionPool):
    """redis-py's :class:`~redis.asyncio.sentinel.SentinelConnectionPool` (each new connection
    asks the sentinels for the primary's address) that, like the plain path's
    :class:`~redis.asyncio.BlockingConnectionPool`, makes a caller wait for a free connection
    (``timeout`` seconds, then ``ConnectionError``) instead of raising ``MaxConnectionsError``
    past ``max_connections``: redis-py 8 has no blocking Sentinel pool, and the two compose
    (the Sentinel pool's methods first, the blocking pool's ``get_connection`` and
    ``release``).

    A connection released to the pool while connected to another address than the primary's
    (:attr:`master_address`, which a new connection or a fail-over announcement updates) is
    closed, to reconnect to the primary when next used, as redis-py's synchronous Sentinel pool
    does (its asyncio pool keeps such a connection)."""

    async def release(self, connection: Any) -> None:
        if self.is_master and connection.is_connected and (connection.host, connection.port) != self.master_address:
            await connection.disconnect()
        await super().release(connection)


class SentinelConnection(SentinelManagedConnection):
    """redis-py's :class:`~redis.asyncio.sentinel.SentinelManagedConnection` that asks the
    sentinels for the primary on every reconnection. redis-py 8 asks them only when the pool
    hands out a closed connection (``connect``); a command that fails on its connection and is
    sent again (:data:`RETRY`) reconnects it through ``connect_check_health`` to the address
    it had (redis-py issue 3874), which after a fail-over is the old primary: a write refused
    there as READONLY (turned into a ``ConnectionError`` by redis-py) would be refused again
    until the retries run out."""

    _resolved = False

    async def connect_to(self, address: tuple[str, int]) -> None:
        self._resolved = True
        try:
            await super().connect_to(address)
        finally:
            self._resolved = False

    async def connect_check_health(self, check_health: bool = True, retry_socket_connect: bool = True) -> None:
        if self.is_connected or self._resolved:
            return await super().connect_check_health(check_health, retry_socket_connect)
        await self.connect()  # redis-py's: the sentinels' primary, then connect_to


class _Sentinel(Sentinel):
    """redis-py's :class:`~redis.asyncio.sentinel.Sentinel` that passes over the answer of a
    sentinel leading a fail-over of the service (flag ``failover_in_progress``): until that
    fail-over ends, which may take ``failover-timeout``, it still names the old primary, while
    the other sentinels name the promoted replica as soon as it is promoted. (redis-py asks the
    sentinels in turn and takes the first answer naming a primary that is up.)"""

    def check_master_state(self, state: dict, service_name: str) -> bool:
        flags = state["flags"]  # "a,b" (RESP2) or a set (RESP3)
        return super().check_master_state(state, service_name) and "failover_in_progress" not in (flags.split(",") if isinstance(flags, str) else flags)


class SentinelRedis(Redis):
    """redis-py's client of a primary monitored by Redis Sentinel (``Sentinel.master_for`` over
    a :class:`BlockingSentinelConnectionPool`) that also follows the sentinels' fail-overs as
    they announce them.

    redis-py asks the sentinels for the primary only when a connection is made, and after a
    fail-over the old primary keeps accepting writes until the sentinels turn it into a replica
    (8 to 20 s later), which then drops them: a pooled connection would write there all that
    time. So each sentinel's ``+switch-master`` channel is listened to (one connection to
    each): on an announcement for this service the pool asks the sentinels again
    (``get_master_address``, which closes idle connections to an old address) until they name
    the announced primary (at most :data:`SWITCH_WAIT` s); the connections in use are closed
    when released (:class:`BlockingSentinelConnectionPool`). :meth:`aclose` stops the
    listeners and closes the sentinels' connections too."""

    _sentinel: Sentinel | None = None
    _listeners: tuple[asyncio.Task, ...] = ()

    def follow(self, sentinel: Sentinel, service: str) -> None:
        """Start listening to each of ``sentinel``'s sentinels for fail-overs of ``service``
        (tasks of the running event loop)."""
        self._sentinel = sentinel
        self._switching = asyncio.Lock()
        self._listeners = tuple(asyncio.create_task(self._listen(node, service), name=f"sentinel-listener-{i}")
                                for i, node in enumerate(sentinel.sentinels))

    async def _listen(self, node: Redis, service: str) -> None:
        """Follow one sentinel's ``+switch-master`` announcements (``<service> <old ip> <old
        port> <new ip> <new port>``) until cancelled; on a lost connection subscribe again
        after a second, then ask the sentinels once (a switch may have been missed)."""
        pool = self.connection_pool
        assert isinstance(pool, SentinelConnectionPool)
        while True:
            try:
                async with node.pubsub() as channel:
                    await channel.subscribe("+switch-master")
                    await self._switched(None)
                    while True:
                        note = await channel.get_message(ignore_subscribe_messages=True, timeout=60)
                        fields = _text(note["data"]).split() if note else []
                        if len(fields) == 5 and fields[0] == service:
                            await self._switched((fields[3], int(fields[4])))
            except (RedisError, OSError) as e:
                log.debug("sentinel listener: %s; again in 1 s", e)
                await asyncio.sleep(1)

    async def _switched(self, announced: tuple[str, int] | None) -> None:
        """Ask the sentinels for the primary (redis-py's ``get_master_address``, which moves
        the pool to it), again until they name ``announced`` when given. Each sentinel
        announces a switch: the first announcement moves the pool, the others find it moved."""
        pool = self.connection_pool
        assert isinstance(pool, SentinelConnectionPool)
        async with self._switching:
            before, deadline = pool.master_address, time.monotonic() + SWITCH_WAIT
            address = await pool.get_master_address()
            while announced and address != announced and time.monotonic() < deadline:
                await asyncio.sleep(0.05)  # the sentinel asked first has not heard yet
                address = await pool.get_master_address()
            if pool.master_address != before:
                log.warning("Redis Sentinel: the primary of %r is now %s:%s", pool.service_name, *pool.master_address)

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        """Stop the listeners, close the client (and its pool) and the sentinels' connections."""
        # cancelled again until they end: on Python 3.11, asyncio.wait_for (redis-py's send)
        # drops a cancellation that comes as the awaited write completes
        while pending := [task for task in self._listeners if not task.done()]:
            for task in pending:
                task.cancel()
            await asyncio.wait(pending, timeout=0.1)
        self._listeners = ()
        await super().aclose(close_connection_pool)
        if self._sentinel is not None:
            await self._sentinel.aclose()


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


async def connect_sentinel(url: str) -> SentinelRedis:
    """:func:`tgbot.store.connect` for a ``redis+sentinel://`` URL (:func:`parse_sentinel_url`):
    a :class:`SentinelRedis` that answered a PING and follows fail-overs. Raises ``ValueError``
    for a malformed URL or a host that is not a sentinel, and ``MasterNotFoundError`` (a ``ConnectionError``) with a one-line
    reason when no sentinel can be reached or none names a primary that is up."""
    parts = parse_sentinel_url(url)
    sentinel = _Sentinel(parts.sentinels, sentinel_kwargs=_sentinel_options(parts))
    try:
        await sentinel.discover_master(parts.service)
    except MasterNotFoundError:
        await sentinel.aclose()
        raise MasterNotFoundError(await _no_primary(parts)) from None
    except ResponseError as e:  # e.g. "unknown command 'SENTINEL'": a data node's address
        await sentinel.aclose()
        raise ValueError(f"a host of the redis+sentinel:// URL is not a Redis Sentinel ({e}); a primary's own address is given as redis://") from None
    client = sentinel.master_for(parts.service, redis_class=SentinelRedis, connection_pool_class=BlockingSentinelConnectionPool,
                                 connection_class=SentinelConnection, decode_responses=True, retry=RETRY, max_connections=MAX_CONNECTIONS, timeout=20,
                                 db=parts.db, username=parts.username, password=parts.password)
    assert isinstance(client, SentinelRedis)
    try:
        await client.ping()
    except BaseException:
        await client.aclose()
        await sentinel.aclose()
        raise
    client.follow(sentinel, parts.service)
    return client


def _sentinel_options(parts: SentinelURL) -> dict[str, Any]:
    """Connection options for the sentinels: their password, :data:`SENTINEL_TIMEOUT`, and no
    retry (a sentinel that does not answer is passed over for the next one; the discovery as a
    whole is retried by :data:`RETRY`)."""
    return {"password": parts.sentinel_password, "socket_timeout": SENTINEL_TIMEOUT, "socket_connect_timeout": SENTINEL_TIMEOUT,
            "retry": Retry(NoBackoff(), 0)}


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
