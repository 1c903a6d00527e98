"""Players' statistics and chat leaderboards: counted once per finished game, read by /stats and
/top, moved when a group becomes a supergroup, forgotten by /forget_me.

Figures come from :func:`core.stats.game_stats` on the game's record. Keys
(:mod:`tgbot.storage.keys`): a user's totals, boards and counted games share the slot
``{u<user>}``, a chat's board and counted games ``{c<chat>}``. Exactly once: one script per
person and one for the board each add the game only if its id is not yet in their ``counted``
set (and put it there); the game is marked ``counted`` in its hash only once all have answered,
so a retry after a crash redoes only what had not run. People only; games without a result
never count; a group's game since upgraded counts on the supergroup's board.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, fields as dataclass_fields

from core.cards import Hand
from core.record import Record, action_from_dict
from core.stats import SeatStats, game_stats
from tgbot.game.table import Ending, Status, Table
from tgbot.owner.store import Store

__all__ = [
    "COUNTED_KEEP",
    "FIELDS",
    "MIN_TOP_GAMES",
    "MOVE_ROUNDS",
    "RECORD_FILE",
    "Totals",
    "count_game",
    "forget_user",
    "game_figures",
    "move_board",
    "record_of_game",
    "top",
    "totals",
]

#: Games a player needs to be listed by /top.
MIN_TOP_GAMES = 3
#: The record file's name sent to a player (``cheat-record/1`` JSON).
RECORD_FILE = "cheat-{gid}.json"
#: Entries shown by /top.
TOP_SIZE = 10
#: Seconds a counted game's id stays in the ``counted`` sets (longer than a game's keys are kept).
COUNTED_KEEP = 30 * 24 * 3600
#: Batches :func:`move_board` hands over at most in one call (a game counted meanwhile makes a second).
MOVE_ROUNDS = 3

# The guard shared by both counting scripts: once(key) is true the first time the game ARGV[1]
# comes to the sorted set ``key`` (and records it, at ARGV[2] ms; ids older than ARGV[3] ms are
# dropped first, and the set expires after that long without a new game).
_ONCE = """
local function once(key)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]))
  if redis.call('ZSCORE', key, ARGV[1]) then return false end
  redis.call('ZADD', key, ARGV[2], ARGV[1])
  redis.call('PEXPIRE', key, ARGV[3])
  return true
end
"""

# One person's totals ({u<user>} slot). KEYS: 1 totals hash, 2 their chats set, 3 their counted
# set. ARGV: 1 game id, 2 now (ms), 3 keep (ms), 4 chat, 5 place, 6 F (number of fields), then
# the F field names, then the F values (FIELDS order). 1 added, 0 already counted.
_COUNT_PLAYER = (
    _ONCE
    + """
if not once(KEYS[3]) then return 0 end
redis.call('HINCRBY', KEYS[1], 'place' .. ARGV[5], 1)
local f = tonumber(ARGV[6])
for j = 1, f do
  local value = tonumber(ARGV[6 + f + j])
  if value ~= 0 then redis.call('HINCRBY', KEYS[1], ARGV[6 + j], value) end
end
redis.call('SADD', KEYS[2], ARGV[4])
return 1
"""
)

# The chat's leaderboard ({c<chat>} slot). KEYS: 1 the board hash, 2 its counted set. ARGV: 1
# game id, 2 now (ms), 3 keep (ms), then per person: user id, name, wins (0/1). 1 added, 0
# already counted.
_COUNT_CHAT = (
    _ONCE
    + """
if not once(KEYS[2]) then return 0 end
for i = 4, #ARGV, 3 do
  redis.call('HINCRBY', KEYS[1], ARGV[i] .. ':games', 1)
  redis.call('HINCRBY', KEYS[1], ARGV[i] .. ':wins', ARGV[i + 2])
  redis.call('HSET', KEYS[1], ARGV[i] .. ':name', ARGV[i + 1])
end
return 1
"""
)


# Hand a chat's board over ({c<old>} slot). KEYS: 1 the board, 2 its counted set, 3 the handoff
# board, 4 the handoff counted set. ARGV: 1 a fresh batch id. A handoff left by a run that
# stopped midway is returned as it is; else the board and its counted set are renamed to the
# handoff keys, tagged with the batch id. Returns {batch id, handoff board (flat), counted set
# (flat, with scores)}, or nil when there is nothing to hand over.
_HANDOFF = """
if redis.call('EXISTS', KEYS[3]) == 0 then
  if redis.call('EXISTS', KEYS[1]) == 0 and redis.call('EXISTS', KEYS[2]) == 0 then return false end
  if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('RENAME', KEYS[1], KEYS[3]) end
  if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('RENAME', KEYS[2], KEYS[4]) end
  redis.call('HSET', KEYS[3], '~batch', ARGV[1])
