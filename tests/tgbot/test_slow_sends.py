"""Slow answers to sends (issue 25): Telegram holds a bot's message up to about 10 s in a group in
slow mode, and may deliver a message but answer too late. A send is never repeated blindly: the
group never gets the same showdown twice, and no player ever has two live turn panels."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from tests.fakes.botapi import SimChat, SimUser
from tests.redis_server import RedisServer
from tests.tgbot.live import Live, cb, running
from tgbot.sync import messages

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def own_redis():
    server = RedisServer()
    yield server
    server.stop()


@pytest.fixture
async def bot(own_redis):
    async with running(own_redis.url) as live:
        yield live


async def opened(bot: Live, group: SimChat, people: list[SimUser]) -> str:
    """A game of three in which the first player played a card. Returns its id."""
    gid = await bot.open_game(group, people)
    await bot.play_one(gid, {user.id: user for user in people})
    return gid


async def challenge(bot: Live, gid: str, people: list[SimUser]) -> None:
    """The player on turn challenges the card played: a showdown, then a turn panel for whoever
    plays next."""
    table = await bot.store.load(gid)
    challenger = next(user for user in people if user.id == table.seats[table.state.current].user_id)
    panel = bot.panel(challenger, gid)
    await (await challenger.tap(panel, cb(panel, "c:")[0])).answer(15)
    await asyncio.wait_for(bot.settle(timeout=40), 40)  # (a send repeated after each timeout never settles)


def assert_sent_once(bot: Live, group: SimChat, people: list[SimUser]) -> None:
    """No message posted twice in the group, at most one live turn panel per player."""
    posted = Counter(m.text for m in bot.emu.chat_messages(group.id, from_bot=True))
    assert [text for text, n in posted.items() if n > 1] == []
    for user in people:
        turns = [m for m in bot.emu.chat_messages(user.id, from_bot=True) if cb(m, "k:")]
        assert len(turns) <= 1, [m.text for m in turns]
    assert bot.emu.violations == []


async def test_a_message_held_in_slow_mode_or_answered_late_is_sent_once(bot):
    emu = bot.emu
    people = [emu.add_user(2500 + i, name) for i, name in enumerate(("Аня", "Борис", "Вера"))]
    group = emu.add_group(-2500, "Клуб", members=people, admins=[people[0]])
    gid = await opened(bot, group, people)
    group.slow_mode_delay = 7.0  # longer than PTB's default read timeout (5 s)
    # private messages delivered at once, answered after 6 s (longer than PTB's default too)
    emu.late = lambda method, raw: 6.0 if method == "sendMessage" and int(raw["chat_id"]) > 0 else 0.0
    await people[0].send(group, "/board")  # (a board posted now: the showdown is held 7 s)
    await bot.settle()
    before = len(emu.chat_messages(group.id, from_bot=True))
    await challenge(bot, gid, people)
    assert len(emu.chat_messages(group.id, from_bot=True)) > before  # (the showdown)
    assert_sent_once(bot, group, people)


async def test_a_send_answered_after_the_read_timeout_is_taken_as_sent(bot, monkeypatch):
    emu = bot.emu
    people = [emu.add_user(2510 + i, name) for i, name in enumerate(("Аня", "Борис", "Вера"))]
    group = emu.add_group(-2510, "Клуб", members=people, admins=[people[0]])
    gid = await opened(bot, group, people)
    read_timeout = messages.SEND_READ_TIMEOUT
    monkeypatch.setattr(messages, "SEND_READ_TIMEOUT", 0.5)
    late = [True]
    emu.late = lambda method, raw: 1.0 if late[0] and method == "sendMessage" else 0.0
    before = len(emu.chat_messages(group.id, from_bot=True))
    await challenge(bot, gid, people)
    assert len(emu.chat_messages(group.id, from_bot=True)) > before  # (the showdown)
    assert_sent_once(bot, group, people)
    late[0] = False  # the game goes on from the panels kept
    monkeypatch.setattr(messages, "SEND_READ_TIMEOUT", read_timeout)  # (a loaded machine's edits take over 0.5 s too)
    await bot.play_one(gid, {user.id: user for user in people})
    assert_sent_once(bot, group, people)


async def test_the_panel_kept_beside_a_turn_panel_maybe_sent_offers_no_action(bot, monkeypatch):
    # a stale tap on the panel kept (its redraw) gives it no actions: the newer one below has them
    emu = bot.emu
    people = [emu.add_user(2520 + i, name) for i, name in enumerate(("Аня", "Борис", "Вера"))]
    group = emu.add_group(-2520, "Клуб", members=people, admins=[people[0]])
    gid = await opened(bot, group, people)
    table = await bot.store.load(gid)
    on_turn = next(user for user in people if user.id == table.seats[table.state.current].user_id)
    stale_pick = cb(bot.panel(on_turn, gid), "k:")[0]["callback_data"]
    monkeypatch.setattr(messages, "SEND_READ_TIMEOUT", 0.5)
    emu.late = lambda method, raw: 1.0 if method == "sendMessage" else 0.0
    await challenge(bot, gid, people)
    emu.late = lambda method, raw: 0.0
    table = await bot.store.load(gid)
    player = next(user for user in people if user.id == table.seats[table.state.current].user_id)
    panels = [
        m
        for m in emu.chat_messages(player.id, from_bot=True)
        if any(gid in b.get("callback_data", "") for b in m.flat_buttons)
    ]
    kept = panels[-2]  # the newest is the turn panel whose answer came too late
    assert [b["callback_data"][:2] for b in kept.flat_buttons] == ["r:"]  # «Refresh» only
    await (await player.tap(kept, stale_pick, strict=False)).answer(15)
    await asyncio.wait_for(bot.settle(timeout=40), 40)
    assert_sent_once(bot, group, people)
