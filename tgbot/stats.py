"""Players' statistics, chat leaderboards, lobby notifications and forgetting a user (Redis).

Figures come from :func:`core.stats.game_stats` on the game's record (deal + log, see
:meth:`tgbot.store.Store.record`), never re-derived here. Keys (outside the games' slots):

- ``cheat:stats:counted``        set: ids of the games already counted (exactly once)
- ``cheat:stats:<user>``         hash: the user's totals (:data:`FIELDS`, ``place<n>`` counts)
- ``cheat:stats:<user>:chats``   set: chats whose leaderboard lists the user (for /forget_me)
- ``cheat:top:<chat>``           hash: ``<user>:g`` games, ``<user>:w`` wins, ``<user>:n`` name
- ``cheat:notify:<chat>``        set: users to tell privately when the chat's next lobby opens

When: a finished game is counted by the group lane of :mod:`tgbot.sync` once its end has been
shown (the live set keeps an ended game until then, so a restart or a second process picks it
up again); one Lua script adds the game id to the counted set and, only if it was new, adds
every figure, so a game is counted once even when two processes or a restart sync it twice.
People only (bots have negative ids); games without result (stopped, abandoned, bot removed)
never count.
"""

from __future__ import annotations

from dataclasses import dataclass, fields as dataclass_fields


from core.cards import Hand
from core.record import Record, action_from_dict
from core.stats import SeatStats, game_stats

from .model import Status, Table
from .store import Store

__all__ = ["FIELDS", "Totals", "record_of_game", "game_figures", "count_game", "totals", "top", "forget_user", "want_notify", "take_notify", "MIN_TOP_GAMES", "RECORD_FILE"]

#: The per-user counters (hash fields of ``cheat:stats:<user>``).
#: Games a player needs to be listed by /top.
MIN_TOP_GAMES = 3
#: The record file's name sent to a player (``cheat-record/1`` JSON).
RECORD_FILE = "cheat-{gid}.json"
#: Entries shown by /top.
TOP_SIZE = 10

# KEYS[1]: the counted set. ARGV: gid, chat, key prefix, F (number of fields), the F field
# names, then per person: user id, name, place, the F values (FIELDS order; "wins" is one of them).
_COUNT = """
if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
local chat, prefix, f = ARGV[2], ARGV[3], tonumber(ARGV[4])
local top = prefix .. ':top:' .. chat
local i = 5 + f
while i <= #ARGV do
  local uid = ARGV[i]
  local user = prefix .. ':stats:' .. uid
  redis.call('HINCRBY', user, 'place' .. ARGV[i + 2], 1)
  for j = 1, f do
    local name = ARGV[4 + j]
    local value = tonumber(ARGV[i + 2 + j])
    if value ~= 0 then redis.call('HINCRBY', user, name, value) end
    if name == 'wins' then redis.call('HINCRBY', top, uid .. ':w', value) end
  end
  redis.call('SADD', user .. ':chats', chat)
  redis.call('HINCRBY', top, uid .. ':g', 1)
  redis.call('HSET', top, uid .. ':n', ARGV[i + 1])
  i = i + 3 + f
end
return 1
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
    """Add a finished game's figures to its people's totals and the chat's leaderboard, once
    (see the module docstring). False when it does not count or was already counted."""
    if table.status is not Status.OVER or table.ended != "finished":
        return False
    figures = await game_figures(store, table)
    if figures is None:
        return False
    args: list[str] = [table.id, str(table.chat_id), store.p, str(len(FIELDS)), *FIELDS]
    for i, seat in enumerate(table.seats):
        if not seat.human or seat.user_id <= 0:
            continue
        f = figures[i]
        values = {**{k: getattr(f, k) for k in FIELDS if hasattr(f, k)}, "games": 1, "wins": int(f.won), "draws": int(f.draw), "place_sum": f.place}
        args += [str(seat.user_id), seat.name, str(f.place)] + [str(int(values[k])) for k in FIELDS]
    return bool(await store.redis.eval(_COUNT, 1, f"{store.p}:stats:counted", *args))


async def totals(store: Store, user_id: int) -> tuple[Totals, dict[int, int]]:
    """The user's totals and their count of each place (place → games)."""
    raw = await store.redis.hgetall(f"{store.p}:stats:{user_id}")
    values = {k: int(raw.get(k, 0)) for k in FIELDS}
    places = {int(k[5:]): int(v) for k, v in raw.items() if k.startswith("place") and k[5:].isdigit()}
    return Totals(**values), places


async def top(store: Store, chat_id: int, limit: int = TOP_SIZE) -> list[tuple[int, str, int, int]]:
    """The chat's leaderboard: (user id, name, wins, games) of the players with at least
    :data:`MIN_TOP_GAMES` games, most wins first (then fewer games, then the id)."""
    raw = await store.redis.hgetall(f"{store.p}:top:{chat_id}")
    rows: dict[int, dict[str, str]] = {}
    for key, value in raw.items():
        uid, _, field = key.rpartition(":")
        try:
            rows.setdefault(int(uid), {})[field] = value
        except ValueError:
            continue
    out = [(uid, r.get("n", ""), int(r.get("w", 0)), int(r.get("g", 0))) for uid, r in rows.items()]
    out = [row for row in out if row[3] >= MIN_TOP_GAMES]
    out.sort(key=lambda r: (-r[2], r[3], r[0]))
    return out[:limit]


async def forget_user(store: Store, user_id: int) -> None:
    """Delete everything stored about ``user_id`` outside running games: totals, leaderboard
    entries, the user hash (reachability, language), the games index and lobby notifications."""
    chats = await store.redis.smembers(f"{store.p}:stats:{user_id}:chats")
    pipe = store.redis.pipeline(transaction=False)
    for chat in chats:
        pipe.hdel(f"{store.p}:top:{chat}", *(f"{user_id}:{f}" for f in ("g", "w", "n")))
    pipe.delete(f"{store.p}:stats:{user_id}", f"{store.p}:stats:{user_id}:chats", store.k_user(user_id), store.k_user_games(user_id))
    await pipe.execute()
    async for key in store.redis.scan_iter(match=f"{store.p}:notify:*", count=200):
        await store.redis.srem(key, user_id)


async def want_notify(store: Store, chat_id: int, user_id: int) -> bool:
    """Ask to be told when the chat's next lobby opens; False if already asked."""
    return bool(await store.redis.sadd(f"{store.p}:notify:{chat_id}", user_id))


_TAKE = """
local members = redis.call('SMEMBERS', KEYS[1])
redis.call('DEL', KEYS[1])
return members
"""


async def take_notify(store: Store, chat_id: int) -> list[int]:
    """Take (and clear, atomically) the users to tell that a lobby opened in the chat: each
    is told at most once."""
    return sorted(int(x) for x in await store.redis.eval(_TAKE, 1, f"{store.p}:notify:{chat_id}"))
