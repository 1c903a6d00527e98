"""Who sees what (issue 26, items 1 and 2) and two of its lobby bounds (item 3: invitations once
per game and person, join-link offers kept for the group's regulars), through the bot's real
Application and the Bot API emulator: a person who left or was removed sees no hand and cannot
probe one, a panel's button acts only in its player's private chat (a forged tap on a group's
message with the panel's id shows nothing there), «Play again» then cancel invites nobody twice,
and strangers tapping Join never push a regular's link out."""

from __future__ import annotations

import pytest

from dataclasses import replace

from tests.tgbot.helpers import lobby as make_lobby, play_on, started
from tests.tgbot.live import Live, cb, live_fixture
from tgbot.game.lobby import MAX_LINK_OFFERS, offer_link
from tgbot.game.table import Answer, Player, RefusedError, Status, with_seat
from tgbot.i18n import LANGUAGES, translator
from tgbot.render.announcements import note
from tgbot.render.answers import answer
from tgbot.render.panel import panel, panel_state
from tgbot.render.text import hand_text, title

pytestmark = pytest.mark.e2e

DB = 3

live = live_fixture(DB)

NAMES = ("Аня", "Борис", "Вера", "Глеб", "Дина")


def _people(emu, base: int, count: int):
    return [emu.add_user(base + i, NAMES[i % len(NAMES)]) for i in range(count)]


def _your_cards(lang: str = "ru") -> str:
    """What a panel showing its hand says first («Ваши карты»)."""
    return translator(lang).t("Your cards ({count}): {hand}", count="#", hand="").split("(")[0].strip()


def _shown(emu, chat_id: int, since: int) -> list[dict]:
    """The params of every message sent or edited in ``chat_id`` since call ``since``."""
    return [
        call["params"]
        for call in emu.calls[since:]
        if call["method"] in ("sendMessage", "editMessageText") and str(call["params"].get("chat_id")) == str(chat_id)
    ]


def _has_buttons(params: dict) -> bool:
    markup = params.get("reply_markup")
    if isinstance(markup, str):
        return "callback_data" in markup or '"url"' in markup
    return bool(markup and any(markup.get("inline_keyboard", [])))


async def _tap(user, message, data: str) -> str:
    return (await (await user.tap(message, data, strict=False)).answer(15)).get("text", "")


# -- item 1: who no longer holds a seat sees no hand ----------------------------------------------


def test_a_gone_seats_panel_shows_no_hand_and_no_button_in_any_language():
    table, _ = started(4)
    gone = replace(table, seats=with_seat(table.seats, 0, player=Player.LEFT))
    for lang in LANGUAGES:
        shown = panel(replace(gone, lang=lang), 0)
        assert shown.markup is None, lang
        assert _your_cards(lang) not in shown.text
        assert hand_text(translator(lang), table.state.hands[0]) not in shown.text
    assert panel_state(gone, 0) == panel_state(replace(gone, state=started(4, seed=6)[0].state), 0)


async def _advance_to(live: Live, gid: str, users: dict, moves: int) -> None:
    """``moves`` more actions: the people's by their panels, the AI's seats' by their timers."""
    for _ in range(moves):
        table = await live.store.load(gid)
        if table.status is not Status.PLAYING:
            return
        seat = table.seats[table.state.current]
        if seat.by_ai:
            await live.advance(10)
            await live.settle()
        else:
            await live.play_one(gid, users)