end
return {redis.call('HGET', KEYS[3], '~batch'), redis.call('HGETALL', KEYS[3]), redis.call('ZRANGE', KEYS[4], 0, -1, 'WITHSCORES')}
"""

# Add a handed-over board to the new chat's, once per batch ({c<new>} slot). KEYS: 1 the board,
# 2 its counted set. ARGV: 1 the batch's guard id (kept in the counted set like a game id), 2 now
# (ms), 3 keep (ms), 4 R (rows), then R rows of user id, games, wins, name, then the handed-over
# counted set as game id, score (ms) pairs (ids older than keep are skipped). 1 added, 0 already.
_MERGE_BOARD = (
    _ONCE
    + """
if not once(KEYS[2]) then return 0 end
local last = 4 + 4 * tonumber(ARGV[4])
for i = 5, last, 4 do
  redis.call('HINCRBY', KEYS[1], ARGV[i] .. ':games', ARGV[i + 1])
  redis.call('HINCRBY', KEYS[1], ARGV[i] .. ':wins', ARGV[i + 2])
  if ARGV[i + 3] ~= '' then redis.call('HSETNX', KEYS[1], ARGV[i] .. ':name', ARGV[i + 3]) end
end
local oldest = tonumber(ARGV[2]) - tonumber(ARGV[3])
for i = last + 1, #ARGV, 2 do
  if tonumber(ARGV[i + 1]) > oldest then redis.call('ZADD', KEYS[2], 'NX', ARGV[i + 1], ARGV[i]) end
end
return 1
"""
)

# Drop a handoff once its batch was added ({c<old>} slot). KEYS: 1 the handoff board, 2 its
# counted set. ARGV: 1 the batch id. 1 dropped, 0 not this batch's (already dropped).
_DROP_HANDOFF = """
if redis.call('HGET', KEYS[1], '~batch') == ARGV[1] then redis.call('DEL', KEYS[1], KEYS[2]) return 1 end
return 0
"""


@dataclass(frozen=True)
class Totals:
    """A user's figures over every counted game (zeros when none)."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    place_sum: int = 0
    plays: int = 0
    bluffs: int = 0
    bluffs_caught: int = 0
    bluffs_through: int = 0
    challenges: int = 0
    challenges_right: int = 0
    piles_taken: int = 0

    @property
    def mean_place(self) -> float:
        """The mean place (0 when no game was counted)."""
        return self.place_sum / self.games if self.games else 0.0


#: The counters kept per user (and summed by the counting script): the fields of :class:`Totals`.
FIELDS: tuple[str, ...] = tuple(f.name for f in dataclass_fields(Totals))


def record_of_game(
    table: Table, deal: list[str] | None, log: list[dict], names: list[str] | None = None
) -> Record | None:
    """The game's ``cheat-record/1`` record (deal and actions as stored; ``names`` as the
    ``players`` key when given), or ``None`` before the deal."""
    if deal is None:
        return None
    actions = tuple(action_from_dict(a, len(deal), i) for i, a in enumerate(log))
    return Record(
        table.variant,
        tuple(Hand.from_str(h) for h in deal),
        actions,
        players=tuple(names) if names else None,
        seed=table.seed,
    )


async def game_figures(store: Store, table: Table) -> list[SeatStats] | None:
    """Each seat's figures in the game (:func:`core.stats.game_stats` on its stored record)."""
    deal, log = await store.records.record(table.id)
    record = record_of_game(table, deal, log)
    return game_stats(record) if record is not None else None


async def count_game(store: Store, table: Table) -> bool:
    """Add a finished game's figures to its people's totals and the chat's board, exactly once
    (module docstring). True when this call marked the game counted. Raises what redis-py
    raises: the game is then not marked, and the next call finishes the count."""
    if table.status is not Status.OVER or table.ended != Ending.FINISHED:
        return False
    if await store.redis.hget(store.keys.game(table.id), "counted"):
        return False
    figures = await game_figures(store, table)
    if figures is None:
        return False
    head = [table.id, str(int(time.time() * 1000)), str(COUNTED_KEEP * 1000)]
    chat_id = await store.records.chat_moved_to(table.chat_id) or table.chat_id  # a group since upgraded
    board: list[str] = []
    pipe = store.redis.pipeline(transaction=False)  # one script per slot, in any order
    for i, seat in enumerate(table.seats):
        if not seat.human or seat.user_id <= 0:
            continue
        seat_figures = figures[i]
        values = {
            **{k: getattr(seat_figures, k) for k in FIELDS if hasattr(seat_figures, k)},
            "games": 1,
            "wins": int(seat_figures.won),
            "draws": int(seat_figures.draw),
            "place_sum": seat_figures.place,
        }
        keys = store.keys.user_statistics(seat.user_id)
        counters = (str(int(values[k])) for k in FIELDS)
        pipe.eval(
            _COUNT_PLAYER,
            len(keys),
            *keys,
            *head,
            str(chat_id),
            str(seat_figures.place),
            str(len(FIELDS)),
            *FIELDS,
            *counters,
        )
        board += [str(seat.user_id), seat.name, str(int(seat_figures.won))]
    if board:
        board_keys = store.keys.board(chat_id)
        pipe.eval(_COUNT_CHAT, len(board_keys), *board_keys, *head, *board)
    await pipe.execute()
    # only now, every step having answered: a crash before this line leaves the game to count
    return bool(await store.redis.hsetnx(store.keys.game(table.id), "counted", 1))


