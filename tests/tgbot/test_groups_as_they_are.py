"""Groups as they really are (issue 26, items 5–9 and 11), through the bot's real Application and
the Bot API emulator: channel personas, a join link that arrives as a bare /start, equal names,
games longer than Telegram's 48-hour delete window, long rounds, and the residuals (the store's
locks, a transient private error, /stats on a channel's forward, a language chosen on a message
the bot can no longer see)."""

from __future__ import annotations

import gc
from dataclasses import replace

import pytest

import core

from tests.fakes.spec import ApiError
from tests.tgbot.helpers import ai_players, lobby as make_lobby, play_on, play_through, started
from tests.tgbot.live import Live, cb, live_fixture
from tgbot.game.table import Status
from tgbot.i18n import translator
from tgbot.render import board as board_module, limits, text
from tgbot.render.board import board as board_view
from tgbot.render.announcements import note
from tgbot.render.menus import private_hint
from tgbot.render.text import AI_MARK, seat_names

pytestmark = pytest.mark.e2e

DB = 5

live = live_fixture(DB)

NAMES = ("Аня", "Борис", "Вера", "Глеб", "Дина")


def _people(emu, base: int, count: int, names=NAMES):
    return [emu.add_user(base + i, names[i]) for i in range(count)]


async def _three_playing(live: Live, base: int):
    """Three people (the first the group's admin) playing in a new group: (people, users by id,
    group, game id)."""
    people = _people(live.emu, base, 3)
    group = live.emu.add_group(-1000000 - base, "Клуб", members=people, admins=people[:1])
    return people, {u.id: u for u in people}, group, await live.open_game(group, people)


def _texts(emu, chat_id: int, since: int = 0) -> list[str]:
    return [m.text or "" for m in emu.chat_messages(chat_id, from_bot=True) if m.message_id > since]


def _last_id(emu, chat_id: int) -> int:
    return max((m.message_id for m in emu.chat_messages(chat_id)), default=0)


# -- item 5: a channel persona opens no lobby ---------------------------------------------------


async def test_a_channel_persona_opens_no_lobby_an_anonymous_admin_still_does(live: Live):
    emu = live.emu
    (a,) = _people(emu, 2600, 1)
    group = emu.add_group(-1002600, "Клуб", members=[a], admins=[a], supergroup=True)
    channel = emu.add_channel(-1002699, "Канал Ани")
    await emu.send_as_channel(a, group, channel, "/start_game")
    await live.settle()
    assert await live.store.chat_game(group.id, None) is None
    assert note("as_channel", "ru") in _texts(emu, group.id)
    # an anonymous admin still opens one (its creator: any admin)
    await emu.send_as_anonymous_admin(group, "/start_game")
    await live.settle()
    table = await live.store.chat_game(group.id, None)
    assert table is not None and table.creator == 0


# -- item 11: residuals ---------------------------------------------------------------------------


async def test_stats_on_a_channels_automatic_forward_is_the_askers_own(live: Live):
    emu = live.emu
    (a,) = _people(emu, 2610, 1)
    group = emu.add_group(-1002610, "Клуб", members=[a], supergroup=True)
    channel = emu.add_channel(-1002619, "Новости клуба")
    post = emu.forward_from_channel(group, channel, "Сегодня играем!")
    since = _last_id(emu, group.id)
    await a.send(group, "/stats", reply_to=post)
    await live.settle()
    replies = _texts(emu, group.id, since)
    assert replies and "Telegram" not in replies[-1] and "Аня" in replies[-1]


async def test_a_transient_private_error_is_no_never_started(live: Live):
    emu = live.emu
    (a,) = _people(emu, 2620, 1)
    group = emu.add_group(-1002620, "Клуб", members=[a])
    await a.start_bot(answered=True)
    await live.settle()
    emu.fault = lambda method, params: (
        ApiError(500, "Internal Server Error")
        if method == "sendMessage" and str(params.get("chat_id")) == str(a.id)
        else None
    )
    since = _last_id(emu, group.id)
    await a.send(group, "/rules")
    await live.settle()
    emu.fault = None
    replies = _texts(emu, group.id, since)
    assert replies and private_hint("ru", False) not in replies
    assert await live.store.records.can_dm(a.id)


async def test_a_topics_lobby_follows_a_language_chosen_on_an_inaccessible_message(live: Live):
    emu = live.emu
    (a,) = _people(emu, 2630, 1)
    group = emu.add_group(-1002630, "Клуб", members=[a], admins=[a], is_forum=True)
    topic = await emu.create_topic(group, "Карты", by=a)
    await a.start_bot(answered=True)
    await a.send(group, "/start_game", thread_id=topic)
    await live.settle()
    assert (await live.store.chat_game(group.id, topic)).lang == "ru"
    await a.send(group, "/language", thread_id=topic)
    await live.settle()
    menu = emu.last_message(group.id, lambda m: cb(m, "g:"))
    emu.inaccessible.add((group.id, menu.message_id))
    english = next(b for b in cb(menu, "g:") if b["callback_data"].endswith("en"))
    await (await a.tap(menu, english)).answer(15)
    await live.settle()
    assert (await live.store.chat_game(group.id, topic)).lang == "en"