async def test_who_left_or_was_removed_sees_no_hand_and_cannot_probe_it(live: Live):
    emu = live.emu
    a, b, c, d = people = _people(emu, 2700, 4)
    users = {u.id: u for u in people}
    group = emu.add_group(-1002700, "Клуб", members=people, admins=[a])
    gid = await live.open_game(group, people)
    assert any(_your_cards() in p["text"] and _has_buttons(p) for p in _shown(emu, c.id, 0))  # c's panel till now
    since = len(emu.calls)
    # c leaves (confirmed), the admin removes d with /kick
    await c.send(group, "/leave")
    await live.settle()
    question = emu.last_message(group.id, lambda m: cb(m, "q:"))
    await (await c.tap(question, cb(question, "q:")[0])).answer(15)
    d_says = await d.send(group, "/board")
    await a.send(group, "/kick", reply_to=emu.updates[d_says]["message"]["message_id"])
    await live.settle()
    table = await live.store.load(gid)
    assert [table.seats[table.seat_of(u.id)].player for u in (c, d)] == [Player.LEFT, Player.LEFT]
    # the AI plays their seats a while (a pile may be picked up)
    await _advance_to(live, gid, users, 8)
    # they open what they can: /start anew in private (their panels are sent anew), then the
    # forged buttons of a panel, with cards the seat holds and cards it does not
    for gone in (c, d):
        await gone.start_bot(answered=True)
    await live.settle()
    for gone in (c, d):
        shown = _shown(emu, gone.id, since)
        assert shown and not any(_your_cards() in p["text"] for p in shown), gone.first_name
        assert not any(_has_buttons(p) for p in shown), gone.first_name
    taps_since = len(emu.calls)
    for gone in (c, d):
        table = await live.store.load(gid)
        held = table.state.hands[table.seat_of(gone.id)].to_str()
        last = emu.last_message(gone.id, lambda m: m.from_bot)
        taps = [
            f"r:{gid}",
            f"k:{gid}:{table.action_count}:{held[:1]}",
            f"k:{gid}:{table.action_count}:{'KKKK' if 'K' not in held else 'AAAA'}",
            f"t:{gid}",
            f"d:{gid}",
            f"c:{gid}:{table.action_count}",
        ]
        answers = {await _tap(gone, last, data) for data in taps}
        await live.settle()
        assert answers == {answer("seat_gone", "ru")}
        assert not any(_your_cards() in p["text"] for p in _shown(emu, gone.id, taps_since))
    assert emu.violations == []


# -- item 2: a panel's button acts only in its player's private chat ------------------------------


async def test_a_panel_tap_on_a_group_message_with_the_panels_id_shows_nothing_there(live: Live):
    emu = live.emu
    people = _people(emu, 2710, 3)
    group = emu.add_group(-1002710, "Клуб", members=people, admins=people[:1])
    for u in people:  # their private chats run ahead of the group's message ids
        await u.start_bot(answered=True)
        for _ in range(12):
            await u.send(u.chat, "…")
    gid = await live.open_game(group, people)
    table = await live.store.load(gid)
    player = next(u for u in people if u.id == table.seats[table.state.current].user_id)
    own = live.panel(player, gid)
    assert own is not None and cb(own, "k:")
    # the group's message with the panel's id is the bot's (a board /board posts)
    while max(m.message_id for m in emu.chat_messages(group.id)) < own.message_id - 2:
        await people[0].send(group, "…")  # (the bot does not see it: privacy mode)
    await player.send(group, "/board")
    await live.settle()
    target = emu._msg(group.id, own.message_id)
    assert target is not None and target.from_bot
    since = len(emu.calls)
    forged = (f"r:{gid}", cb(own, "k:")[0]["callback_data"], f"d:{gid}", f"t:{gid}", f"c:{gid}:{table.action_count}")
    answers = [await _tap(player, target, data) for data in forged]
    await live.settle()
    assert not any(_your_cards() in p["text"] for p in _shown(emu, group.id, since))  # no hand in the group
    assert _shown(emu, group.id, since) == []
    refused = answer(Answer.NOT_FOR_YOU, "ru")
    assert answers == [refused] * len(forged)
    # the panel itself still works
    assert await _tap(player, own, cb(own, "k:")[0]["callback_data"]) != refused
    assert emu.violations == []


# -- item 3: «Play again», then cancel, invites each person once ----------------------------------


