"""Only members of a game's chat take its seats (issue 16, items 1 and 8), through the bot's real
Application and the Bot API emulator (which keeps group membership as Telegram does: a member
who left or was removed can no longer write there, getChatMember says "left" or "kicked").

- A join deep link (``t.me/<bot>?start=j<game>``) seats only the member it was offered to:
  their Join tap in the group proved membership. Forwarded to an outsider, or used after its
  owner left or was removed from the group, it is refused and shows nothing of the group.
- A member who leaves or is removed loses their seats in every live game of the chat, in every
  forum topic: the AI plays on for them, a lobby drops them and their pending link.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.tgbot.helpers import lobby as make_lobby
from tests.tgbot.live import Live, cb, live_fixture
from tgbot.game.lobby import MAX_LINK_OFFERS, join, join_by_link, member_gone, offer_link, start
from tgbot.game.table import Player, RefusedError, Seat, Status, Table
from tgbot.render.answers import answer as answer_text

pytestmark = pytest.mark.e2e

DB = 10

live = live_fixture(DB)

TITLE = "Тайный клуб"
NAMES = ("Аня", "Борис", "Вера", "Глеб", "Дина")


def _people(emu, base: int, count: int):
    return [emu.add_user(base + i, NAMES[i]) for i in range(count)]


async def _start(live: Live, user, payload: str):
    """``user`` opens ``t.me/<bot>?start=<payload>``; returns the bot's reply in their chat."""
    emu = live.emu
    since = max((m.message_id for m in emu.chat_messages(user.id)), default=0)
    await user.start_bot(payload)
    reply = await emu.wait_message(user.id, since=since, timeout=20)
    await live.settle()
    return reply


async def _tap_join(live: Live, user, lobby) -> dict:
    """``user`` taps Join under ``lobby``; returns the tap's answer."""
    answer = await (await user.tap(lobby, cb(lobby, "j:")[0])).answer(15)
    await live.settle()
    return answer


async def _wait_past_turn(live: Live, gid: str, turn: int, timeout: float = 30) -> None:
    """Wait until game ``gid`` has played past ``turn``, re-checking at each request the bot
    makes (every move is followed by a board edit)."""
    emu, loop = live.emu, asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        seen = len(emu.calls)
        if (await live.store.load(gid)).action_count > turn:
            return
        await emu.wait_for(lambda seen=seen: len(emu.calls) > seen, max(0.1, end - loop.time()))


async def _ai_plays_for(live: Live, gid: str, seat: int, users: dict) -> None:
    """Play game ``gid`` on (each person plays a card on their turn) until the AI has made a
    move for ``seat``, whose player is gone."""
    for _ in range(12):
        table = await live.store.load(gid)
        assert table.status is Status.PLAYING
        if table.state.current == seat:
            await _wait_past_turn(live, gid, table.action_count)
            return
        await live.play_one(gid, users)
    raise AssertionError(f"seat {seat} never came to play in game {gid}")


def test_link_offers_are_stored_with_the_lobby_and_tables_without_them_load():
    table = make_lobby(2)
    offered = offer_link(table, 50).table
    assert offered.link_offers == (50,) and offer_link(offered, 50).table is offered
    stored = json.loads(offered.to_json())
    assert stored["link_offers"] == [50] and Table.from_json(offered.to_json()) == offered
    del stored["link_offers"]  # a table stored before the field existed
    assert Table.from_json(json.dumps(stored)).link_offers == ()
    with pytest.raises(RefusedError, match="link_not_yours"):
        join_by_link(offered, Seat(51, "Чужой"), 1000.0, 900.0)
    seated = join_by_link(offered, Seat(50, "Вера"), 1000.0, 900.0).table
    assert seated.seat_of(50) == 2 and seated.link_offers == ()
    crowd = table
    for user_id in range(100, 100 + MAX_LINK_OFFERS + 5):
        crowd = offer_link(crowd, user_id).table
    assert len(crowd.link_offers) == MAX_LINK_OFFERS and crowd.link_offers[-1] == 100 + MAX_LINK_OFFERS + 4
    gone = member_gone(crowd, 110, 1000.0, 900.0).table
    assert 110 not in gone.link_offers and len(gone.seats) == 2
    with_third = join(crowd, Seat(3, "Вера"), 1000.0, 900.0).table
    assert start(with_third, 1, False, seed=1).table.link_offers == ()


