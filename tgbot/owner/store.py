"""The per-game owner: each live game's table in memory, one lock per game, and the one transaction
path, committed by one Lua script (``_COMMIT``; docs/DESIGN.md, Processes). Records: :mod:`tgbot.storage.records`."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from tgbot.game.lobby import indexed_people, moved_to, waits_for
from tgbot.game.table import Answer, Change, RefusedError, Table
from tgbot.storage.records import DELETE_IF_EQUAL, Records
from tgbot.storage.redis import RedisClient

__all__ = [
    "FINISHED_TTL",
    "RECENT_UPDATES",
    "Committed",
    "ConflictError",
    "Fence",
    "FencedError",
    "Store",
    "UpdateMark",
    "game_id_for_update",
]


class Fence(Protocol):
    """What every commit checks: this process may commit now, with this fencing ``epoch``."""

    @property
    def epoch(self) -> int: ...

    async def active(self) -> bool: ...


class Unfenced:
    """The fence of a store no runner drives (tests, tools): epoch 0, always active."""

    epoch = 0

    async def active(self) -> bool:
        return True


@dataclass
class UpdateMark:
    """The update a transaction applies: its id and its commits so far per game, so each commit
    records ``<update id>.<n>`` (a second delivery of the update then applies nothing)."""

    update_id: int
    counts: dict[str, int] = field(default_factory=dict)

    def take(self, game_id: str) -> tuple[str, int]:
        """The mark of the next commit to ``game_id``: ``("<id>.<n>", id)``."""
        n = self.counts.get(game_id, 0)
        self.counts[game_id] = n + 1
        return f"{self.update_id}.{n}", self.update_id

    def give_back(self, game_id: str) -> None:
        """The last mark taken for ``game_id`` was not committed."""
        self.counts[game_id] -= 1


#: The update marks a game keeps (a re-delivery comes within minutes).
RECENT_UPDATES = 64
#: A finished game's keys are kept this long (seconds) for its record and late taps.
FINISHED_TTL = 7 * 24 * 3600

# KEYS: 1 the game hash, 2 its log, 3 its outbox, 4 its tg hash, 5 its applied updates. ARGV: 1
# expected version ('' for a creation), 2 new version, 3 table JSON, 4 deal JSON ('' none), 5 ttl
# s (0 none), 6 epoch, 7 update mark ('' none), 8 its score (the new version: the marks are
# trimmed by arrival, as Telegram may restart its update ids lower), 9 number of log entries, then the
# log entries, then the outbox notes. Returns 1 committed, 0 version conflict, -1 fenced (a
# newer epoch wrote the game), -2 the update was applied already.
_COMMIT = f"""
if tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0') > tonumber(ARGV[6]) then return -1 end
if ARGV[7] ~= '' and redis.call('ZSCORE', KEYS[5], ARGV[7]) then return -2 end
if (redis.call('HGET', KEYS[1], 'version') or '') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'table', ARGV[3], 'epoch', ARGV[6])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'deal', ARGV[4]) end
local nlog = tonumber(ARGV[9])
for i = 1, nlog do redis.call('RPUSH', KEYS[2], ARGV[9 + i]) end
for i = 10 + nlog, #ARGV do redis.call('RPUSH', KEYS[3], ARGV[i]) end
if ARGV[7] ~= '' then
  redis.call('ZADD', KEYS[5], ARGV[8], ARGV[7])
  redis.call('ZREMRANGEBYRANK', KEYS[5], 0, -{RECENT_UPDATES + 1})
end
local ttl = tonumber(ARGV[5])
if ttl > 0 then
  for i = 1, 5 do redis.call('EXPIRE', KEYS[i], ttl) end
