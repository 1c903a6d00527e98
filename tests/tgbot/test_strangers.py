"""Authority and strangers (issue 16, items 1–4 and 14) through the bot's real Application and
the Bot API emulator: who may take a seat, manage AI seats, press a button that acts for a
person, open a rematch, and get a game's record."""

from __future__ import annotations

import pytest

from tests.tgbot.helpers import play_on
from tests.tgbot.live import cb, live_fixture
from tgbot.game.table import Status
from tgbot.render.answers import answer
from tgbot.render.text import title
from tgbot.sync.bookkeeping import BOARD_MESSAGE

pytestmark = pytest.mark.e2e

DB = 12

live = live_fixture(DB)


def _people(emu, base, n=3):
    names = ("Аня", "Борис", "Вера", "Глеб", "Дина")
    return [emu.add_user(base + i, names[i]) for i in range(n)]


def _docs(emu, user):
    return [m for m in emu.chat_messages(user.id, from_bot=True) if m.document is not None]


def _first_call(emu, since, method, test):
    """The index of the first ``method`` call from ``since`` on in the emulator's log that passes ``test``."""
    return next(i for i, call in enumerate(emu.calls) if i >= since and call["method"] == method and test(call))


def _answered_first(emu, since, code, method, test=lambda call: True):
    """The tap answered with ``code`` was answered before the first such ``method`` call (issue 15 item 6)."""
    answered = _first_call(
        emu, since, "answerCallbackQuery", lambda call: call["params"].get("text") == answer(code, "ru")
    )
    return answered < _first_call(emu, since, method, test)


async def test_record_only_after_the_end_and_once_per_player(live):
    emu = live.emu
    a, b, c = _people(emu, 1400)
    group = emu.add_group(-1001400, "Клуб", members=[a, b, c], admins=[a])
    gid = await live.open_game(group, [a, b, c])
    # the record button's data, sent on a running game's panel: no deal leaves the bot
    panel = live.panel(b, gid)
    ans = await (await b.tap(panel, f"d:{gid}", strict=False)).answer(15)
    await live.settle()
    assert ans["text"] == answer("record_not_yet", "ru") and _docs(emu, b) == []
    await play_on(live.store, gid)
    live.app.bot_data["services"].syncer.request(gid)
    await live.settle()
    assert (await live.store.load(gid)).status is Status.OVER
    final = live.panel(b, gid)
    since = len(emu.calls)
    first = await (await b.tap(final, cb(final, "d:")[0])).answer(15)
    await live.settle()
    assert first["text"] == answer("record_sent", "ru") and len(_docs(emu, b)) == 1
    assert _answered_first(emu, since, "record_sent", "sendDocument")
    for _ in range(3):
        again = await (await b.tap(final, cb(final, "d:")[0])).answer(15)
        assert again["text"] == answer("record_again", "ru")
    await live.settle()
    assert len(_docs(emu, b)) == 1
    # a stranger's forged tap gets nothing either
    d = emu.add_user(1499, "Дина")
    await d.start_bot()
    await live.settle()
    ans = await (await d.tap(emu.last_message(d.id), f"d:{gid}", strict=False)).answer(15)
    await live.settle()
    assert ans["text"] == answer("not_seated", "ru") and _docs(emu, d) == []


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
        assert ans["text"] == answer("not_allowed", "ru")
    await live.settle()
    assert (await live.store.load(gid)).seats == before.seats
    assert emu.last_message(group.id, lambda m: (m.text or "") == answer("not_allowed", "ru")) is not None
    # the creator adds two, a chat admin one
    await a.send(group, "/add_bot")
    await (await a.tap(lobby, cb(lobby, "a:")[0])).answer(15)
    await d.send(group, "/add_bot")
    await live.settle()
    t = await live.store.load(gid)
    assert [not s.human for s in t.seats] == [False, True, True, True]
    # a member can't take them out, the admin can
    lobby = emu.last_message(group.id, lambda m: cb(m, "m:"))
    ans = await (await c.tap(lobby, cb(lobby, "m:")[0])).answer(15)
    await live.settle()
    assert ans["text"] == answer("not_allowed", "ru") and len((await live.store.load(gid)).seats) == 4
    await (await d.tap(lobby, cb(lobby, "m:")[0])).answer(15)
    await live.settle()
    assert len((await live.store.load(gid)).seats) == 3
    # the sixth seat still starts the game by itself
    for _ in range(3):
        await a.send(group, "/add_bot")
        await live.settle()
    assert (await live.store.load(gid)).status is Status.PLAYING