async def test_the_store_keeps_no_lock_of_a_game_nobody_waits_on(live: Live):
    store = live.store
    for n in range(50):
        assert await store.load(f"unknown{n}") is None
    table = make_lobby(3, gid="L1")
    await store.create(table)
    await store.transact("L1", lambda t: __import__("tgbot.game.lobby", fromlist=["cancel"]).cancel(t, 1, False))
    assert (await store.load("L1")).status is Status.CANCELLED
    await live.settle()
    gc.collect()
    assert len(store._locks) == 0


# -- item 7: equal names ------------------------------------------------------------------------


def test_seat_names_tell_equal_names_apart_and_keep_the_ai_names_reserved():
    seats = (("Саша", True), ("Bot Masha", False), ("саша", True), ("Bot Masha 🤖", True), ("Бот Вася", True))
    assert seat_names(seats, "ru") == ("Саша", "Бот Маша", "саша (2)", "Bot Masha (2)", "Бот Вася (2)")
    assert seat_names(seats, "en")[1:4] == ("AI Masha", "саша (2)", "Bot Masha (2)")
    assert seat_names((("AI Masha", True),), "ru") == ("AI Masha (2)",)
    # a literal «Саша (2)» does not make two of them
    assert seat_names((("Саша (2)", True), ("Саша", True), ("Саша", True)), "ru") == ("Саша (2)", "Саша", "Саша (3)")
    # look-alike letters, case and spacing make no other name
    assert seat_names((("Саша", True), ("Caшa", True), ("САША ", True)), "ru") == ("Саша", "Caшa (2)", "САША (3)")
    # an AI seat keeps its name; no person shows the AI mark
    assert AI_MARK not in "".join(seat_names((("🤖", True), ("Глеб 🤖", True)), "ru"))


async def test_equal_names_are_told_apart_on_every_screen(live: Live):
    emu = live.emu
    a, b, c = _people(emu, 2640, 3, names=("Саша", "Саша", "Bot Masha 🤖"))
    group = emu.add_group(-1002640, "Клуб", members=[a, b, c], admins=[a])
    gid = await live.open_game(group, [a, b, c])
    board = emu.last_message(group.id, lambda m: (m.text or "").startswith("«Верю"))
    rows = (board.text or "").splitlines()
    assert any(row.endswith("Саша — 17 карт") or "1. ⁨Саша⁩ —" in row for row in rows), rows
    assert any("Саша (2)" in row for row in rows) and any("Bot Masha (2)" in row for row in rows)
    assert "🤖" not in board.text
    for user in (a, b, c):
        panel = live.panel(user, gid)
        assert "Саша (2)" in panel.text and "🤖" not in panel.text
    await play_on(live.store, gid)
    live.app.bot_data["services"].syncer.request(gid)
    await live.settle()
    assert (await live.store.load(gid)).status is Status.OVER
    result = emu.last_message(group.id, lambda m: "Игра окончена" in (m.text or ""))
    assert result is not None and "Саша (2)" in result.text and "Bot Masha (2)" in result.text


# -- item 9: what a long board loses ------------------------------------------------------------


def _long_round(claims: int = 6):
    """A Classic game whose round holds at least ``claims`` claims, its players' names as long
    as names get (32 characters of two UTF-16 units each)."""
    table, _ = started(6, variant="classic")
    players = ai_players(6, 3, "honest")
    for _before, change in play_through(table, players):
        table = change.table
        if table.state is not None and len(core.public_view(table.state).claims) >= claims:
            break
    names = ["🂡" * 40 + str(seat) for seat in range(6)]
    return replace(table, seats=tuple(replace(s, name=names[i]) for i, s in enumerate(table.seats)))


@pytest.mark.parametrize("limit", [4096, 900, 500])
def test_a_long_board_loses_its_history_never_its_status(monkeypatch, limit):
    table = _long_round()
    monkeypatch.setattr(limits, "TEXT_LIMIT", limit)
    shown = board_view(table, "cheat_test_bot").text
    status = board_module._status_line(table, core.public_view(table.state), translator("ru"))
    assert text.utf16_units(text.plain(shown)) <= limit
    assert shown.endswith(status), shown[-300:]
    if limit < 900:
        assert "…" in shown


# -- item 6: a join link that arrives as a bare /start ------------------------------------------