end
return 1
"""

# Raise a game's fencing epoch (KEYS: the game hash; ARGV: epoch) before a new holder touches it.
_RAISE_EPOCH = """
if tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0') < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'epoch', ARGV[1])
end
return 1
"""

_SET_IF = """
local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end
return 0
"""


class ConflictError(Exception):
    """A transaction lost the compare-and-set too many times in a row (another writer: only
    possible while two processes briefly believe they are active)."""


class FencedError(Exception):
    """A commit was refused: a process with a newer lease epoch has written the game; this
    process is no longer the active one and must stop."""


def game_id_for_update(bot_id: str, update_id: int) -> str:
    """The id of a game an update opens: derived from the update, so a second delivery of it
    finds the game it opened instead of opening another."""
    digest = hashlib.blake2b(f"{bot_id}:{update_id}".encode(), digest_size=6).digest()
    return base64.urlsafe_b64encode(digest).decode()


@dataclass
class Committed:
    """What a successful :meth:`Store.transact` returns: the committed change and the table
    as it was before."""

    change: Change
    before: Table | None


class Store:
    """Each live game's owner in this process (see the module docstring), over one redis-py
    asyncio client (``decode_responses=True``); ``records``: the users, chats and notes beside.
    ``fence``: checked before each commit, its epoch carried by it; ``on_commit(before, after)``:
    called after each commit under the game's lock (the timer and the view sync are told there)."""

    def __init__(
        self,
        redis: RedisClient,
        prefix: str = "cheat",
        fence: Fence | None = None,
        on_commit: Callable[[Table | None, Table], None] | None = None,
    ) -> None:
        self.records = Records(redis, prefix)
        self.redis: Any = redis
        self.keys = self.records.keys
        self.fence = fence or Unfenced()
        self.on_commit = on_commit or (lambda before, after: None)
        self._tables: dict[str, Table] = {}
        self._applied: dict[str, dict[str, None]] = {}  # per game, the marks its commits recorded (oldest first)
        # a game's lock lives while someone holds or waits on it (they keep it referenced)
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._commit_script = redis.register_script(_COMMIT)
        self._raise_epoch = redis.register_script(_RAISE_EPOCH)
        self._set_if = redis.register_script(_SET_IF)

    def forget_tables(self) -> None:
        """Drop every table kept in memory (this process lost the lease, or a test restarts)."""
        self._tables.clear()
        self._applied.clear()

    def lock(self, game_id: str) -> asyncio.Lock:
        """The game's lock: its transactions and its timer run one at a time."""
        lock = self._locks[game_id] = self._locks.get(game_id) or asyncio.Lock()
        return lock

    async def load(self, game_id: str) -> Table | None:
        """The table of game ``game_id`` (from memory once loaded), or ``None`` if there is none. A
        read from Redis waits for the game's transaction in flight, so it never keeps a table
        older than the one that transaction commits."""
        table = self._tables.get(game_id)
        if table is not None:
            return table
        async with self.lock(game_id):
            return await self._read(game_id)

    async def _read(self, game_id: str) -> Table | None:
        """:meth:`load` for the holder of the game's lock."""
        table = self._tables.get(game_id)
        if table is not None:
            return table
        pipe = self.redis.pipeline(transaction=False)
        pipe.hget(self.keys.game(game_id), "table")
        pipe.zrange(self.keys.applied(game_id), 0, -1)
        raw, applied = await pipe.execute()
        if not raw:
            return None
        table = Table.from_json(raw)
        if table.live:
            self._tables[game_id] = table
            self._applied[game_id] = dict.fromkeys(applied)
        return table

    async def raise_epoch(self, game_id: str) -> None:
        """Mark game ``game_id`` as this epoch's before this process first touches it."""
        await self._raise_epoch(keys=[self.keys.game(game_id)], args=[self.fence.epoch])

    async def create(self, table: Table, update: UpdateMark | None = None) -> bool:
        """Store a new table (version 1). False if the id is taken (then, when ``update`` created
        it, it is this game: see :func:`game_id_for_update`)."""
        async with self.lock(table.id):
            return await self._commit(None, Change(table), update.take(table.id) if update else None) == 1

    async def transact(
        self, game_id: str, fn: Callable[[Table], Change], update: UpdateMark | None = None, attempts: int = 8
    ) -> Committed:
        """Apply the pure ``fn`` to game ``game_id``'s table and commit it, under the game's lock.

        ``fn`` may raise :class:`~tgbot.game.table.RefusedError` (as does a missing game). A change
        whose table is the loaded one is not written. When ``update`` was applied to this game
        already, nothing is: the result's change is the current table with reply ``"ok"``. Raises
        :class:`FencedError` and :class:`ConflictError` (every attempt met another writer)."""
        async with self.lock(game_id):
            for _ in range(attempts):
                table = await self._read(game_id)
                if table is None:
                    raise RefusedError(Answer.NO_GAME)
                mark = update.take(game_id) if update else None
                if mark and mark[0] in self._applied.get(game_id, ()):
                    return Committed(Change(table), table)
                change = fn(table)
                if change.table is table and not change.log and not change.outbox:
                    if update:
                        update.give_back(game_id)
                    return Committed(change, table)
                got = await self._commit(table, change, mark)
                if got in (1, -2):
                    return Committed(change, table)
                self._tables.pop(game_id, None)  # another writer: read it again
                if update:
                    update.give_back(game_id)
            raise ConflictError(f"game {game_id}: {attempts} conflicting attempts")

    async def _commit(self, before: Table | None, change: Change, mark: tuple[str, int] | None) -> int:
        """One compare-and-set (see ``_COMMIT``); 1 committed (or applied before: -2), 0 conflict.
        Raises :class:`FencedError`."""
        if not await self.fence.active():
            raise FencedError(f"game {change.table.id}: this process no longer holds the lease")
        version = (before.version if before else 0) + 1
        new = change.table = replace(change.table, version=version)
        args: list[Any] = [
            str(before.version) if before else "",
            str(version),
            new.to_json(),
            json.dumps(change.deal) if change.deal is not None else "",
            str(FINISHED_TTL if not new.live else 0),
            str(self.fence.epoch),
            mark[0] if mark else "",
            version if mark else 0,
            str(len(change.log)),
            *[json.dumps(a, separators=(",", ":")) for a in change.log],
            *[json.dumps(o, ensure_ascii=False, separators=(",", ":")) for o in change.outbox],
        ]
        keys = self.keys
        game_keys = [
            keys.game(new.id),
            keys.log(new.id),
            keys.outbox(new.id),
            keys.telegram(new.id),
            keys.applied(new.id),
        ]
        got = int(await self._commit_script(keys=game_keys, args=args))
        if got == -1:
            self.forget_tables()
            raise FencedError(f"game {new.id}: a newer active process wrote it")
        if got == -2 and before is None:
            return -2  # (a creation already made by this update: the caller loads it)
        if got == 0:
            return 0
        self._keep(new, mark)
        await self._after_commit(before, new)
        self.on_commit(before, new)
        return 1

    def _keep(self, table: Table, mark: tuple[str, int] | None) -> None:
        """Keep a committed live table and its update mark in memory; forget an ended one."""
        if not table.live:
            self._tables.pop(table.id, None)
            self._applied.pop(table.id, None)
            return
        self._tables[table.id] = table
        if mark:
            marks = self._applied.setdefault(table.id, {})
            marks[mark[0]] = None
            if len(marks) > RECENT_UPDATES:
                del marks[next(iter(marks))]  # as the stored set keeps only the latest

    async def _after_commit(self, before: Table | None, after: Table) -> None:
        """Bring the indexes in line with a committed table (one pipelined round trip, none for
        a change that moves no index, such as a play). Each index is checked against the game
        when read, so a crash between the commit and this leaves nothing wrong."""
        now_in = indexed_people(after) if after.live else set()
        was_in = indexed_people(before) if before is not None else set()
        if before is not None and before.live == after.live and now_in == was_in and before.chat_id == after.chat_id:
            return
        pipe = self.redis.pipeline(transaction=False)
        # An ended game stays in the live set until the sync has shown its end (its result may
        # still be in the outbox); its chat is freed at once for the next game.
        pipe.sadd(self.keys.live(), after.id)
        pipe.sadd(self.keys.chat_games(after.chat_id), after.id)
        if not after.live:
            pipe.eval(DELETE_IF_EQUAL, 1, self.keys.chat(after.chat_id, after.thread_id), after.id)
            pipe.srem(self.keys.chat_games(after.chat_id), after.id)
            pipe.set(self.keys.chat_last(after.chat_id, after.thread_id), after.id, ex=FINISHED_TTL)
        for user_id in now_in - was_in:
            pipe.sadd(self.keys.user_games(user_id), after.id)
        for user_id in was_in - now_in:
            pipe.srem(self.keys.user_games(user_id), after.id)
        await pipe.execute()

    # -- the indexes, checked against each game ------------------------------------------------

    async def chat_game(self, chat_id: int, thread_id: int | None) -> Table | None:
        """The live table of a chat (topic), checked against the game itself."""
        return await self._pointed(self.keys.chat(chat_id, thread_id), chat_id, live=True)

    async def chat_last_game(self, chat_id: int, thread_id: int | None) -> Table | None:
        """The last game of a chat (topic) that ended, while its keys are kept
        (:data:`FINISHED_TTL`), checked against the game itself."""
        return await self._pointed(self.keys.chat_last(chat_id, thread_id), chat_id, live=False)

    async def _pointed(self, key: str, chat_id: int, live: bool) -> Table | None:
        """The table the index string ``key`` names, if it is ``chat_id``'s and ``live`` (or ended)."""
        game_id = await self.redis.get(key)
        table = await self.load(game_id) if game_id else None
        return table if table is not None and table.live == live and table.chat_id == chat_id else None

    async def claim_chat(self, chat_id: int, thread_id: int | None, game_id: str) -> bool:
        """Point the chat's index at ``game_id`` unless another live game holds it."""
        key = self.keys.chat(chat_id, thread_id)
        if await self.redis.set(key, game_id, nx=True):
            return True
        old = await self.redis.get(key)
        if old and await self.chat_game(chat_id, thread_id) is not None:
            return False
        return bool(await self._set_if(keys=[key], args=[old or "", game_id]))

    async def _indexed(
        self, key: str, belongs: Callable[[Table], bool], kept: Callable[[Table], bool] | None = None
    ) -> list[Table]:
        """The live tables of the index set ``key`` that ``belongs`` accepts, by id; the index's
        stale entries (not live, or not ``kept``: by default not ``belongs``) are dropped."""
        out = []
        for game_id in sorted(await self.redis.smembers(key)):
            table = await self.load(game_id)
            if table is not None and table.live and belongs(table):
                out.append(table)
            elif table is None or not table.live or not (kept or belongs)(table):
                await self.redis.srem(key, game_id)
        return out

    async def user_games(self, user_id: int, offered: bool = False) -> list[Table]:
        """The live tables ``user_id`` is seated at (``offered``: the open lobbies that offered
        them their join link instead, :func:`waits_for`)."""
        key, kept = self.keys.user_games(user_id), lambda table: user_id in indexed_people(table)
        if offered:
            return await self._indexed(key, lambda table: waits_for(table, user_id), kept)
        return await self._indexed(key, lambda table: table.seat_of(user_id) is not None, kept)

    async def chat_games(self, chat_id: int) -> list[Table]:
        """Every live table of a chat, in all its forum topics."""
        return await self._indexed(self.keys.chat_games(chat_id), lambda table: table.chat_id == chat_id)

    async def move_games(self, old_chat_id: int, new_chat_id: int, also: tuple[str, ...] = ()) -> list[str]:
        """Move group ``old_chat_id``'s live games (and ``also``, ended ones still to be shown) to
        supergroup ``new_chat_id``: the new index, then the table, then the old index dropped, so
        each game is always reachable. Idempotent. Returns the moved game ids."""
        tables = {table.id: table for table in await self.chat_games(old_chat_id)}
        for game_id in also:
            table = await self.load(game_id)
            if table is not None and table.chat_id == old_chat_id:
                tables[game_id] = table
        moved = []
        for table in tables.values():
            if table.live:
                await self.redis.set(self.keys.chat(new_chat_id, table.thread_id), table.id, nx=True)
            await self.transact(table.id, lambda current: moved_to(current, old_chat_id, new_chat_id))
            await self.records.release_chat(old_chat_id, table.thread_id, table.id)
            await self.redis.srem(self.keys.chat_games(old_chat_id), table.id)
            moved.append(table.id)
        return moved
