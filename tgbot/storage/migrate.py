"""Storage schemas, brought up to date once by the active process at take-over (docs/DESIGN.md,
Take-over); the only reader of older formats. Each step is idempotent: a rerun after a crash redoes what is left."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from tgbot.storage.keys import ROOT, GameField, Keys, TelegramField, bot_prefix
from tgbot.storage.redis import RedisClient

log = logging.getLogger(__name__)

#: The storage schema this code writes (the marker's value once :func:`migrate` has run).
SCHEMA = 4
#: Keys per SCAN page, and per pipelined round trip of the move.
BATCH = 500
#: Schema 3's renames of hash fields (old → new): a game's, a chat's settings, a user's record.
GAME_FIELDS = {"v": "version", "t": "table"}
CHAT_SETTINGS_FIELDS = {"lang": "language", "turn": "turn_timer"}
USER_FIELDS = {"lang": "language", "dm": "reachable"}
#: A table's JSON keys before its schema 3 (:data:`tgbot.game.table.TABLE_SCHEMA`), spelled out.
TABLE_KEYS = {
    "chat": "chat_id",
    "thread": "thread_id",
    "turn": "action_count",
    "dk": "deadline_kind",
    "te": "turn_end",
    "tt": "turn_timeout",
    "ad": "ai_delay",
    "ap": "ai_pause",
    "access": "group_access",
}
#: Schema 3's renames of a leaderboard's per-user fields ``<user>:<old>`` → ``<user>:<new>``.
BOARD_FIELDS = {"g": "games", "w": "wins", "n": "name"}
#: Telegram bookkeeping's names before issue 15: ``p<seat>`` …, ``b``, ``bh``.
_OLD_TELEGRAM = re.compile(r"(?P<family>p|pk|pd|pt|nr|x)(?P<seat>\d+)|b|bh")
TELEGRAM_FIELDS = {
    "p": TelegramField.PANEL_MESSAGE,
    "pk": TelegramField.PANEL_STATE,
    "pd": TelegramField.PANEL_DIGEST,
    "pt": TelegramField.TURN_PANEL_SENT,
    "nr": TelegramField.UNREACHABLE,
    "x": TelegramField.TOLD_RETIRED,
    "b": TelegramField.BOARD_MESSAGE,
    "bh": TelegramField.BOARD_DIGEST,
}
#: Outbox notes' kinds before schema 4 (the engine's event class names, ``auto``, ``remind``).
NOTE_KINDS = {
    "ChallengeResolved": "challenge_resolved",
    "Believed": "believed",
    "GameEnded": "game_ended",
    "auto": "automatic_move",
    "remind": "reminder",
}

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

# KEYS[1] a hash (ARGV[1] 'h') or a list ('l'): its value at ARGV[2] (field or index) becomes
# ARGV[4] if it is still ARGV[3].
_REWRITE = """
local get, set = 'HGET', 'HSET'
if ARGV[1] == 'l' then get, set = 'LINDEX', 'LSET' end
if redis.call(get, KEYS[1], ARGV[2]) == ARGV[3] then redis.call(set, KEYS[1], ARGV[2], ARGV[4]) return 1 end
return 0
"""

# Add a schema 3 board hand-off to the board KEYS[1] once (its counted set KEYS[2] keeps the guard
# ARGV[1], at ARGV[2] ms); ARGV: then the hand-off's field, value pairs. 1 added, 0 added before.
_ADD_HANDOFF = """
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
for i = 3, #ARGV, 2 do
  if string.sub(ARGV[i], -5) == ':name' then redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1])
  else redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
return 1
"""

_DIGITS = re.compile(r"[0-9]+")


def _is_old(key: str) -> bool:
    """Whether ``key`` (matched by ``cheat:*``) is of schema 1: no bot id (``cheat:live``, not ``cheat:999:live``)."""
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


def _board_field(name: str) -> str | None:
    """A leaderboard field's schema 3 name: ``<user>:<field>`` spelled out."""
    user, _, field = name.rpartition(":")
    return f"{user}:{BOARD_FIELDS[field]}" if user and field in BOARD_FIELDS else None