async def _offered(live: Live, user, lobby) -> None:
    """``user`` (who never started the bot) taps Join and is answered with the join link."""
    answer = await (await user.tap(lobby, cb(lobby, "j:")[0])).answer(15)
    await live.settle()
    assert answer.get("url", "").startswith("https://t.me/")


async def test_a_bare_start_seats_the_one_lobby_that_offered_the_link(live: Live):
    emu = live.emu
    a, b, c = _people(emu, 2650, 3)
    group = emu.add_group(-1002650, "Клуб", members=[a, b, c], admins=[a])
    gid = await live.open_game(group, [a, b], start=False)
    lobby = emu.last_message(group.id, lambda m: cb(m, "j:"))
    await _offered(live, c, lobby)
    since = _last_id(emu, c.id)
    await c.start_bot()  # the client dropped the payload
    await live.settle()
    table = await live.store.load(gid)
    assert table.seat_of(c.id) is not None
    assert any("Клуб" in text for text in _texts(emu, c.id, since))


async def test_a_bare_start_offered_by_two_lobbies_says_where_to_tap(live: Live):
    emu = live.emu
    a, b, c = _people(emu, 2660, 3)
    one = emu.add_group(-1002660, "Клуб", members=[a, b, c], admins=[a])
    two = emu.add_group(-1002661, "Пятничный покер", members=[a, b, c], admins=[a])
    games = [await live.open_game(group, [a, b], start=False) for group in (one, two)]
    for group in (one, two):
        await _offered(live, c, emu.last_message(group.id, lambda m: cb(m, "j:")))
    since = _last_id(emu, c.id)
    await c.start_bot()
    await live.settle()
    for gid in games:
        assert (await live.store.load(gid)).seat_of(c.id) is None
    (reply,) = _texts(emu, c.id, since)
    assert "Клуб" in reply and "Пятничный покер" in reply
    # a bare /start from someone no lobby waits for is the greeting, as before
    (d,) = _people(emu, 2669, 1)
    since = _last_id(emu, d.id)
    await d.start_bot()
    await live.settle()
    (greeting,) = _texts(emu, d.id, since)
    assert "Клуб" not in greeting


# -- item 8: games longer than Telegram's 48-hour delete window ---------------------------------

TWO_DAYS = 49 * 3600


def _board_of(emu, group, gid):
    """The group's messages that are (or were) a board of game ``gid`` (its «My cards» link, or
    the pointer an old one became)."""
    return [m for m in emu.chat_messages(group.id, from_bot=True) if (m.text or "").startswith(("«Верю", "⬇️"))]


async def test_an_old_board_becomes_a_pointer_without_buttons(live: Live):
    emu = live.emu
    _, _, group, gid = await _three_playing(live, 2670)
    (old,) = [m for m in _board_of(emu, group, gid) if not m.deleted]
    emu.age(TWO_DAYS)
    await play_on(live.store, gid)  # the game ends two days on: its final board goes at the bottom
    live.app.bot_data["services"].syncer.request(gid)
    await live.settle()
    final = [m for m in _board_of(emu, group, gid) if not m.deleted][-1]
    assert final.message_id > old.message_id and cb(final, "n:")
    assert old.text.startswith("⬇️") and not old.flat_buttons and len(old.text.splitlines()) == 1


async def test_an_old_panel_becomes_a_pointer_on_a_new_turn_and_on_a_return(live: Live):
    emu = live.emu
    (a, b, c), users, group, gid = await _three_playing(live, 2680)
    table = await live.store.load(gid)
    following = users[table.seats[(table.state.current + 1) % 3].user_id]
    before = live.panel(following, gid)
    emu.age(TWO_DAYS)
    await live.play_one(gid, users)
    assert live.panel(following, gid).message_id > before.message_id
    assert before.text.startswith("⬇️") and not before.flat_buttons and not before.deleted
    # a returning player's old panel too
    table = await live.store.load(gid)
    idle = next(u for u in (a, b, c) if table.seats[table.state.current].user_id != u.id)
    old = live.panel(idle, gid)
    emu.age(TWO_DAYS)
    idle.block_bot()
    await live.settle()
    await idle.start_bot()
    await live.settle()
    assert live.panel(idle, gid).message_id > old.message_id
    assert old.text.startswith("⬇️") and not old.flat_buttons


async def test_a_turn_reminder_goes_once_its_turn_has_passed(live: Live):
    emu = live.emu
    (a, b, c), users, group, gid = await _three_playing(live, 2690)
    table = await live.store.load(gid)
    player = users[table.seats[table.state.current].user_id]
    await live.advance(table.turn_timeout * 0.8)
    await live.settle()
    reminder = await emu.wait_for(
        lambda: next((m for m in emu.chat_messages(player.id, from_bot=True) if (m.text or "").startswith("⏰")), None)
    )
    assert not reminder.deleted
    await live.play_one(gid, users)
    assert reminder.deleted
