"""Write ``b5f3182_keys.json``: every ``cheat:*`` key as b5f3182 (``main`` before the per-bot
prefix and the schema versions) stored them, for ``tests/tgbot/test_migrate.py``.

Run ONCE, on a checkout of b5f3182 (the data must come from that code, not from today's):

    git worktree add /tmp/b5f3182 b5f3182
    mkdir -p /tmp/b5f3182/tests/tgbot/data
    cp tests/tgbot/data/*.py /tmp/b5f3182/tests/tgbot/data/
    cd /tmp/b5f3182 && python -m tests.tgbot.data.make_b5f3182_fixture <this repo>/tests/tgbot/data/b5f3182_keys.json

It plays through b5f3182's own :class:`tgbot.owner.store.Store` and :mod:`tgbot.storage.stats` on a private
``redis-server`` (tests/redis_server.py; fakeredis when none is installed): a lobby in group
-100 that 3 players join and start, then 4 moves (a live game: table, deal, log, outbox, tg
bookkeeping, tap de-duplication, the chat, live, deadline and user indexes); a second game in
group -200 (a forum topic) played to its end and counted (statistics, leaderboard, the 7-day
TTL of a finished game); the group's settings and turn timer, a user's language and
reachability, a lobby notification and a processed non-tap update (24 h TTL). The live game's
table as stored is also written, under ``"tables"``, for the test to compare.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import fakeredis
from redis.asyncio import Redis

import core
from tests.redis_server import RedisServer
from tests.tgbot.data.keydump import dump_keys
from tests.tgbot.helpers import NAMES, ai_players
from tgbot.game import play
from tgbot.game.lobby import join, open_lobby, start
from tgbot.game.table import Change, Seat, Status, Table
from tgbot.storage import stats
from tgbot.owner.store import Store

LIVE, DONE = "AbC123xy", "Fin-1_sh"  # the games' ids (game_id_for_update's alphabet)
NOW = 1_760_000_000.0
PLAYERS = NAMES[:3]


async def _play(store: Store, gid: str, moves: int | None) -> Table:
    """``moves`` actions of AI players (or to the end), each a transaction and a tap."""
    t = await store.load(gid)
    assert t is not None and t.state is not None
    players = ai_players(len(t.seats), 7)
    done = 0
    while t.status is Status.PLAYING and (moves is None or done < moves):
        assert t.state is not None
        seat = t.state.current
        assert seat is not None
        action = players[seat].act(core.view(t.state, seat))
        uid = t.seats[seat].user_id

        def move(cur: Table, uid: int = uid, action: core.Action = action) -> Change:
            return play.act(cur, uid, cur.action_count, action, NOW + 5 * cur.action_count)

        await store.first_delivery(9000 + t.action_count, gid)
        await store.transact(gid, move)
        t = await store.load(gid)
        assert t is not None
        done += 1
    return t


async def _game(store: Store, gid: str, chat: int, thread: int | None, first_user: int, moves: int | None) -> Table:
    lobby = open_lobby(gid, chat, thread, first_user, f"Group {chat}", NOW, 900.0)
    assert await store.create(lobby) and await store.claim_chat(chat, thread, gid)
    for i, name in enumerate(PLAYERS):
        seat = Seat(first_user + i, name)
        await store.transact(gid, lambda t, seat=seat: join(t, seat, NOW, 900.0))  # type: ignore[misc]
    await store.transact(gid, lambda t: start(t, first_user, False, 11, now=NOW, turn_timeout=60.0))
    return await _play(store, gid, moves)


async def build(store: Store) -> None:
    """The data described in the module docstring, through b5f3182's own code."""
    await store.records.set_chat_settings(-100, lang="en", variant="russian", seating="shuffle")
    await store.records.set_chat_turn_timeout(-100, 60)
    await store.records.set_user_lang(101, "en")
    for uid in (101, 102, 103):
        await store.records.set_dm(uid, uid != 103)
    assert await stats.want_notify(store, -100, 104)
    assert await store.first_delivery(777)  # a processed command (not a tap)
    done = await _game(store, DONE, -200, 5, 201, None)
    assert done.status is Status.OVER and await stats.count_game(store, done)
    live = await _game(store, LIVE, -100, None, 101, 4)
    assert live.status is Status.PLAYING
    await store.records.tg_set(LIVE, group_msg=4242, panel_0="31:abc")


async def main(out: Path) -> None:
    server = None
    try:
        server = RedisServer()
        redis: Redis = Redis.from_url(server.url, decode_responses=True)
    except RuntimeError:
        redis = fakeredis.FakeAsyncRedis(decode_responses=True)
    try:
        await redis.flushdb()
        store = Store(redis)
        await build(store)
        keys = await dump_keys(redis, "cheat:*")
        tables = {gid: await redis.hget(store.k_game(gid), "t") for gid in (LIVE, DONE)}
        await redis.aclose()
    finally:
        if server is not None:
            server.stop()
    if any("schema" in json.loads(raw) for raw in tables.values() if raw):
        raise SystemExit("this code stores tables with a schema: run the script on b5f3182 (see its docstring)")
    data = {"source": "b5f3182", "games": {"live": LIVE, "finished": DONE}, "tables": tables, "keys": keys}
    out.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(keys)} keys written to {out}")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("b5f3182_keys.json"))))
