"""Authority and strangers (issue 16, items 1–4 and 14) through the bot's real Application and
the Bot API emulator: who may take a seat, manage AI seats, press a button that acts for a
person, open a rematch, and get a game's record."""

from __future__ import annotations

import pytest

from tgbot import render
from tgbot.model import Status
from tests.tgbot.helpers import play_on
from tests.tgbot.live import cb, live_fixture

pytestmark = pytest.mark.e2e

DB = 12

live = live_fixture(DB)


def _people(emu, base, n=3):
    names = ("Аня", "Борис", "Вера", "Глеб", "Дина")
    return [emu.add_user(base + i, names[i]) for i in range(n)]


def _docs(emu, user):
    return [m for m in emu.chat_messages(user.id, from_bot=True) if m.document is not None]


async def test_record_only_after_the_end_and_once_per_player(live):
    emu = live.emu
    a, b, c = _people(emu, 1400)
    group = emu.add_group(-1001400, "Клуб", members=[a, b, c], admins=[a])
    gid = await live.open_game(group, [a, b, c])
    # the record button's data, sent on a running game's panel: no deal leaves the bot
    panel = live.panel(b, gid)
    ans = await (await b.tap(panel, f"d:{gid}", strict=False)).answer(15)
    await live.settle()
    assert ans["text"] == render.answer("record_not_yet", "ru") and _docs(emu, b) == []
    await play_on(live.store, gid)
    live.app.bot_data["svc"].syncer.request(gid)
    await live.settle()
    assert (await live.store.load(gid)).status is Status.OVER
    final = live.panel(b, gid)
    first = await (await b.tap(final, cb(final, "d:")[0])).answer(15)
    await live.settle()
    assert first["text"] == render.answer("record_sent", "ru") and len(_docs(emu, b)) == 1
    for _ in range(3):
        again = await (await b.tap(final, cb(final, "d:")[0])).answer(15)
        assert again["text"] == render.answer("record_again", "ru")
    await live.settle()
    assert len(_docs(emu, b)) == 1
    # a stranger's forged tap gets nothing either
    d = emu.add_user(1499, "Дина")
    await d.start_bot()
    await live.settle()
    ans = await (await d.tap(emu.last_message(d.id), f"d:{gid}", strict=False)).answer(15)
    await live.settle()
    assert ans["text"] == render.answer("not_seated", "ru") and _docs(emu, d) == []


async def test_only_creator_or_admin_add_and_remove_ai_seats(live):
    emu = live.emu
    a, b, c, d = _people(emu, 1410, 4)  # a creates, d is the chat's admin, b and c members
    group = emu.add_group(-1001410, "Клуб", members=[a, b, c], admins=[d])
    gid = await live.open_game(group, [a], start=False)
    lobby = emu.last_message(group.id, lambda m: cb(m, "a:"))
    before = await live.store.load(gid)
    # a member who does not run the lobby: five /add_bot and five taps change nothing
    for _ in range(5):
        await b.send(group, "/add_bot")
        ans = await (await b.tap(lobby, cb(lobby, "a:")[0])).answer(15)
        assert ans["text"] == render.answer("not_allowed", "ru")
    await live.settle()
    assert (await live.store.load(gid)).seats == before.seats
    assert emu.last_message(group.id, lambda m: (m.text or "") == render.answer("not_allowed", "ru")) is not None
    # the creator adds two, a chat admin one
    await a.send(group, "/add_bot")
    await (await a.tap(lobby, cb(lobby, "a:")[0])).answer(15)
    await d.send(group, "/add_bot")
    await live.settle()
    t = await live.store.load(gid)
    assert [s.bot is not None for s in t.seats] == [False, True, True, True]
    # a member can't take them out, the admin can
    lobby = emu.last_message(group.id, lambda m: cb(m, "m:"))
    ans = await (await c.tap(lobby, cb(lobby, "m:")[0])).answer(15)
    await live.settle()
    assert ans["text"] == render.answer("not_allowed", "ru") and len((await live.store.load(gid)).seats) == 4
    await (await d.tap(lobby, cb(lobby, "m:")[0])).answer(15)
    await live.settle()
    assert len((await live.store.load(gid)).seats) == 3
    # the sixth seat still starts the game by itself
    for _ in range(3):
        await a.send(group, "/add_bot")
        await live.settle()
    assert (await live.store.load(gid)).status is Status.PLAYING
