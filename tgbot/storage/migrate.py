"""Storage schemas: 2, every key gets the bot's id; 3, stored hash fields get spelled-out names.

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

Table JSON inside the moved keys is not rewritten here: :meth:`tgbot.game.model.Table.from_json`
reads b5f3182's tables (no ``schema`` field) and the next commit stores the new format.

Schema 3 renames hash fields in place (:data:`GAME_FIELDS` in each game hash, :data:`BOARD_FIELDS`
per user in each leaderboard and handoff): one script per key, so each key is renamed whole or
not at all, on any Cluster slot; a rerun finds nothing left to rename; the marker is set last.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator

from tgbot.storage.keys import ROOT, Keys, bot_prefix
from tgbot.storage.redis import RedisClient

__all__ = ["BATCH", "BOARD_FIELDS", "GAME_FIELDS", "ROOT", "SCHEMA", "bot_id_of", "marker_key", "migrate"]

log = logging.getLogger(__name__)

#: The storage schema this code writes (the marker's value once :func:`migrate` has run).
SCHEMA = 3
#: Keys per SCAN page, and per pipelined round trip of the move.
BATCH = 500
#: Schema 3's renames of the game hash's fields (old → new).
GAME_FIELDS = {"v": "version", "t": "table"}
#: Schema 3's renames of a leaderboard's per-user fields ``<user>:<old>`` → ``<user>:<new>``.
BOARD_FIELDS = {"g": "games", "w": "wins", "n": "name"}

# Rename fields of the hash KEYS[1]: ARGV holds old, new pairs; a field the hash lacks is skipped,
# a new name already there is kept.
_RENAME_FIELDS = """
for i = 1, #ARGV, 2 do
  local value = redis.call('HGET', KEYS[1], ARGV[i])
  if value then
    redis.call('HSETNX', KEYS[1], ARGV[i + 1], value)
    redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return 1
"""

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
    return Keys(bot_prefix(bot_id)).schema()


def _is_old(key: str) -> bool:
    """Whether ``key`` (matched by ``cheat:*``) is of schema 1: its second segment is not all
    digits (``cheat:live``, ``cheat:{g…}:game``; not ``cheat:999:live``)."""
    return not _DIGITS.fullmatch(key.split(":", 2)[1])


async def _move(redis: RedisClient, keys: list[str], bot_id: str) -> int:
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
        new = f"{bot_prefix(bot_id)}:{key[len(ROOT) + 1 :]}"
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


async def _scan_pages(redis: RedisClient, pattern: str) -> AsyncIterator[list[str]]:
    """The keys matching ``pattern``, in pages of at most :data:`BATCH`."""
    page: list[str] = []
    async for key in redis.scan_iter(match=pattern, count=BATCH):
        page.append(key)
        if len(page) >= BATCH:
            yield page
            page = []
    if page:
        yield page


async def _move_all(redis: RedisClient, bot_id: str) -> int:
    """Schema 2: move every schema-1 key to the bot's names; returns the number moved."""
    moved = 0
    async for page in _scan_pages(redis, f"{ROOT}:*"):
        old = [key for key in page if _is_old(key)]
        if old:
            moved += await _move(redis, old, bot_id)
    return moved


def _renames(field_names: list[str], board: bool) -> list[str]:
    """The old, new pairs (flat) of a hash's fields to rename (schema 3)."""
    if not board:
        return [x for old, new in GAME_FIELDS.items() if old in field_names for x in (old, new)]
    pairs = []
    for name in field_names:
        user, _, field = name.rpartition(":")
        if user and field in BOARD_FIELDS:
            pairs += [name, f"{user}:{BOARD_FIELDS[field]}"]
    return pairs


async def _rename_all(redis: RedisClient, keys: Keys) -> int:
    """Schema 3: rename the stored fields of the bot's game and leaderboard hashes; returns the
    number of hashes changed. Two pipelined round trips a page: HKEYS each, the script each."""
    renamed = 0
    for pattern, board in ((keys.game_pattern(), False), (keys.board_pattern(), True)):
        async for page in _scan_pages(redis, pattern):
            hashes = [key for key in page if not key.endswith(":counted")]
            pipe = redis.pipeline(transaction=False)
            for key in hashes:
                pipe.hkeys(key)
            work = [(key, _renames(names, board)) for key, names in zip(hashes, await pipe.execute(), strict=True)]
            work = [(key, pairs) for key, pairs in work if pairs]
            if work:
                pipe = redis.pipeline(transaction=False)
                for key, pairs in work:
                    pipe.eval(_RENAME_FIELDS, 1, key, *pairs)
                await pipe.execute()
                renamed += len(work)
    return renamed


async def migrate(redis: RedisClient, bot_id: str) -> int:
    """Bring the bot's storage to :data:`SCHEMA` (see the module docstring); returns the number
    of keys moved or changed (0 at once, after one GET, when the marker says it is done).

    ``redis``: a ``decode_responses=True`` client of one Redis, fakeredis or a Redis Cluster
    (SCAN visits every primary; every write touches one key). Idempotent and safe to rerun after
    a crash midway; one process at a time (the active one). Raises ``ValueError`` for a
    ``bot_id`` that is not decimal digits or a marker that is not an integer, and what redis-py
    raises: then nothing is lost and the next start finishes the job."""
    if not _DIGITS.fullmatch(bot_id):
        raise ValueError(f"bot id {bot_id!r} is not decimal digits")
    marker = marker_key(bot_id)
    current = int(await redis.get(marker) or 0)
    if current >= SCHEMA:
        return 0
    changed = 0
    if current < 2:
        moved = await _move_all(redis, bot_id)
        log.info("storage schema 2: %d keys moved from %s:* to %s:%s:*", moved, ROOT, ROOT, bot_id)
        changed += moved
    renamed = await _rename_all(redis, Keys(bot_prefix(bot_id)))
    log.info("storage schema 3: fields renamed in %d hashes", renamed)
    await redis.set(marker, SCHEMA)
    return changed + renamed
