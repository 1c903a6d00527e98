"""Statistics' Redis side (docs/DESIGN.md, Statistics): a finished game counted once, read by /stats and
/top, moved when a group becomes a supergroup, forgotten by /forget_me; every key in the slot ``{s<bot>}``."""

from __future__ import annotations

import time
from dataclasses import dataclass, fields as dataclass_fields

from core.cards import Hand
from core.record import Record, action_from_dict
from core.stats import SeatStats, game_stats
from tgbot.game.table import Table
from tgbot.storage.keys import BoardField, GameField, board_field
from tgbot.storage.records import Records

#: Games a player needs to be listed by /top.
MIN_TOP_GAMES = 3
#: The record file's name sent to a player (``cheat-record/1`` JSON).
RECORD_FILE = "cheat-{gid}.json"
#: Entries shown by /top.
TOP_SIZE = 10
#: Seconds a counted game's id stays in :meth:`~tgbot.storage.keys.Keys.counted` (longer than its keys).
COUNTED_KEEP = 30 * 24 * 3600
#: Rounds of :func:`move_board` at most (a game counted on the old board meanwhile makes a second).
MOVE_ROUNDS = 3

# KEYS: 1 the counted set, 2 the board, then each person's totals and boards set. ARGV: 1 game id,
# 2 now (ms), 3 keep (ms), 4 chat id, 5 F, the F counter names, then per person: user id, name,
# place, won (0/1) and the F values. 1 counted, 0 counted before.
_COUNT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]))
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local f = tonumber(ARGV[5])
local at = 6 + f
for k = 3, #KEYS, 2 do
  local user, boards = ARGV[at], k + 1
  redis.call('HINCRBY', KEYS[k], 'place' .. ARGV[at + 2], 1)
  for j = 1, f do
    local value = tonumber(ARGV[at + 3 + j])
    if value ~= 0 then redis.call('HINCRBY', KEYS[k], ARGV[5 + j], value) end
  end
  redis.call('SADD', KEYS[boards], ARGV[4])
  redis.call('HINCRBY', KEYS[2], user .. ':games', 1)
  redis.call('HINCRBY', KEYS[2], user .. ':wins', ARGV[at + 3])
  redis.call('HSET', KEYS[2], user .. ':name', ARGV[at + 1])
  at = at + 4 + f
end
return 1
"""

# KEYS: 1 the old board, 2 the new one, then each user's boards set. ARGV: 1 old chat, 2 new chat,
# then the users (as KEYS). Adds each user's row to the new board (a name it has is kept), drops
# it from the old one. Returns the fields left on the old board.
_MOVE_BOARD = """
for i = 3, #KEYS do
  local user = ARGV[i]
  local games, wins, name = unpack(redis.call('HMGET', KEYS[1], user .. ':games', user .. ':wins', user .. ':name'))
  if games then redis.call('HINCRBY', KEYS[2], user .. ':games', games) end
  if wins then redis.call('HINCRBY', KEYS[2], user .. ':wins', wins) end
  if name then redis.call('HSETNX', KEYS[2], user .. ':name', name) end
  redis.call('HDEL', KEYS[1], user .. ':games', user .. ':wins', user .. ':name')
  redis.call('SREM', KEYS[i], ARGV[1])
  redis.call('SADD', KEYS[i], ARGV[2])
end
return redis.call('HLEN', KEYS[1])
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


#: The counters kept per user: the fields of :class:`Totals`.
FIELDS: tuple[str, ...] = tuple(f.name for f in dataclass_fields(Totals))


def record_of_game(
    table: Table, deal: list[str] | None, log: list[dict], names: list[str] | None = None
) -> Record | None:
    """The game's ``cheat-record/1`` record (``names`` as its ``players`` when given), or ``None`` before the deal."""
    if deal is None:
        return None
    actions = tuple(action_from_dict(a, len(deal), i) for i, a in enumerate(log))
    hands = tuple(Hand.from_str(h) for h in deal)
    return Record(table.variant, hands, actions, players=tuple(names) if names else None, seed=table.seed)


async def game_figures(records: Records, table: Table) -> list[SeatStats] | None:
    """Each seat's figures in the game (:func:`core.stats.game_stats` on its stored record)."""
    deal, log = await records.record(table.id)
    record = record_of_game(table, deal, log)
    return game_stats(record) if record is not None else None