async def totals(store: Store, user_id: int) -> tuple[Totals, dict[int, int]]:
    """The user's totals and their count of each place (place → games); zeros when absent."""
    raw = await store.redis.hgetall(store.keys.user_statistics(user_id)[0])
    values = {k: int(raw.get(k, 0)) for k in FIELDS}
    places = {int(k[5:]): int(v) for k, v in raw.items() if k.startswith("place") and k[5:].isdigit()}
    return Totals(**values), places


async def top(store: Store, chat_id: int, limit: int = TOP_SIZE) -> list[tuple[int, str, int, int]]:
    """The chat's leaderboard: (user id, name, wins, games) of the players with at least
    :data:`MIN_TOP_GAMES` games, most wins first (then fewer games, then the id), ``limit`` rows."""
    rows = _board_rows(await store.redis.hgetall(store.keys.board(chat_id)[0]))
    out = [
        (user_id, row.get("name", ""), int(row.get("wins", 0)), int(row.get("games", 0)))
        for user_id, row in rows.items()
    ]
    return sorted((row for row in out if row[3] >= MIN_TOP_GAMES), key=lambda row: (-row[2], row[3], row[0]))[:limit]


def _board_rows(raw: dict[str, str]) -> dict[int, dict[str, str]]:
    """A board hash's fields ``<user>:<field>`` by user id, then field (other fields skipped)."""
    rows: dict[int, dict[str, str]] = {}
    for key, value in raw.items():
        user_id, _, field = key.rpartition(":")
        try:
            rows.setdefault(int(user_id), {})[field] = value
        except ValueError:
            continue
    return rows


async def move_board(store: Store, old_chat_id: int, new_chat_id: int) -> int:
    """Add group ``old_chat_id``'s leaderboard to supergroup ``new_chat_id``'s, exactly once.

    Three steps, one slot each, each safe to run again: the old board becomes a handoff with a
    fresh batch id; the new board adds it unless the batch's guard id is in its counted set
    (names it has are kept); the handoff is dropped. Each player's index of boards names the new
    chat before the addition and forgets the old one before the drop. Returns the players moved."""
    moved = 0
    for _ in range(MOVE_ROUNDS):
        handed = await store.redis.eval(
            _HANDOFF, 4, *store.keys.board(old_chat_id), *store.keys.board_handoff(old_chat_id), secrets.token_hex(6)
        )
        if not handed:
            break
        batch, board, counted = handed
        rows = _board_rows(dict(zip(board[::2], board[1::2], strict=True)))
        await _index_boards(store, rows, add=new_chat_id)
        flat = [
            x
            for user_id, row in rows.items()
            for x in (str(user_id), row.get("games", "0"), row.get("wins", "0"), row.get("name", ""))
        ]
        head = [f"moved:{old_chat_id}:{batch}", str(int(time.time() * 1000)), str(COUNTED_KEEP * 1000)]
        await store.redis.eval(_MERGE_BOARD, 2, *store.keys.board(new_chat_id), *head, str(len(rows)), *flat, *counted)
        await _index_boards(store, rows, remove=old_chat_id)
        await store.redis.eval(_DROP_HANDOFF, 2, *store.keys.board_handoff(old_chat_id), batch)
        moved += len(rows)
    return moved


async def _index_boards(
    store: Store, rows: dict[int, dict[str, str]], add: int | None = None, remove: int | None = None
) -> None:
    """Name chat ``add`` in (or forget chat ``remove`` from) the board index of each user of ``rows``."""
    if not rows:
        return
    pipe = store.redis.pipeline(transaction=False)
    for user_id in rows:
        key = store.keys.user_statistics(user_id)[1]
        if add is not None:
            pipe.sadd(key, add)
        if remove is not None:
            pipe.srem(key, remove)
    await pipe.execute()


async def forget_user(store: Store, user_id: int) -> None:
    """Delete everything stored about ``user_id`` outside running games (through the user's own
    indexes: nothing scans the keyspace)."""
    totals_key, chats_key, counted_key = store.keys.user_statistics(user_id)
    chats = await store.redis.smembers(chats_key)
    pipe = store.redis.pipeline(transaction=False)
    for chat in chats:
        pipe.hdel(store.keys.board(chat)[0], *(f"{user_id}:{field}" for field in ("games", "wins", "name")))
    for key in (totals_key, chats_key, counted_key, store.keys.user(user_id), store.keys.user_games(user_id)):
        pipe.delete(key)  # one key a command: they live in several slots
    await pipe.execute()
    await store.records.forget_notify(user_id)
