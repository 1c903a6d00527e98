"""Storage schema 2: every key gets the bot's id, so several bots share one Redis or Cluster.

Schema 1 (b5f3182 and before) named keys ``cheat:<rest>``; schema 2 names them
``cheat:<bot_id>:<rest>`` with the same ``<rest>`` (``cheat:{gAbC123xy}:game`` becomes
``cheat:123456:{gAbC123xy}:game``, ``cheat:live`` becomes ``cheat:123456:live``): hash tags stay
inside the key, so a game's keys still share one Cluster slot. ``<bot_id>`` is the decimal
number before the colon of ``BOT_TOKEN`` (:func:`bot_id_of`). The string key
``cheat:<bot_id>:schema`` holds the bot's storage schema (:data:`SCHEMA`; absent: nothing
migrated yet).

:func:`migrate` runs once in the active process at its start, before it touches any game. It
moves every schema-1 key, i.e. every ``cheat:*`` key whose second segment is not all digits
(all digits: some bot's schema-2 key, left alone), to the bot's name. Old data belonged to the
one bot that ran before, so the FIRST bot to run :func:`migrate` on a Redis takes every old key;
a bot that runs it later finds none left (a SCAN, once) and only sets its marker. Stop every
process of b5f3182 first: a key it writes after the move is not moved again.

Table JSON inside the moved keys is not rewritten here: :meth:`tgbot.game.table.Table.from_json`
reads b5f3182's tables (no ``schema`` field) and the next commit stores the new format.
"""

from __future__ import annotations

import logging
import re

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

__all__ = ["BATCH", "ROOT", "SCHEMA", "bot_id_of", "marker_key", "migrate"]

log = logging.getLogger(__name__)

#: The storage schema this code writes (the marker's value once :func:`migrate` has run).
SCHEMA = 2
#: Keys per SCAN page, and per pipelined round trip of the move.
BATCH = 500
#: The first segment of every key, of either schema.
ROOT = "cheat"

_DIGITS = re.compile(r"[0-9]+")


def bot_id_of(token: str) -> str:
    """The bot's id in a ``BOT_TOKEN`` (``"123456:AAH…"`` → ``"123456"``). Raises
    ``ValueError`` when the part before the first colon is not decimal digits."""
    head = token.partition(":")[0]
    if not _DIGITS.fullmatch(head):
        raise ValueError("BOT_TOKEN does not start with the bot's numeric id and a colon")
    return head


def marker_key(bot_id: str) -> str:
    """The key holding the bot's storage schema: ``cheat:<bot_id>:schema``."""
    return f"{ROOT}:{bot_id}:schema"


def _is_old(key: str) -> bool:
    """Whether ``key`` (matched by ``cheat:*``) is of schema 1: its second segment is not all
    digits (``cheat:live``, ``cheat:{g…}:game``; not ``cheat:999:live``)."""
    return not _DIGITS.fullmatch(key.split(":", 2)[1])


async def _move(redis: Redis | RedisCluster, keys: list[str], bot_id: str) -> int:
    """Move ``keys`` (schema 1) to the bot's names in three pipelined round trips: DUMP and
    PTTL each, RESTORE (remaining TTL, REPLACE) each, then DEL each, once every RESTORE has
    answered, so no crash loses a key (a rerun redoes RESTORE and DEL of what is still there).
    A key gone since the SCAN (expired, deleted) is skipped. Returns the number moved."""
    pipe = redis.pipeline(transaction=False)
    for key in keys:
        pipe.dump(key)
        pipe.pttl(key)
    got = await pipe.execute()
    pipe = redis.pipeline(transaction=False)
    moved: list[str] = []
    for key, payload, ttl in zip(keys, got[::2], got[1::2], strict=True):
        if payload is None or ttl == -2:
            continue
        # PTTL -1: no expiry (RESTORE's 0); 0: it lapses this very moment, keep 1 ms of it
        new = f"{ROOT}:{bot_id}:{key[len(ROOT) + 1 :]}"
        pipe.restore(new, 0 if ttl == -1 else max(ttl, 1), payload, replace=True)
        moved.append(key)
    if not moved:
        return 0
    await pipe.execute()
    pipe = redis.pipeline(transaction=False)
    for key in moved:
        pipe.delete(key)  # one key a command: old and new names may be in other Cluster slots
    await pipe.execute()
    return len(moved)


async def migrate(redis: Redis | RedisCluster, bot_id: str) -> int:
    """Bring the bot's storage to :data:`SCHEMA` (see the module docstring); returns the
    number of keys moved (0 at once, after one GET, when the marker says it is done).

    ``redis``: a redis-py asyncio client with ``decode_responses=True``: one Redis (or
    fakeredis), or a Redis Cluster (SCAN then visits every primary, DUMP/RESTORE/DEL go one
    key a command to each key's slot; RENAME would refuse keys of two slots). ``bot_id``: the
    decimal digits of :func:`bot_id_of`. Idempotent and safe to rerun after a crash midway:
    keys are moved type, value and TTL intact (DUMP + RESTORE REPLACE, then DEL), and the
    marker is set last. One process at a time (the active one). Raises ``ValueError`` on a
    ``bot_id`` that is not decimal digits or a marker that is not an integer, and what
    redis-py raises (a lost connection, …): then nothing is lost and the next start finishes
    the job."""
    if not _DIGITS.fullmatch(bot_id):
        raise ValueError(f"bot id {bot_id!r} is not decimal digits")
    marker = marker_key(bot_id)
    current = await redis.get(marker)
    if current is not None and int(current) >= SCHEMA:
        return 0
    moved = 0
    page: list[str] = []
    async for key in redis.scan_iter(match=f"{ROOT}:*", count=BATCH):
        if _is_old(key):
            page.append(key)
        if len(page) >= BATCH:
            moved += await _move(redis, page, bot_id)
            page = []
    if page:
        moved += await _move(redis, page, bot_id)
    await redis.set(marker, SCHEMA)
    log.info("storage schema %d: %d keys moved from %s:* to %s:%s:*",
             SCHEMA, moved, ROOT, ROOT, bot_id)
    return moved