def _telegram_field(name: str) -> str | None:
    """A Telegram bookkeeping field's name since issue 15."""
    found = _OLD_TELEGRAM.fullmatch(name)
    if found is None:
        return None
    field = TELEGRAM_FIELDS[found["family"] or name]
    return field.of(int(found["seat"])) if found["seat"] else field


def _hashes(keys: Keys) -> list[tuple[str, Callable[[str], bool], Callable[[str], str | None]]]:
    """Hashes whose fields get new names: SCAN pattern, which keys found are meant, the new name."""
    depth = keys.prefix.count(":") + 2  # <prefix>:user:<id>, not <prefix>:user:<id>:games
    return [
        (keys.game_pattern(), lambda key: True, GAME_FIELDS.get),
        (keys.chat_settings("*"), lambda key: True, CHAT_SETTINGS_FIELDS.get),
        (keys.user("*"), lambda key: key.count(":") == depth, USER_FIELDS.get),
        (f"{keys.prefix}:top:{{c*}}", lambda key: True, _board_field),
        (keys.telegram("*"), lambda key: True, _telegram_field),
    ]


async def _rename_all(redis: RedisClient, keys: Keys) -> int:
    """Schemas 3 and 4: rename the fields of the bot's hashes; returns the number of hashes
    changed. Two pipelined round trips a page: HKEYS each, the script each."""
    renamed = 0
    for pattern, meant, rename in _hashes(keys):
        async for page in _scan_pages(redis, pattern):
            hashes = [key for key in page if meant(key)]
            pipe = redis.pipeline(transaction=False)
            for key in hashes:
                pipe.hkeys(key)
            work = [
                (key, [x for name in names if (new := rename(name)) for x in (name, new)])
                for key, names in zip(hashes, await pipe.execute(), strict=True)
            ]
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


async def _finish_handoffs(redis: RedisClient, keys: Keys) -> int:
    """Schema 4: a board hand-off that a crash left midway in a group's upgrade is added to the
    supergroup's board unless it was already (its batch's guard), then dropped."""
    finished = 0
    async for page in _scan_pages(redis, f"{keys.prefix}:top:{{c*}}:handoff"):
        for key in page:
            old = key.split("{c", 1)[1].partition("}")[0]
            fields: dict[str, str] = await redis.hgetall(key)  # type: ignore[assignment]  # (decoded)
            new: str = await redis.get(keys.chat_moved(int(old))) or old  # type: ignore[assignment]
            guard = f"moved:{old}:{fields.pop('~batch', '')}"
            board = f"{keys.prefix}:top:{{c{new}}}"
            flat = [x for pair in fields.items() for x in pair]
            await redis.eval(_ADD_HANDOFF, 2, board, board + ":counted", guard, int(time.time() * 1000), *flat)
            await redis.delete(key, key + ":counted")  # (one slot)
            finished += 1
    return finished


async def _gather_statistics(redis: RedisClient, keys: Keys) -> int:
    """Schema 4: the statistics into the slot ``{s<bot>}`` (a game counted before is marked so in
    its own hash)."""
    moved = await _finish_handoffs(redis, keys)
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


def _table_3(raw: str) -> str | None:
    """A table's JSON of schema 1 or 2 in schema 3 (``None``: of schema 3 already, or no table)."""
    data = json.loads(raw)
    if data.get("schema", 1) >= 3 or "seats" not in data:
        return None
    data = {TABLE_KEYS.get(key, key): value for key, value in data.items()} | {"schema": 3}
    data["seats"] = [_seat_3(*seat) for seat in data["seats"]]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _seat_3(user_id: int, name: str, flags: dict[str, Any] | None = None) -> dict[str, Any]:
    """A seat of schemas 1 and 2 (``[user_id, name, {lang, bot, ai, left, auto}]``) as a dict."""
    flags = flags or {}
    # (tgbot.game.table.Player's values)
    player = "bot" if flags.get("bot") else "left" if flags.get("left") else "stand_in" if flags.get("ai") else "person"
    seat = {"user_id": user_id, "name": name, "player": player, "auto_moves": flags.get("auto", 0)}
    return seat | {key: flags[flag] for key, flag in (("lang", "lang"), ("strategy", "bot")) if flags.get(flag)}