async def count_game(records: Records, table: Table) -> bool:
    """Add a game's figures to its people's totals and its chat's board, exactly once, if it ended
    with a result; True when this call marked it counted. A failed call is finished by the next."""
    redis, keys = records.redis, records.keys
    if await redis.hget(keys.game(table.id), GameField.COUNTED):
        return False
    figures = await game_figures(records, table)
    if figures is None or not any(seat.place for seat in figures):  # stopped, expired, retired: no result
        return False
    chat_id = await records.chat_moved_to(table.chat_id) or table.chat_id
    people = [(seat, figures[i]) for i, seat in enumerate(table.seats) if seat.human and seat.user_id > 0]
    script_keys, rows = [keys.counted(), keys.board(chat_id)], []
    for seat, got in people:
        values = {k: getattr(got, k, 0) for k in FIELDS} | {
            "games": 1,
            "wins": got.won,
            "draws": got.draw,
            "place_sum": got.place,
        }
        script_keys += [keys.totals(seat.user_id), keys.boards_of(seat.user_id)]
        rows += [seat.user_id, seat.name, got.place, int(got.won), *(int(values[k]) for k in FIELDS)]
    if people:
        head = [table.id, int(time.time() * 1000), COUNTED_KEEP * 1000, chat_id, len(FIELDS), *FIELDS]
        await redis.eval(_COUNT, len(script_keys), *script_keys, *head, *rows)
    # only now, the count having answered: a crash before this line leaves the game to count
    return bool(await redis.hsetnx(keys.game(table.id), GameField.COUNTED, 1))


async def totals(records: Records, user_id: int) -> tuple[Totals, dict[int, int]]:
    """The user's totals and their count of each place (place → games); zeros when absent."""
    raw = await records.redis.hgetall(records.keys.totals(user_id))
    places = {int(k[5:]): int(v) for k, v in raw.items() if k.startswith("place") and k[5:].isdigit()}
    return Totals(**{k: int(raw.get(k, 0)) for k in FIELDS}), places


async def top(records: Records, chat_id: int, limit: int = TOP_SIZE) -> list[tuple[int, str, int, int]]:
    """The chat's leaderboard: (user id, name, wins, games) of the players with at least
    :data:`MIN_TOP_GAMES` games, most wins first (then fewer games, then the id), ``limit`` rows."""
    rows: dict[int, dict[str, str]] = {}
    for key, value in (await records.redis.hgetall(records.keys.board(chat_id))).items():
        user_id, _, field = key.rpartition(":")
        rows.setdefault(int(user_id), {})[field] = value
    out = [
        (user_id, row.get(BoardField.NAME, ""), int(row.get(BoardField.WINS, 0)), int(row.get(BoardField.GAMES, 0)))
        for user_id, row in rows.items()
    ]
    return sorted((row for row in out if row[3] >= MIN_TOP_GAMES), key=lambda row: (-row[2], row[3], row[0]))[:limit]


async def on_board(records: Records, chat_id: int, user_ids: list[int]) -> set[int]:
    """Those of ``user_ids`` with a row on the chat's leaderboard (a game of theirs counted there)."""
    if not user_ids:
        return set()
    games = await records.redis.hmget(records.keys.board(chat_id), [board_field(u, BoardField.GAMES) for u in user_ids])
    return {user_id for user_id, count in zip(user_ids, games, strict=True) if count}


async def move_board(records: Records, old_chat_id: int, new_chat_id: int) -> int:
    """Add group ``old_chat_id``'s leaderboard to supergroup ``new_chat_id``'s, each row once
    (a script per round); returns the players moved."""
    redis, keys = records.redis, records.keys
    moved = 0
    for _ in range(MOVE_ROUNDS):
        users = sorted({field.rpartition(":")[0] for field in await redis.hkeys(keys.board(old_chat_id))})
        if not users:
            break
        script_keys = [keys.board(old_chat_id), keys.board(new_chat_id), *map(keys.boards_of, users)]
        await redis.eval(_MOVE_BOARD, len(script_keys), *script_keys, old_chat_id, new_chat_id, *users)
        moved += len(users)
    return moved


async def forget_user(records: Records, user_id: int) -> None:
    """Delete everything stored about ``user_id`` outside running games (through their own indexes)."""
    redis, keys = records.redis, records.keys
    boards = await redis.smembers(keys.boards_of(user_id))
    pipe = redis.pipeline(transaction=False)
    for chat in boards:
        pipe.hdel(keys.board(chat), *(board_field(user_id, field) for field in BoardField))
    for key in (keys.totals(user_id), keys.boards_of(user_id), keys.user(user_id), keys.user_games(user_id)):
        pipe.delete(key)  # one key a command: they live in several slots
    await pipe.execute()
    await records.forget_notify(user_id)
