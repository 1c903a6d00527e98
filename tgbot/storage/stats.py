"""Players' statistics, chat leaderboards, lobby notifications and forgetting a user (Redis).

Figures come from :func:`core.stats.game_stats` on the game's record (deal + log, see
:meth:`tgbot.owner.store.Store.record`), never re-derived here. Keys (outside the games' slots; a
user's keys share the hash tag ``{u<user>}``, a chat's ``{c<chat>}``, so each group of them
lives in one Redis Cluster slot; the rate limiter's group window shares the chat's):

- ``cheat:stats:{u<user>}``          hash: the user's totals (:data:`FIELDS`, ``place<n>`` counts)
- ``cheat:stats:{u<user>}:chats``    set: chats whose leaderboard lists the user (for /forget_me)
- ``cheat:stats:{u<user>}:counted``  sorted set: game id → ms (epoch) it was added to the totals
- ``cheat:top:{c<chat>}``            hash: ``<user>:g`` games, ``<user>:w`` wins, ``<user>:n`` name
- ``cheat:top:{c<chat>}:counted``    sorted set: game id → ms (epoch) it was added to the board
- ``cheat:top:{c<chat>}:handoff``    hash, and ``…:handoff:counted``: a board (and its counted set)
  on its way to the supergroup the chat became (:func:`move_board`); field ``~batch`` names it
- ``cheat:notify:<chat>``            set: users to tell privately when the chat's next lobby opens
- ``cheat:user:<user>:notify``       set: the chats where the user asked so (for /forget_me)
- the game's own hash ``cheat:{g<id>}:game``, field ``counted``: the whole game was counted.

When: a finished game is counted by the group lane of :mod:`tgbot.views.sync` once its end has been
shown (the live set keeps an ended game until then, so a restart or a second process picks it
up again, and counts it again if the first one died midway). Exactly once, with every step on
one slot: one Lua script per person adds the game to their totals only if its id is not yet in
their ``counted`` set (and puts it there in the same step), one script does the same for the
chat's leaderboard, and only once every one of them has answered is the game marked counted.
A retry after a crash midway redoes only the steps that had not run; two processes counting at
once add each figure once. A game id stays in the ``counted`` sets for :data:`COUNTED_KEEP`
seconds, far longer than a retry can come (the game's own keys, without which nothing is
counted, go after :data:`tgbot.owner.store.FINISHED_TTL`). People only (bots have negative ids);
games without result (stopped, abandoned, bot removed) never count. A game of a group that has
become a supergroup counts on the supergroup's board (:meth:`tgbot.owner.store.Store.chat_moved_to`).

**A group upgraded to a supergroup** (:mod:`tgbot.storage.chatmove`): :func:`move_board` adds the old
board to the new chat's once (the figures add up; a name the new board has is kept), and
:func:`move_notify` moves the lobby notifications and each asker's index entry.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, fields as dataclass_fields


from core.cards import Hand
from core.record import Record, action_from_dict
from core.stats import SeatStats, game_stats

from tgbot.game.table import Status, Table
from tgbot.owner.store import Store

__all__ = ["FIELDS", "Totals", "record_of_game", "game_figures", "count_game", "totals", "top", "forget_user", "want_notify", "take_notify",
           "user_keys", "chat_keys", "handoff_keys", "move_board", "move_notify", "MIN_TOP_GAMES", "RECORD_FILE", "COUNTED_KEEP",
           "MOVE_ROUNDS"]

#: Games a player needs to be listed by /top.
MIN_TOP_GAMES = 3
#: The record file's name sent to a player (``cheat-record/1`` JSON).
RECORD_FILE = "cheat-{gid}.json"
#: Entries shown by /top.
TOP_SIZE = 10
#: Seconds a counted game's id is remembered by each player's and the chat's ``counted`` set
#: (30 days; a retry comes within the game's :data:`tgbot.owner.store.FINISHED_TTL`).
COUNTED_KEEP = 30 * 24 * 3600
#: Batches :func:`move_board` hands over at most in one call (a game counted on the old board
#: while the first batch moved makes a second; more never come: see :func:`move_board`).
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
_COUNT_PLAYER = _ONCE + """
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