def _note_4(raw: str) -> str | None:
    """An outbox note with its kind's schema 4 name (``None``: it has it already)."""
    note = json.loads(raw)
    if note.get("kind") not in NOTE_KINDS:
        return None
    return json.dumps(note | {"kind": NOTE_KINDS[note["kind"]]}, ensure_ascii=False, separators=(",", ":"))


async def _rewrite_all(redis: RedisClient, pattern: str, kind: str, convert: Callable[[str], str | None]) -> int:
    """Schema 4: rewrite the values ``convert`` changes of the hashes' tables (``kind`` ``h``) or
    of the lists (``l``) matching ``pattern``; returns the number of values rewritten."""
    rewritten = 0
    async for page in _scan_pages(redis, pattern):
        pipe = redis.pipeline(transaction=False)
        for key in page:
            pipe.hget(key, GameField.TABLE) if kind == "h" else pipe.lrange(key, 0, -1)
        work = []
        for key, got in zip(page, await pipe.execute(), strict=True):
            values = [(GameField.TABLE.value, got)] if kind == "h" else list(enumerate(got))
            work += [(key, at, raw, new) for at, raw in values if raw and (new := convert(raw)) is not None]
        if work:
            pipe = redis.pipeline(transaction=False)
            for key, at, raw, new in work:
                pipe.eval(_REWRITE, 1, key, kind, at, raw, new)
            await pipe.execute()
            rewritten += len(work)
    return rewritten


def _logged(count: int, message: str, *args: object) -> int:
    """``count``, logged with ``message`` (at INFO when not 0)."""
    log.log(logging.INFO if count else logging.DEBUG, message, count, *args)
    return count


class SchemaError(Exception):
    """The stored data is of a newer schema than this build knows: it must not write to it."""

    def __init__(self, stored: int) -> None:
        super().__init__(
            f"the stored data is of schema {stored}, newer than this version knows ({SCHEMA}): "
            "run the newer version (or restore the backup taken before the upgrade)"
        )
        self.stored = stored


async def check_schema(redis: RedisClient, bot_id: str) -> None:
    """Raise :class:`SchemaError` when the stored schema is newer than :data:`SCHEMA` (one GET)."""
    stored = int(await redis.get(Keys(bot_prefix(bot_id)).schema()) or 0)
    if stored > SCHEMA:
        raise SchemaError(stored)


async def migrate(redis: RedisClient, bot_id: str) -> int:
    """Bring the bot's storage to :data:`SCHEMA` (the active process only); returns the keys and values
    changed (0 after one GET when done). Raises ``ValueError`` for a non-decimal ``bot_id``, :class:`SchemaError`."""
    if not _DIGITS.fullmatch(bot_id):
        raise ValueError(f"bot id {bot_id!r} is not decimal digits")
    keys = Keys(bot_prefix(bot_id))
    current = int(await redis.get(keys.schema()) or 0)
    if current > SCHEMA:
        raise SchemaError(current)
    if current == SCHEMA:
        return 0
    moved = await _move_all(redis, bot_id) if current < 2 else 0
    changed = _logged(moved, "storage schema 2: %d keys moved from %s:* to %s:%s:*", ROOT, ROOT, bot_id)
    changed += _logged(await _rename_all(redis, keys), "storage schema 3: fields renamed in %d hashes")
    changed += _logged(await _gather_statistics(redis, keys), "storage schema 4: %d statistics keys into one slot")
    rewritten = await _rewrite_all(redis, keys.game_pattern(), "h", _table_3)
    rewritten += await _rewrite_all(redis, keys.outbox("*"), "l", _note_4)
    changed += _logged(rewritten, "storage schema 4: %d tables and notes rewritten")
    await redis.set(keys.schema(), SCHEMA)
    return changed