REFUSALS = {answer(code, "ru") for code in ("not_seated", "not_allowed", "players_only", "admins_only", "not_for_you")}


async def _snapshot(live, gid, chat_id):
    store = live.store
    t = await store.load(gid)
    return (
        t.to_json(),
        await store.records.chat_settings(chat_id),
        await store.records.chat_turn_timeout(chat_id, 0),
        await store.redis.hgetall(store.keys.game(gid)),
        (await store.chat_game(chat_id, None)).id if await store.chat_game(chat_id, None) else None,
    )


async def _press_all(live, stranger, messages, gid, chat_id, skip=("j:",)):
    """``stranger`` presses every callback button of ``messages``: each answer is a refusal and
    nothing in the game, the chat's settings or its live game changes."""
    emu = live.emu
    pressed = set()
    for m in messages:
        for b in m.flat_buttons:
            data = b.get("callback_data")
            if data is None or data.startswith(skip):
                continue
            before = await _snapshot(live, gid, chat_id)
            ans = await (await stranger.tap(m, b)).answer(15)
            await live.settle()
            assert ans.get("text") in REFUSALS, (data, ans)
            assert await _snapshot(live, gid, chat_id) == before, data
            assert not [d for d in emu.chat_messages(stranger.id, from_bot=True) if d.document is not None]
            pressed.add(data.split(":")[0])
    return pressed


def _keyboards(emu, chat_ids):
    return [m for cid in chat_ids for m in emu.chat_messages(cid, from_bot=True) if m.flat_buttons]


async def test_every_button_refuses_a_stranger(live):
    emu = live.emu
    a, b, c, admin, s = _people(emu, 1420, 5)  # s: a member of the group, not seated, no admin
    group = emu.add_group(-1001420, "Клуб", members=[a, b, c, s], admins=[admin])
    for u in (a, b, c, s, admin):
        await u.start_bot(answered=True)
    # the lobby (with a bot, so «Remove a bot» shows) and the admins' menus
    gid = await live.open_game(group, [a], start=False)
    lobby = emu.last_message(group.id, lambda m: cb(m, "a:"))
    await (await a.tap(lobby, cb(lobby, "a:")[0])).answer(15)
    for cmd in ("/timer", "/settings", "/language"):
        await admin.send(group, cmd)
    await live.settle()
    seen = await _press_all(live, s, _keyboards(emu, [group.id]), gid, group.id)
    assert {"l", "s", "x", "v", "a", "m", "w", "e", "g"} <= seen
    # the running game: every private panel, the board, the leave and stop confirmations
    lobby = emu.last_message(group.id, lambda m: cb(m, "m:"))
    await (await a.tap(lobby, cb(lobby, "m:")[0])).answer(15)
    for u in (b, c):
        await (await u.tap(lobby, cb(lobby, "j:")[0])).answer(15)
    await (await a.tap(lobby, cb(lobby, "s:")[0])).answer(15)
    await live.settle()
    t = await live.store.load(gid)
    first = {x.id: x for x in (a, b, c)}[t.seats[t.state.current].user_id]
    played = await live.pick(first, gid)  # a panel with play buttons
    seen = await _press_all(live, s, _keyboards(emu, [group.id, a.id, b.id, c.id]), gid, group.id)
    assert {"k", "p", "r"} <= seen
    await (await first.tap(played, cb(played, "p:")[0])).answer(15)  # the next one can believe or doubt
    await live.settle()
    # one seat played by the AI, not on turn: its panel offers «Take my seat back»
    t = await live.store.load(gid)
    idle = (t.state.current + 1) % 3
    from dataclasses import replace

    from tgbot.game import table as game_table

    await live.store.transact(
        gid,
        lambda cur: game_table.Change(
            replace(cur, seats=game_table.with_seat(cur.seats, idle, player=game_table.Player.STAND_IN))
        ),
    )
    live.app.bot_data["services"].syncer.request(gid)
    await a.send(group, "/leave")
    await a.send(group, "/stop_game")
    await live.settle()
    msgs = _keyboards(emu, [group.id, a.id, b.id, c.id])
    seen = await _press_all(live, s, msgs, gid, group.id)
    assert {"c", "r", "t", "q", "y"} <= seen
    # confirmations are the addressee's: another player, and an admin, can't use a's
    confirms = [m for m in _keyboards(emu, [group.id]) if cb(m, "q:") or cb(m, "y:")]
    await _press_all(live, b, [m for m in confirms if cb(m, "q:")], gid, group.id)
    await _press_all(live, admin, [m for m in confirms if cb(m, "y:")], gid, group.id)
    # the end: final panels (the record) and the board (play again)
    await play_on(live.store, gid)
    live.app.bot_data["services"].syncer.request(gid)
    await live.settle()
    seen = await _press_all(live, s, _keyboards(emu, [group.id, a.id, b.id, c.id]), gid, group.id)
    assert {"d", "n"} <= seen