async def test_play_again_then_cancel_invites_each_player_once_per_game(live: Live):
    emu = live.emu
    a, b, c = people = _people(emu, 2720, 3)
    group = emu.add_group(-1002720, "Клуб", members=people, admins=[a])
    gid = await live.open_game(group, people)
    await play_on(live.store, gid)
    live.app.bot_data["services"].syncer.request(gid)
    await live.settle()
    board = emu.last_message(group.id, lambda m: cb(m, f"n:{gid}"))
    invitation = note("lobby_open", "ru", group=title(await live.store.load(gid)))
    for presser in (a, a, a, b):
        await (await presser.tap(board, cb(board, "n:")[0])).answer(15)
        await live.settle()
        lobby = emu.last_message(group.id, lambda m: cb(m, "x:"))
        again = await live.store.chat_game(group.id, None)
        assert lobby is not None and again is not None
        await (await c.tap(lobby, cb(lobby, "j:")[0])).answer(15)  # c sits down, then it is cancelled
        await (await presser.tap(lobby, cb(lobby, "x:")[0])).answer(15)
        await live.settle()

    def invited() -> dict[str, int]:
        return {u.first_name: sum(m.text == invitation for m in emu.chat_messages(u.id, from_bot=True)) for u in people}

    assert invited() == {"Аня": 1, "Борис": 1, "Вера": 1}
    # «Play again» forged on a cancelled lobby (c sat in it) opens nothing and invites nobody
    refused = await (await a.tap(lobby, f"n:{again.id}", strict=False)).answer(15)
    await live.settle()
    assert refused["text"] == answer("bad_button", "ru") and await live.store.chat_game(group.id, None) is None
    assert invited() == {"Аня": 1, "Борис": 1, "Вера": 1}


# -- item 3: join-link offers kept for the group's regulars ---------------------------------------


def test_strangers_never_push_a_regulars_link_offer_out():
    table = make_lobby(2)
    regulars, strangers = [50, 51], list(range(100, 100 + 2 * MAX_LINK_OFFERS))
    table = offer_link(table, 50).table
    table = offer_link(table, 51).table
    known = frozenset(strangers)
    for user_id in strangers:
        table = offer_link(table, user_id, known).table
    assert table.link_offers[:2] == tuple(regulars) and len(table.link_offers) == MAX_LINK_OFFERS
    assert table.link_offers[2:] == tuple(strangers[-(MAX_LINK_OFFERS - 2) :])  # the oldest strangers went
    # a regular pushes the oldest stranger out; a stranger facing only regulars is refused
    table = offer_link(table, 52, known).table
    assert table.link_offers[:2] == (50, 51) and table.link_offers[-1] == 52
    assert strangers[-(MAX_LINK_OFFERS - 2)] not in table.link_offers
    full = make_lobby(2)
    for user_id in range(200, 200 + MAX_LINK_OFFERS):
        full = offer_link(full, user_id, frozenset({999})).table
    with pytest.raises(RefusedError, match=Answer.OFFERS_FULL):
        offer_link(full, 999, frozenset({999}))
    assert offer_link(full, 300, frozenset({999})).table.link_offers[-1] == 300  # regulars: the oldest goes


async def test_forty_strangers_tapping_join_keep_the_regulars_links(live: Live):
    emu = live.emu
    a, b, r1, r2 = _people(emu, 2730, 4)
    strangers = [emu.add_user(2740 + i, f"Гость {i}") for i in range(40)]
    group = emu.add_group(-1002730, "Клуб", members=[a, b, r1, r2, *strangers], admins=[a])
    # r1 played a game to its end here (the leaderboard); r2 sat in the lobby that came last
    first = await live.open_game(group, [a, b, r1])
    await play_on(live.store, first)
    live.app.bot_data["services"].syncer.request(first)
    await live.settle()
    second = await live.open_game(group, [a, r2], start=False)
    lobby = emu.last_message(group.id, lambda m: cb(m, f"x:{second}"))
    await (await a.tap(lobby, cb(lobby, "x:")[0])).answer(15)
    for regular in (r1, r2):
        regular.block_bot()
    await live.settle()
    gid = await live.open_game(group, [a], start=False)
    lobby = emu.last_message(group.id, lambda m: cb(m, f"j:{gid}"))
    for person in (r1, r2, *strangers):
        got = await (await person.tap(lobby, cb(lobby, "j:")[0])).answer(15)
        assert got.get("url"), person.first_name
    await live.settle()
    for regular in (r1, r2):
        await regular.start_bot(f"j{gid}", answered=True)
    await live.settle()
    table = await live.store.load(gid)
    assert table.seat_of(r1.id) is not None and table.seat_of(r2.id) is not None
    # the strangers who lost their offer are the oldest ones
    await strangers[0].start_bot(f"j{gid}", answered=True)
    await strangers[-1].start_bot(f"j{gid}", answered=True)
    await live.settle()
    table = await live.store.load(gid)
    assert table.seat_of(strangers[0].id) is None and table.seat_of(strangers[-1].id) is not None