# The chat's leaderboard ({c<chat>} slot). KEYS: 1 the board hash, 2 its counted set. ARGV: 1
# game id, 2 now (ms), 3 keep (ms), then per person: user id, name, wins (0/1). 1 added, 0
# already counted.
_COUNT_CHAT = _ONCE + """
if not once(KEYS[2]) then return 0 end
for i = 4, #ARGV, 3 do
  redis.call('HINCRBY', KEYS[1], ARGV[i] .. ':g', 1)
  redis.call('HINCRBY', KEYS[1], ARGV[i] .. ':w', ARGV[i + 2])
  redis.call('HSET', KEYS[1], ARGV[i] .. ':n', ARGV[i + 1])
end
return 1
"""


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
_MERGE_BOARD = _ONCE + """
if not once(KEYS[2]) then return 0 end
local last = 4 + 4 * tonumber(ARGV[4])
for i = 5, last, 4 do
  redis.call('HINCRBY', KEYS[1], ARGV[i] .. ':g', ARGV[i + 1])
  redis.call('HINCRBY', KEYS[1], ARGV[i] .. ':w', ARGV[i + 2])
  if ARGV[i + 3] ~= '' then redis.call('HSETNX', KEYS[1], ARGV[i] .. ':n', ARGV[i + 3]) end
end
local oldest = tonumber(ARGV[2]) - tonumber(ARGV[3])
for i = last + 1, #ARGV, 2 do
  if tonumber(ARGV[i + 1]) > oldest then redis.call('ZADD', KEYS[2], 'NX', ARGV[i + 1], ARGV[i]) end
end
return 1
"""

# Drop a handoff once its batch was added ({c<old>} slot). KEYS: 1 the handoff board, 2 its
# counted set. ARGV: 1 the batch id. 1 dropped, 0 not this batch's (already dropped).
_DROP_HANDOFF = """
if redis.call('HGET', KEYS[1], '~batch') == ARGV[1] then redis.call('DEL', KEYS[1], KEYS[2]) return 1 end
return 0
"""


def user_keys(store: Store, user_id: int) -> tuple[str, str, str]:
    """A user's statistics keys (one Cluster slot, ``{u<user>}``): their totals hash, the set of
    chats whose leaderboard lists them, and their counted games."""
    base = f"{store.p}:stats:{{u{user_id}}}"
    return base, base + ":chats", base + ":counted"


def chat_keys(store: Store, chat_id: int | str) -> tuple[str, str]:
    """A chat's leaderboard keys (one Cluster slot, ``{c<chat>}``, the slot of its rate
    window): the board hash and its counted games."""
    base = f"{store.p}:top:{{c{chat_id}}}"
    return base, base + ":counted"


def handoff_keys(store: Store, chat_id: int | str) -> tuple[str, str]:
    """Where a chat's board waits on its way to the supergroup the chat became (its own slot,
    ``{c<chat>}``): the handoff board hash and its counted set (:func:`move_board`)."""
    base = f"{store.p}:top:{{c{chat_id}}}:handoff"
    return base, base + ":counted"


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


def record_of_game(table: Table, deal: list[str] | None, log: list[dict], names: list[str] | None = None) -> Record | None:
    """The game's ``cheat-record/1`` record (deal and actions as stored; ``names`` as the
    ``players`` key when given), or ``None`` before the deal."""
    if deal is None:
        return None
    actions = tuple(action_from_dict(a, len(deal), i) for i, a in enumerate(log))
    return Record(table.variant, tuple(Hand.from_str(h) for h in deal), actions, players=tuple(names) if names else None, seed=table.seed)


async def game_figures(store: Store, table: Table) -> list[SeatStats] | None:
    """Each seat's figures in the game (:func:`core.stats.game_stats` on its stored record)."""
    deal, log = await store.record(table.id)
    record = record_of_game(table, deal, log)
    return game_stats(record) if record is not None else None


