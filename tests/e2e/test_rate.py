"""Telegram's message limits through the real bot process: no 429 from the emulator, at scaled
limits for whole games (a six-player game beside a four-player one) and at Telegram's real
limit (20 a minute per group) for a burst of lobby taps, whose board still ends showing the
newest state."""

from __future__ import annotations

import asyncio
import random

import pytest
from redis.asyncio import Redis

from tests.e2e.harness import BotProcess, Table
from tests.e2e.test_full_game import open_table, play_out
from tests.fakes.botapi import BotAPIEmulator
from tgbot.game.table import Table as Table_
from tgbot.sync.ratelimit import counted

pytestmark = pytest.mark.e2e


def group_calls(emu: BotAPIEmulator, chat_id: int) -> list[dict]:
    """The counted (send/edit) calls the bot made to one chat."""
    return [c for c in emu.calls if c["chat_id"] == chat_id and counted(c["method"])]


async def plays_of(redis: Redis) -> dict[int, int]:
    """chat id -> number of actions (plays, challenges, beliefs: log entries) of the games here."""
    out = {}
    async for key in redis.scan_iter("cheat:*:{g*}:game"):
        table = Table_.from_json(await redis.hget(key, "table"))
        log = await redis.lrange(key.replace(":game", ":log"), 0, -1)
        out[table.chat_id] = len(log)
    return out


async def test_six_and_four_player_games_in_parallel_no_429(redis_server, tmp_path):
    url = redis_server.url.replace("/0", "/7")
    redis = Redis.from_url(url, decode_responses=True)
    await redis.flushdb()
    emu = BotAPIEmulator(group_window=6.0)
    await emu.start()
    bot = BotProcess(emu, url, tmp_path / "bot.log")
    bot.start()
    try:
        (g6, u6), (g4, u4) = await asyncio.gather(open_table(emu, 6, chat_id=-1011), open_table(emu, 4, chat_id=-1012))
        t6, t4 = Table(emu, g6, u6, random.Random(3)), Table(emu, g4, u4, random.Random(4))
        await asyncio.gather(play_out(t6), play_out(t4))
        assert t6.finished() and t4.finished(), bot.log()[-3000:]
        assert t6.unanswered == [] and t4.unanswered == []
        assert [e for e in emu.errors if e["error_code"] == 429] == []
        assert emu.errors == [], emu.errors[:3]
        plays = await plays_of(redis)
        for g in (g6, g4):
            calls = group_calls(emu, g.id)
            print(
                f"group {g.id}: {len(calls)} group calls for {plays.get(g.id)} plays "
                f"= {len(calls) / max(1, plays.get(g.id, 1)):.2f} per play"
            )
            assert plays.get(g.id, 0) > 0
    finally:
        bot.stop()
        await emu.stop()
        await redis.flushdb()
        await redis.aclose()


async def test_burst_of_lobby_taps_at_real_limits(redis_server, tmp_path):
    """Telegram's real limit, 20 messages a minute per group: 40 join/leave taps in a few
    seconds give no 429, and the lobby ends showing exactly who is seated."""
    url = redis_server.url.replace("/0", "/8")
    emu = BotAPIEmulator()  # 20 per 60 s per group, 30 per 1 s overall
    await emu.start()
    bot = BotProcess(emu, url, tmp_path / "bot.log")
    bot.start()
    try:
        users = [emu.add_user(7000 + i, n) for i, n in enumerate(["Аня", "Борис", "Вера", "Глеб", "Даша"])]
        group = emu.add_group(-1013, "Клуб", members=users, admins=users[:1])
        for u in users:
            await u.start_bot(answered=True)  # the creator is seated only once the bot may write to them
        await users[0].send(group, "/start_game")
        lobby = await emu.wait_message(
            group.id, lambda m: m.from_bot and any(b.get("text") == "Играю" for b in m.flat_buttons), timeout=30
        )
        rng = random.Random(5)
        seated = {users[0].id}
        taps = []
        for _ in range(40):
            u = rng.choice(users[1:])
            label = "Выйти" if u.id in seated else "Играю"
            if not any(b.get("text") == label for b in lobby.flat_buttons):
                continue
            taps.append(await u.tap(lobby, label))
            seated ^= {u.id}
        for t in taps:
            await t.answer(15)
        names = {u.id: u.first_name for u in users}

        def shows_newest():
            text = emu._msg(group.id, lobby.message_id).text or ""
            return all((names[i] in text) == (i in seated) for i in names)

        await emu.wait_for(shows_newest, timeout=90)
        calls = group_calls(emu, group.id)
        print(f"burst: {len(taps)} taps -> {len(calls)} group calls")
        assert [e for e in emu.errors if e["error_code"] == 429] == []
        times = [c["time"] for c in calls]
        assert max(sum(1 for u in times if t <= u < t + 60) for t in times) <= 20
        assert len(calls) < len(taps)  # coalesced: fewer board edits than taps
    finally:
        bot.stop()
        await emu.stop()