async def test_play_again_invites_and_seats_only_who_joins(live):
    emu = live.emu
    a, b, c, s = _people(emu, 1430, 4)
    group = emu.add_group(-1001430, "Клуб", members=[a, b, c, s], admins=[a])
    for u in (a, b, c, s):
        await u.start_bot(answered=True)
    gid = await live.open_game(group, [a, b, c], start=False)
    lobby = emu.last_message(group.id, lambda m: cb(m, "a:"))
    await (await a.tap(lobby, cb(lobby, "a:")[0])).answer(15)
    await (await a.tap(lobby, cb(lobby, "s:")[0])).answer(15)
    await live.settle()
    await play_on(live.store, gid)
    live.app.bot_data["services"].syncer.request(gid)
    await live.settle()
    board = emu.last_message(group.id, lambda m: cb(m, "n:"))
    # a member who did not play can't open it for them
    ans = await (await s.tap(board, cb(board, "n:")[0])).answer(15)
    await live.settle()
    assert ans["text"] == answer("players_only", "ru") and (await live.store.chat_game(group.id, None)) is None
    # a player can: the AI seat comes along, the presser sits, the others are only invited
    since = len(emu.calls)
    await (await b.tap(board, cb(board, "n:")[0])).answer(15)
    await live.settle()
    again = await live.store.chat_game(group.id, None)
    assert again is not None and again.id != gid
    assert [x.user_id for x in again.seats if x.human] == [b.id] and sum(1 for x in again.seats if not x.human) == 1
    for u in (a, c):
        assert emu.last_message(u.id, lambda m: title(again) in (m.text or "")) is not None
    invited = {a.id, c.id, str(a.id), str(c.id)}
    assert _answered_first(emu, since, "reopened", "sendMessage", lambda call: call["params"].get("chat_id") in invited)
    assert emu.last_message(s.id, lambda m: title(again) in (m.text or "")) is None
    # who taps Join takes a seat
    lobby = emu.last_message(group.id, lambda m: cb(m, f"j:{again.id}"))
    await (await c.tap(lobby, cb(lobby, "j:")[0])).answer(15)
    await live.settle()
    assert [x.user_id for x in (await live.store.load(again.id)).seats if x.human] == [b.id, c.id]


async def test_a_confirmation_goes_once_it_is_answered(live):
    """«Yes, leave» and «Yes, stop the game» are deleted from the group once their player (or
    admin) confirmed: no live button is left behind, and nothing else is deleted."""
    emu = live.emu
    a, b, c = _people(emu, 1440)
    group = emu.add_group(-1001440, "Клуб", members=[a, b, c], admins=[a])
    gid = await live.open_game(group, [a, b, c])
    await c.send(group, "/leave")
    await a.send(group, "/stop_game")
    await live.settle()
    leave = emu.last_message(group.id, lambda m: cb(m, "q:"))
    stop = emu.last_message(group.id, lambda m: cb(m, "y:"))
    # someone else's tap is refused and leaves the question in place
    await (await b.tap(leave, cb(leave, "q:")[0])).answer(15)
    await live.settle()
    assert not emu._msg(group.id, leave.message_id).deleted
    await (await c.tap(leave, cb(leave, "q:")[0])).answer(15)
    await live.settle()
    assert emu._msg(group.id, leave.message_id).deleted and not emu._msg(group.id, stop.message_id).deleted
    await (await a.tap(stop, cb(stop, "y:")[0])).answer(15)
    await live.settle()
    assert emu._msg(group.id, stop.message_id).deleted
    assert (await live.store.load(gid)).status is Status.CANCELLED
    board = int((await live.store.records.tg_get(gid))[BOARD_MESSAGE])
    assert not emu._msg(group.id, board).deleted
    assert emu.violations == []