async def test_a_join_link_seats_only_the_member_it_was_offered_to(live):
    emu = live.emu
    a, b, c, d = _people(emu, 1000, 4)
    outsider = emu.add_user(1009, "Чужой")
    group = emu.add_group(-1001000, TITLE, members=[a, b, c, d], admins=[a])
    gid = await live.open_game(group, [a, b], start=False)
    lobby = emu.last_message(group.id, lambda m: cb(m, "j:"))
    # c never started the bot: their Join tap is answered with the link, offered to them
    answer = await _tap_join(live, c, lobby)
    assert answer.get("url", "").endswith(f"?start=j{gid}")
    # the link forwarded to an outsider: refused, and nothing of the group shows
    reply = await _start(live, outsider, f"j{gid}")
    assert reply.text == answer_text("link_not_yours", "ru")
    shown = " ".join(m.text or "" for m in emu.chat_messages(outsider.id, from_bot=True))
    assert TITLE not in shown and not any(name in shown for name in NAMES)
    # nor does it seat a member of the group who never tapped Join
    reply = await _start(live, d, f"j{gid}")
    assert reply.text == answer_text("link_not_yours", "ru")
    table = await live.store.load(gid)
    assert [x.user_id for x in table.seats] == [a.id, b.id] and table.link_offers == (c.id,)
    # the offer is stored with the game: after a restart, c's own link seats c
    await live.stop()
    await live.start()
    reply = await _start(live, c, f"j{gid}")
    assert TITLE in reply.text
    table = await live.store.load(gid)
    assert [x.user_id for x in table.seats] == [a.id, b.id, c.id] and table.link_offers == ()
    assert emu.violations == []


async def test_a_removed_members_link_is_refused(live):
    emu = live.emu
    a, b, c, d = _people(emu, 1010, 4)
    group = emu.add_group(-1001010, TITLE, members=[a, b, c, d], admins=[a], supergroup=True)
    gid = await live.open_game(group, [a, b], start=False)
    lobby = emu.last_message(group.id, lambda m: cb(m, "j:"))
    for user in (c, d):
        assert (await _tap_join(live, user, lobby)).get("url")
    # c is removed and the bot hears of it (the service message): the offer is withdrawn
    await emu.remove_user(group, c, by=a)
    await live.settle()
    reply = await _start(live, c, f"j{gid}")
    assert reply.text == answer_text("link_not_yours", "ru")
    # d is removed and the bot never hears of it: getChatMember still says "kicked"
    await emu.remove_user(group, d, by=a, notify=False)
    assert (await live.store.load(gid)).link_offers == (d.id,)
    reply = await _start(live, d, f"j{gid}")
    assert reply.text == answer_text("link_not_yours", "ru")
    table = await live.store.load(gid)
    assert [x.user_id for x in table.seats] == [a.id, b.id] and table.link_offers == ()
    assert emu.violations == []


async def test_where_telegram_hides_the_members_the_tap_alone_proves_membership(live):
    """getChatMember about other users is guaranteed to admin bots only: when Telegram refuses
    to answer it, the member the link was offered to is still seated."""
    emu = live.emu
    a, b, c = _people(emu, 1020, 3)
    group = emu.add_group(-1001020, TITLE, members=[a, b, c], admins=[a], supergroup=True)
    group.hidden_members = True
    gid = await live.open_game(group, [a, b], start=False)
    lobby = emu.last_message(group.id, lambda m: cb(m, "j:"))
    assert (await _tap_join(live, c, lobby)).get("url")
    reply = await _start(live, c, f"j{gid}")
    assert TITLE in reply.text
    assert [x.user_id for x in (await live.store.load(gid)).seats] == [a.id, b.id, c.id]
    asked = [call for call in emu.calls_by("getChatMember", group.id) if call["params"].get("user_id") == c.id]
    assert asked and not any(call["ok"] for call in asked)
    assert emu.violations == []


