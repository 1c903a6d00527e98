"""Storage schemas, brought up to date once by the active process at take-over, before it touches
any game (the marker :meth:`~tgbot.storage.keys.Keys.schema`, set last); older layouts are read
here only. 2: every key under the bot's id (b5f3182's keys); 3: spelled-out hash fields; 4: the
statistics in one slot ``{s<bot>}``. Each step is idempotent: a rerun after a crash redoes what is left.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Callable

from tgbot.storage.keys import ROOT, Keys, bot_prefix
from tgbot.storage.redis import RedisClient

__all__ = ["BATCH", "BOARD_FIELDS", "CHAT_SETTINGS_FIELDS", "GAME_FIELDS", "SCHEMA", "USER_FIELDS", "migrate"]

log = logging.getLogger(__name__)

#: The storage schema this code writes (the marker's value once :func:`migrate` has run).
SCHEMA = 4
#: Keys per SCAN page, and per pipelined round trip of the move.
BATCH = 500
#: Schema 3's renames of hash fields (old → new): a game's, a chat's settings, a user's record.
GAME_FIELDS = {"v": "version", "t": "table"}
CHAT_SETTINGS_FIELDS = {"lang": "language", "turn": "turn_timer"}
USER_FIELDS = {"lang": "language", "dm": "reachable"}
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


def _is_old(key: str) -> bool:
    """Whether ``key`` (matched by ``cheat:*``) is of schema 1: its second segment is not all
    digits (``cheat:live``, ``cheat:{g…}:game``; not ``cheat:999:live``)."""
    return not _DIGITS.fullmatch(key.split(":", 2)[1])


async def _move(redis: RedisClient, renames: dict[str, str | None]) -> int:
    """Rename keys (old → new, or ``None``: delete) in three pipelined round trips: DUMP and PTTL
    each, RESTORE each (its TTL kept), then DEL each once every RESTORE has answered, so no crash
    loses a key. A key gone since the SCAN is skipped. Returns the number moved or deleted."""
    pipe = redis.pipeline(transaction=False)
    for key in renames:
        pipe.dump(key)
        pipe.pttl(key)
    got = await pipe.execute()
    pipe = redis.pipeline(transaction=False)
    done: list[str] = []
    for (key, new), payload, ttl in zip(renames.items(), got[::2], got[1::2], strict=True):
        if payload is None or ttl == -2:
            continue
        if new is not None:  # PTTL -1: no expiry (RESTORE's 0); 0: it lapses now, keep 1 ms
            pipe.restore(new, 0 if ttl == -1 else max(ttl, 1), payload, replace=True)
        done.append(key)
    if not done:
        return 0
    await pipe.execute()
    pipe = redis.pipeline(transaction=False)
    for key in done:
        pipe.delete(key)  # one key a command: old and new names may be in other Cluster slots
    await pipe.execute()
    return len(done)


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
            moved += await _move(redis, {key: f"{bot_prefix(bot_id)}:{key[len(ROOT) + 1 :]}" for key in old})
    return moved


def _renames(field_names: list[str], renames: dict[str, str] | None) -> list[str]:
    """The old, new pairs (flat) of a hash's fields to rename (``None``: a leaderboard's)."""
    if renames is not None:
        return [x for old, new in renames.items() if old in field_names for x in (old, new)]
    pairs = []
    for name in field_names:
        user, _, field = name.rpartition(":")
        if user and field in BOARD_FIELDS:
            pairs += [name, f"{user}:{BOARD_FIELDS[field]}"]
    return pairs


def _hashes(keys: Keys) -> list[tuple[str, Callable[[str], bool], dict[str, str] | None]]:
    """Schema 3's work: SCAN pattern, which keys found are the hashes meant, field renames."""
    depth = keys.prefix.count(":") + 2  # <prefix>:user:<id>, not <prefix>:user:<id>:games
    return [
        (keys.game_pattern(), lambda key: True, GAME_FIELDS),
        (keys.chat_settings("*"), lambda key: True, CHAT_SETTINGS_FIELDS),
        (keys.user("*"), lambda key: key.count(":") == depth, USER_FIELDS),
        (f"{keys.prefix}:top:{{c*}}", lambda key: True, None),
    ]


async def _rename_all(redis: RedisClient, keys: Keys) -> int:
    """Schema 3: rename the stored fields of the bot's hashes; returns the number of hashes
    changed. Two pipelined round trips a page: HKEYS each, the script each."""
    renamed = 0
    for pattern, meant, renames in _hashes(keys):
        async for page in _scan_pages(redis, pattern):
            hashes = [key for key in page if meant(key)]
            pipe = redis.pipeline(transaction=False)
            for key in hashes:
                pipe.hkeys(key)
            work = [(key, _renames(names, renames)) for key, names in zip(hashes, await pipe.execute(), strict=True)]
            work = [(key, pairs) for key, pairs in work if pairs]
            if work:
                pipe = redis.pipeline(transaction=False)
                for key, pairs in work:
                    pipe.eval(_RENAME_FIELDS, 1, key, *pairs)
                await pipe.execute()
                renamed += len(work)
    return renamed


#: Schema 3's statistics keys: a user's totals, boards and counted games; a chat's board and counted games.
_OLD_STATISTICS = re.compile(
    r"(?:stats:\{u(?P<user>[^}]+)\}(?P<part>|:chats|:counted)|top:\{c(?P<chat>[^}]+)\}(?P<board>|:counted))"
)


def _statistics_key(keys: Keys, key: str) -> str | None:
    """Schema 4's name of a schema 3 statistics key (``None``: its counted games, no longer kept)."""
    found = _OLD_STATISTICS.fullmatch(key[len(keys.prefix) + 1 :])
    if found is None or ":counted" in (found["part"], found["board"]):
        return None
    if found["chat"] is not None:
        return keys.board(found["chat"])
    return keys.boards_of(found["user"]) if found["part"] else keys.totals(found["user"])


async def _gather_statistics(redis: RedisClient, keys: Keys) -> int:
    """Schema 4: the statistics into the slot ``{s<bot>}`` (a game counted before is marked so in
    its own hash); a board hand-off a crash left midway stays where it is."""
    moved = 0
    for pattern in (f"{keys.prefix}:stats:{{u*}}*", f"{keys.prefix}:top:{{c*}}*"):
        async for page in _scan_pages(redis, pattern):
            renames = {
                key: _statistics_key(keys, key)
                for key in page
                if _OLD_STATISTICS.fullmatch(key[len(keys.prefix) + 1 :])
            }
            if renames:
                moved += await _move(redis, renames)
    return moved


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
    keys = Keys(bot_prefix(bot_id))
    current = int(await redis.get(keys.schema()) or 0)
    if current >= SCHEMA:
        return 0
    moved = await _move_all(redis, bot_id) if current < 2 else 0
    log.log(
        logging.INFO if moved else logging.DEBUG,
        "storage schema 2: %d keys moved from %s:* to %s:%s:*",
        moved,
        ROOT,
        ROOT,
        bot_id,
    )
    renamed = await _rename_all(redis, keys) if current < 3 else 0
    log.log(logging.INFO if renamed else logging.DEBUG, "storage schema 3: fields renamed in %d hashes", renamed)
    gathered = await _gather_statistics(redis, keys)
    log.log(logging.INFO if gathered else logging.DEBUG, "storage schema 4: %d statistics keys into one slot", gathered)
    await redis.set(keys.schema(), SCHEMA)
    return moved + renamed + gathered