async def count_game(store: Store, table: Table) -> bool:
    """Add a finished game's figures to its people's totals and the chat's leaderboard, exactly
    once (see the module docstring for the steps and keys). True when this call marked the
    game counted; False when it does not count (not finished, no deal) or was counted already.
    Reads the game's record (:meth:`Store.record`). Raises what redis-py raises (a connection
    lost midway, …): the game is then not marked, and the next call finishes the count."""
    if table.status is not Status.OVER or table.ended != "finished":
        return False
    if await store.redis.hget(store.k_game(table.id), "counted"):
        return False
    figures = await game_figures(store, table)
    if figures is None:
        return False
    head = [table.id, str(int(time.time() * 1000)), str(COUNTED_KEEP * 1000)]
    chat_id = await store.chat_moved_to(table.chat_id) or table.chat_id  # a group since upgraded
    board: list[str] = []
    pipe = store.redis.pipeline(transaction=False)  # one script per slot, in any order
    for i, seat in enumerate(table.seats):
        if not seat.human or seat.user_id <= 0:
            continue
        f = figures[i]
        values = {**{k: getattr(f, k) for k in FIELDS if hasattr(f, k)}, "games": 1, "wins": int(f.won), "draws": int(f.draw), "place_sum": f.place}
        keys = user_keys(store, seat.user_id)
        pipe.eval(_COUNT_PLAYER, len(keys), *keys, *head, str(chat_id), str(f.place), str(len(FIELDS)), *FIELDS, *(str(int(values[k])) for k in FIELDS))
        board += [str(seat.user_id), seat.name, str(int(f.won))]
    if board:
        keys = chat_keys(store, chat_id)
        pipe.eval(_COUNT_CHAT, len(keys), *keys, *head, *board)
    await pipe.execute()
    # only now, every step having answered: a crash before this line leaves the game to count
    return bool(await store.redis.hsetnx(store.k_game(table.id), "counted", 1))


async def totals(store: Store, user_id: int) -> tuple[Totals, dict[int, int]]:
    """The user's totals and their count of each place (place → games), from the hash
    ``cheat:stats:{u<user>}`` (zeros when absent)."""
    raw = await store.redis.hgetall(user_keys(store, user_id)[0])
    values = {k: int(raw.get(k, 0)) for k in FIELDS}
    places = {int(k[5:]): int(v) for k, v in raw.items() if k.startswith("place") and k[5:].isdigit()}
    return Totals(**values), places


async def top(store: Store, chat_id: int, limit: int = TOP_SIZE) -> list[tuple[int, str, int, int]]:
    """The chat's leaderboard: (user id, name, wins, games) of the players with at least
    :data:`MIN_TOP_GAMES` games, most wins first (then fewer games, then the id), at most
    ``limit`` rows; from the hash ``cheat:top:{c<chat>}`` (fields not of the ``<user>:<x>``
    shape are skipped)."""
    rows = _board_rows(await store.redis.hgetall(chat_keys(store, chat_id)[0]))
    out = [(uid, r.get("n", ""), int(r.get("w", 0)), int(r.get("g", 0))) for uid, r in rows.items()]
    out = [row for row in out if row[3] >= MIN_TOP_GAMES]
    out.sort(key=lambda r: (-r[2], r[3], r[0]))
    return out[:limit]


def _board_rows(raw: dict[str, str]) -> dict[int, dict[str, str]]:
    """A board hash's fields ``<user>:<g|w|n>`` by user id, then letter (other fields skipped)."""
    rows: dict[int, dict[str, str]] = {}
    for key, value in raw.items():
        uid, _, field = key.rpartition(":")
        try:
            rows.setdefault(int(uid), {})[field] = value
        except ValueError:
            continue
    return rows


async def move_board(store: Store, old_chat_id: int, new_chat_id: int) -> int:
    """Add group ``old_chat_id``'s leaderboard to supergroup ``new_chat_id``'s, exactly once.

    Three steps, one slot each (so on a Redis Cluster too), each safe to run again: the old
    board is renamed to its handoff keys with a fresh batch id (:data:`_HANDOFF`); the new board
    adds the batch's games and wins, keeps the names it has, and takes the batch's counted
    game ids, unless the batch's guard id is already in its counted set (:data:`_MERGE_BOARD`,
    like a game's count); then the handoff is dropped. A crash between steps, a second run or
    two runs at once: the next run finds the handoff with the same batch id, the guard stops a
    second addition, and the drop finishes. Each player's index of boards (for /forget_me)
    names the new chat before the addition and forgets the old one before the drop. Games
    counted on the old board meanwhile come in a later batch. Returns the players moved."""
    moved = 0
    for _ in range(MOVE_ROUNDS):
        handed = await store.redis.eval(_HANDOFF, 4, *chat_keys(store, old_chat_id), *handoff_keys(store, old_chat_id), secrets.token_hex(6))
        if not handed:
            break
        batch, board, counted = handed
        rows = _board_rows(dict(zip(board[::2], board[1::2])))
        await _index_boards(store, rows, add=new_chat_id)
        flat = [x for uid, r in rows.items() for x in (str(uid), r.get("g", "0"), r.get("w", "0"), r.get("n", ""))]
        head = [f"moved:{old_chat_id}:{batch}", str(int(time.time() * 1000)), str(COUNTED_KEEP * 1000)]
        await store.redis.eval(_MERGE_BOARD, 2, *chat_keys(store, new_chat_id), *head, str(len(rows)), *flat, *counted)
        await _index_boards(store, rows, remove=old_chat_id)
        await store.redis.eval(_DROP_HANDOFF, 2, *handoff_keys(store, old_chat_id), batch)
        moved += len(rows)
    return moved