async def test_a_member_leaving_a_forum_loses_seats_in_every_topic(live):
    emu = live.emu
    a, b, c, d = _people(emu, 1030, 4)
    forum = emu.add_group(-1001030, TITLE, members=[a, b, c, d], admins=[a], is_forum=True)
    first = await emu.create_topic(forum, "Стол 1")
    second = await emu.create_topic(forum, "Стол 2")
    games = [
        await live.open_game(forum, [a, b, c], thread_id=first),
        await live.open_game(forum, [d, b, c], thread_id=second),
    ]
    # b leaves the group: Telegram's service message comes in General, not in the topics
    await emu.user_left(forum, b)
    await live.settle()
    users = {u.id: u for u in (a, b, c, d)}
    for gid in games:
        table = await live.store.load(gid)
        seat = table.seat_of(b.id)
        assert table.status is Status.PLAYING and table.seats[seat].player is Player.LEFT
        await _ai_plays_for(live, gid, seat, users)  # the game goes on without them
    assert emu.violations == []


async def test_a_lobby_member_leaving_is_unseated_in_every_topic(live):
    emu = live.emu
    a, b, c, d = _people(emu, 1040, 4)
    forum = emu.add_group(-1001040, TITLE, members=[a, b, c, d], admins=[a], is_forum=True, bot_status="administrator")
    first = await emu.create_topic(forum, "Стол 1")
    second = await emu.create_topic(forum, "Стол 2")
    one = await live.open_game(forum, [a, b], thread_id=first, start=False)
    two = await live.open_game(forum, [c, b], thread_id=second, start=False)
    lobby = emu.last_message(forum.id, lambda m: cb(m, f"j:{two}"))
    assert (await _tap_join(live, d, lobby)).get("url")  # d never started the bot
    # b leaves, d is removed (the bot is an admin: chat_member updates come too)
    await emu.user_left(forum, b)
    await emu.remove_user(forum, d, by=a)
    await live.settle()
    first_table, second_table = await live.store.load(one), await live.store.load(two)
    assert first_table.status is Status.LOBBY and [x.user_id for x in first_table.seats] == [a.id]
    assert second_table.status is Status.LOBBY and [x.user_id for x in second_table.seats] == [c.id]
    assert second_table.link_offers == ()
    reply = await _start(live, d, f"j{two}")
    assert reply.text == answer_text("link_not_yours", "ru")
    assert emu.violations == []


async def test_in_a_public_group_only_members_take_a_seat(live):
    """Anyone may open a public group and press its buttons: Join seats members only (Telegram's
    getChatMember says who is one); in a private group an outsider never sees the lobby."""
    emu = live.emu
    a, b = _people(emu, 1100, 2)
    visitor = emu.add_user(1109, "Гость")
    await visitor.start_bot(answered=True)
    group = emu.add_group(-1001100, TITLE, members=[a, b], admins=[a], supergroup=True, username="public_club")
    gid = await live.open_game(group, [a, b], start=False)
    lobby = emu.last_message(group.id, lambda m: cb(m, "j:"))
    answer = await (await visitor.tap(lobby, cb(lobby, "j:")[0])).answer(15)
    assert answer.get("text") == answer_text("not_a_member", "ru")
    assert [x.user_id for x in (await live.store.load(gid)).seats] == [a.id, b.id]
    group.members[visitor.id] = visitor  # the visitor joins the group: now the tap seats them
    answer = await (await visitor.tap(lobby, cb(lobby, "j:")[0])).answer(15)
    await live.settle()
    assert [x.user_id for x in (await live.store.load(gid)).seats] == [a.id, b.id, visitor.id]
    private = emu.add_group(-1001101, "Закрытый клуб", members=[a, b], admins=[a])
    await live.open_game(private, [a, b], start=False)
    with pytest.raises(PermissionError):
        await visitor.tap(emu.last_message(private.id, lambda m: cb(m, "j:")), "j:x")
    assert emu.violations == []
