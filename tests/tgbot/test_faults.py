"""Telegram as it really is: faults, limits and hostile input never break a game.

Each fault class is driven through the Bot API emulator (tests/fakes/botapi.py) against the
bot's real Application (in-process, :mod:`tests.tgbot.live`) and a private redis-server.
"""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from tgbot import render
from tgbot.model import Status
from tests.fakes.botapi import BotAPIEmulator
from tests.tgbot.live import Live, cb

pytestmark = pytest.mark.e2e

DB = 9


@pytest.fixture
async def live(redis_server):
    url = redis_server.url.replace("/0", f"/{DB}")
    redis = Redis.from_url(url, decode_responses=True)
    await redis.flushdb()
    emu = BotAPIEmulator(group_window=2.0)
    await emu.start()
    bot = Live(emu, url)
    await bot.start()
    try:
        yield bot
    finally:
        await bot.stop()
        await emu.stop()
        await redis.flushdb()
        await redis.aclose()


def _people(emu, base=700, names=("Аня", "Борис", "Вера", "Глеб")):
    return [emu.add_user(base + i, n) for i, n in enumerate(names)]


def _group_texts(emu, group_id):
    return [m.text or "" for m in emu.chat_messages(group_id, from_bot=True)]


# -- 1. private chat unreachable ----------------------------------------------------------


async def test_blocked_player_told_once_rest_served_panel_back_on_start(live):
    emu = live.emu
    a, b, c, d = _people(emu)
    group = emu.add_group(-3001, "Клуб", members=[a, b, c, d], admins=[a])
    gid = await live.open_game(group, [a, b, c])
    users = {u.id: u for u in (a, b, c)}
    table = await live.store.load(gid)
    victim = users[table.seats[(table.state.current + 1) % 3].user_id]
    # blocked with the my_chat_member update lost: only the 403 tells the bot
    victim.blocked = True
    for _ in range(3):
        await live.play_one(gid, users) if (await live.store.load(gid)).seats[(await live.store.load(gid)).state.current].user_id != victim.id else None
        t = await live.store.load(gid)
        if t.seats[t.state.current].user_id == victim.id:
            break
    await live.settle()
    notes = [t for t in _group_texts(emu, group.id) if "Start" in t and victim.first_name in t]
    assert len(notes) == 1
    assert any(e["error_code"] == 403 and "blocked by the user" in e["description"] for e in emu.errors)
    assert not await live.store.can_dm(victim.id)
    # more syncs: still told once, no more 403s to the victim
    n403 = sum(1 for e in emu.errors if e["error_code"] == 403)
    live.app.bot_data["svc"].syncer.request(gid)
    await live.settle()
    assert len([t for t in _group_texts(emu, group.id) if "Start" in t and victim.first_name in t]) == 1
    assert sum(1 for e in emu.errors if e["error_code"] == 403) == n403
    # the others keep their panels
    for u in users.values():
        if u is not victim:
            assert live.panel(u, gid) is not None
    # /start again: the panel comes back, with its buttons when it is their turn
    before = len(emu.chat_messages(victim.id, from_bot=True))
    await victim.start_bot()
    await live.settle()
    p = await emu.wait_for(lambda: live.panel(victim, gid), timeout=10)
    assert len(emu.chat_messages(victim.id, from_bot=True)) > before and p.message_id > 0
    assert await live.store.can_dm(victim.id)
    assert emu.violations == []


async def test_block_via_my_chat_member_and_unblock(live):
    emu = live.emu
    a, b, c, _ = _people(emu, 710)
    group = emu.add_group(-3002, "Клуб", members=[a, b, c], admins=[a])
    gid = await live.open_game(group, [a, b, c])
    users = {u.id: u for u in (a, b, c)}
    b.block_bot()  # my_chat_member: member -> kicked in private
    await live.settle()
    assert not await live.store.can_dm(b.id)
    notes = [t for t in _group_texts(emu, group.id) if b.first_name in t and "Start" in t]
    assert len(notes) == 1
    assert [g.id for g in await live.store.user_games(b.id)] == [gid]
    # the game goes on for the others
    await live.play_one(gid, users) if (await live.store.load(gid)).seats[(await live.store.load(gid)).state.current].user_id != b.id else None
    await b.start_bot()  # my_chat_member back to member, then /start
    await live.settle()
    assert await live.store.can_dm(b.id)
    assert live.panel(b, gid) is not None
    assert emu.violations == []