async def _index_boards(store: Store, rows: dict[int, dict[str, str]], add: int | None = None, remove: int | None = None) -> None:
    """Name chat ``add`` in (or forget chat ``remove`` from) the board index of each user of
    ``rows`` (``cheat:stats:{u<user>}:chats``, read by /forget_me)."""
    if not rows:
        return
    pipe = store.redis.pipeline(transaction=False)
    for uid in rows:
        key = user_keys(store, uid)[1]
        if add is not None:
            pipe.sadd(key, add)
        if remove is not None:
            pipe.srem(key, remove)
    await pipe.execute()


async def forget_user(store: Store, user_id: int) -> None:
    """Delete everything stored about ``user_id`` outside running games: totals, counted
    games, leaderboard entries, the user hash (reachability, language), the games index and
    lobby notifications (through the user's own index of them: nothing scans the keyspace)."""
    totals_key, chats_key, counted_key = user_keys(store, user_id)
    chats = await store.redis.smembers(chats_key)
    pipe = store.redis.pipeline(transaction=False)
    for chat in chats:
        pipe.hdel(chat_keys(store, chat)[0], *(f"{user_id}:{f}" for f in ("g", "w", "n")))
    for key in (totals_key, chats_key, counted_key, store.k_user(user_id), store.k_user_games(user_id)):
        pipe.delete(key)  # one key a command: they live in several slots
    await pipe.execute()
    asked = await store.redis.smembers(_notify_index(store, user_id))
    if asked:
        pipe = store.redis.pipeline(transaction=False)
        for chat in asked:
            pipe.srem(_notify_key(store, chat), user_id)
        pipe.delete(_notify_index(store, user_id))
        await pipe.execute()


def _notify_index(store: Store, user_id: int) -> str:
    """The chats where ``user_id`` asked for a lobby notification (for /forget_me, no scan)."""
    return f"{store.p}:user:{user_id}:notify"


def _notify_key(store: Store, chat_id: int | str) -> str:
    """The users to tell privately when chat ``chat_id``'s next lobby opens."""
    return f"{store.p}:notify:{chat_id}"


async def want_notify(store: Store, chat_id: int, user_id: int) -> bool:
    """Ask to be told when the chat's next lobby opens; False if already asked."""
    pipe = store.redis.pipeline(transaction=False)
    pipe.sadd(_notify_key(store, chat_id), user_id)
    pipe.sadd(_notify_index(store, user_id), chat_id)
    added, _ = await pipe.execute()
    return bool(added)


_TAKE = """
local members = redis.call('SMEMBERS', KEYS[1])
redis.call('DEL', KEYS[1])
return members
"""


async def take_notify(store: Store, chat_id: int) -> list[int]:
    """Take (and clear, atomically) the users to tell that a lobby opened in the chat: each
    is told at most once."""
    return sorted(int(x) for x in await store.redis.eval(_TAKE, 1, _notify_key(store, chat_id)))


async def move_notify(store: Store, old_chat_id: int, new_chat_id: int) -> int:
    """Move the lobby notifications asked in group ``old_chat_id`` to supergroup
    ``new_chat_id`` (joining those asked there already), with each asker's index entry (for
    /forget_me). Copies first, then removes exactly the users copied from the old set, so a
    crash midway or a second run loses and repeats nothing, and a request that comes to the old
    set meanwhile waits there for the next run. Returns the users moved."""
    users = await store.redis.smembers(_notify_key(store, old_chat_id))
    if not users:
        return 0
    pipe = store.redis.pipeline(transaction=False)
    pipe.sadd(_notify_key(store, new_chat_id), *users)
    for user_id in users:
        pipe.sadd(_notify_index(store, user_id), new_chat_id)
    await pipe.execute()
    pipe = store.redis.pipeline(transaction=False)
    for user_id in users:
        pipe.srem(_notify_index(store, user_id), old_chat_id)
    pipe.srem(_notify_key(store, old_chat_id), *users)
    await pipe.execute()
    return len(users)
