"""Every key under a prefix as JSON-able data, and back (type-aware, with the TTL).

The shape, one entry per key: ``{"type": "string"|"hash"|"list"|"set"|"zset", "pttl": ms or
-1 (no expiry), "value": ...}`` where the value is a string, a ``{field: value}`` object, a
list of strings (list order; a set's members sorted), or ``[[member, score], ...]`` (a sorted
set, by score). Used by ``make_b5f3182_fixture.py`` to write ``b5f3182_keys.json`` and by
``tests/tgbot/test_migrate.py`` to load it and compare what a migration left.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

__all__ = ["dump_keys", "load_keys", "read_key"]

Client = Redis | RedisCluster


async def read_key(redis: Client, key: str) -> dict[str, Any] | None:
    """One key (``decode_responses=True`` client) in the shape above; ``None`` if absent.
    Raises ``ValueError`` for a type the bot does not store (a stream, …)."""
    kind = str(await redis.type(key))
    if kind == "none":
        return None
    if kind == "string":
        value: Any = await redis.get(key)
    elif kind == "hash":
        value = await redis.hgetall(key)
    elif kind == "list":
        value = await redis.lrange(key, 0, -1)
    elif kind == "set":
        value = sorted(await redis.smembers(key))
    elif kind == "zset":
        pairs: Any = await redis.zrange(key, 0, -1, withscores=True)
        value = [[m, s] for m, s in pairs]
    else:
        raise ValueError(f"{key}: type {kind} is not one the bot stores")
    ttl = await redis.pttl(key)
    return {"type": kind, "pttl": ttl if ttl >= 0 else -1, "value": value}


async def dump_keys(redis: Client, match: str) -> dict[str, dict[str, Any]]:
    """Every key matching the glob ``match`` (SCAN; every primary of a cluster), by name."""
    out: dict[str, dict[str, Any]] = {}
    async for key in redis.scan_iter(match=match, count=500):
        entry = await read_key(redis, key)
        if entry is not None:
            out[key] = entry
    return dict(sorted(out.items()))


async def load_keys(redis: Client, keys: dict[str, dict[str, Any]]) -> None:
    """Write keys in the shape above (each replaced; a TTL restarts from now)."""
    for key, entry in keys.items():
        kind, value = entry["type"], entry["value"]
        await redis.delete(key)
        if kind == "string":
            await redis.set(key, value)
        elif kind == "hash":
            await redis.hset(key, mapping=value)
        elif kind == "list":
            await redis.rpush(key, *value)
        elif kind == "set":
            await redis.sadd(key, *value)
        elif kind == "zset":
            await redis.zadd(key, {m: s for m, s in value})
        else:
            raise ValueError(f"{key}: unknown type {kind}")
        if entry["pttl"] > 0:
            await redis.pexpire(key, entry["pttl"])
