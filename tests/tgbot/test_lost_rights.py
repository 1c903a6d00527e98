"""Losing the right to write is answered with 400, not 403 (issue 16, item 5).

A read-only group, a bot restricted without ``can_send_messages`` or a closed forum topic answer
the bot's messages with 400 ("Bad Request: have no rights to send a message", "Bad Request: not
enough rights to send text messages to the chat", "Bad Request: TOPIC_CLOSED"), usually with no
membership update; a deleted chat answers 400 "Bad Request: chat not found", a deleted topic
"Bad Request: message thread not found". Driven through the Bot API emulator
(tests/fakes/botapi.py) against the bot's real Application (in-process, :mod:`tests.tgbot.live`)
and a private redis-server; time moves on the bot's own clock (:meth:`tests.tgbot.live.Live.advance`),
never on the wall clock.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from telegram.error import BadRequest, Forbidden

from tests.tgbot.helpers import lobby, started
from tests.tgbot.live import cb, live_fixture
from tests.tgbot.test_timers import FakeClock, delay, fired, wired
from tgbot.game import play
from tgbot.game.group import group_gone, group_unwritable, group_writable
from tgbot.game.lobby import cancel
from tgbot.game.table import GroupAccess, Ending, Status, Table
from tgbot.render.announcements import announcement, retired_note
from tgbot.render.text import plain
from tgbot.sync.bookkeeping import BOARD_MESSAGE
from tgbot.sync.group_lane import MAX_HELD_ANNOUNCEMENTS
from tgbot.sync.messages import GroupRefusal, group_refusal

pytestmark = pytest.mark.e2e

DB = 11

live = live_fixture(DB)

NAMES = ("Аня", "Борис", "Вера")


async def _game(live, base: int, kind: str) -> tuple:
    """Three people play in a new group of ``kind`` ("group", "supergroup" or "forum": then in
    a topic of it): (group, topic id or None, game id, users by id)."""
    emu = live.emu
    people = [emu.add_user(base + i, name) for i, name in enumerate(NAMES)]
    chat_id = -base if kind == "group" else -1_000_000_000_000 - base
    group = emu.add_group(
        chat_id, "Клуб", members=people, admins=people[:1], supergroup=kind == "supergroup", is_forum=kind == "forum"
    )
    topic = await emu.create_topic(group, "Стол") if kind == "forum" else None
    gid = await live.open_game(group, people, thread_id=topic)
    return group, topic, gid, {u.id: u for u in people}


async def _shut(emu, group, topic: int | None, how: str, shut: bool = True) -> None:
    """Take the bot's right to write in ``group`` (``shut=False``: give it back) without telling
    the bot: ``how`` is a read-only group, the bot restricted, or its topic closed."""
    if how == "read_only":
        emu.set_read_only(group, shut)
    elif how == "restricted":
        await (emu.restrict_bot(group, notify=False) if shut else emu.unrestrict_bot(group, notify=False))
    else:
        await emu.close_topic(group, topic, closed=shut)


async def _showdown(live, gid: str, users: dict) -> None:
    """The current player plays a card and the next one says «I doubt it!»: a showdown."""
    await live.play_one(gid, users)
    table = await live.store.load(gid)
    doubter = users[table.seats[table.state.current].user_id]
    panel = await live.emu.wait_for(lambda: (m := live.panel(doubter, gid)) and cb(m, "c:") and m, timeout=20)
    await (await doubter.tap(panel, cb(panel, "c:")[0])).answer(15)
    await live.settle()


def _last_id(emu, group) -> int:
    return max((m.message_id for m in emu.chat_messages(group.id, include_deleted=True)), default=0)


def _bot_messages_since(emu, group, since: int) -> list:
    return [m for m in emu.chat_messages(group.id, from_bot=True) if m.message_id > since]


async def _group_notes(live, gid: str) -> list[dict]:
    """The game's announcements waiting in its outbox for the group."""
    return [note for _, note in await live.store.records.outbox(gid) if note.get("to") is None]


def _notes_to(emu, user, text: str) -> int:
    return sum(1 for m in emu.chat_messages(user.id, from_bot=True) if m.text == text)


async def _told_privately(live, table: Table, users: dict) -> dict[int, str]:
    """Wait until each person of the retired ``table`` got its private note; the texts by user."""
    texts = {}
    for seat, player in enumerate(table.seats):
        texts[player.user_id] = plain(retired_note(table, seat, live.settings.lobby_timeout))
        user = users[player.user_id]
        await live.emu.wait_for(lambda u=user, text=texts[player.user_id]: _notes_to(live.emu, u, text), timeout=20)
    return texts


@pytest.mark.parametrize("how,kind", [("read_only", "group"), ("restricted", "supergroup"), ("closed_topic", "forum")])
async def test_showdown_while_unwritable_is_shown_when_writing_is_back(live, how, kind):
    emu = live.emu
    group, topic, gid, users = await _game(live, 1100, kind)
    since = _last_id(emu, group)
    old_board = int((await live.store.records.tg_get(gid))[BOARD_MESSAGE])
    await _shut(emu, group, topic, how)
    await _showdown(live, gid, users)
    table = await live.store.load(gid)
    assert table.status is Status.PLAYING and table.group_access is GroupAccess.UNWRITABLE
    assert table.retire_at == table.unwritable_since + live.settings.lobby_timeout
    held = await _group_notes(live, gid)
    assert [note["kind"] for note in held] == ["challenge_resolved"]  # kept, not dropped
    assert not _bot_messages_since(emu, group, since)
    assert any(e["error_code"] == 400 for e in emu.errors) and not any(e["error_code"] == 403 for e in emu.errors)
    # a restart keeps both: they are the game's own (its table and its outbox)
    await live.stop()
    await live.start()
    await live.settle()
    assert (await live.store.load(gid)).group_access is GroupAccess.UNWRITABLE
    assert await _group_notes(live, gid) == held
    # writing comes back (nothing tells the bot): the next move shows the showdown, then the
    # board anew at the bottom of the group, and the old one goes
    await _shut(emu, group, topic, how, shut=False)
    await live.play_one(gid, users)
    table = await live.store.load(gid)
    assert table.group_access is GroupAccess.WRITABLE and table.unwritable_since is None and table.retire_at is None
    assert await live.store.records.outbox(gid) == []
    shown = _bot_messages_since(emu, group, since)
    assert [m.text for m in shown[:1]] == [plain(announcement(table, held[0]))]
    assert [m.thread_id for m in shown] == [topic, topic]
    assert shown[-1].message_id == int((await live.store.records.tg_get(gid))[BOARD_MESSAGE]) and cb(shown[-1], "")
    assert emu._msg(group.id, old_board).deleted
    assert emu.violations == []


async def test_at_most_the_last_twenty_announcements_are_kept(live):
    emu = live.emu
    group, topic, gid, users = await _game(live, 1200, "group")
    since = _last_id(emu, group)
    emu.set_read_only(group)
    for _ in range(MAX_HELD_ANNOUNCEMENTS + 2):
        await _showdown(live, gid, users)
    table = await live.store.load(gid)
    assert table.status is Status.PLAYING and table.group_access is GroupAccess.UNWRITABLE
    held = await _group_notes(live, gid)
    assert len(held) == MAX_HELD_ANNOUNCEMENTS and {n["kind"] for n in held} == {"challenge_resolved"}
    assert held[-1]["seq"] == table.outbox_seq and held[0]["seq"] > 2  # the two oldest dropped
    emu.set_read_only(group, False)
    await live.play_one(gid, users)
    shown = _bot_messages_since(emu, group, since)
    # the held announcements, in order, a paragraph each, together (within Telegram's text limit)
    assert "\n\n".join(m.text for m in shown[:-1]).split("\n\n") == [plain(announcement(table, note)) for note in held]
    assert len(shown[:-1]) < len(held) and all(len(m.text) <= 4096 for m in shown[:-1])
    assert shown[-1].message_id == int((await live.store.records.tg_get(gid))[BOARD_MESSAGE])
    assert emu.violations == []


async def test_a_group_unwritable_for_the_lobby_timeout_retires_its_game(live):
    emu = live.emu
    group, topic, gid, users = await _game(live, 1300, "supergroup")
    since = _last_id(emu, group)
    await emu.restrict_bot(group)  # with the my_chat_member update: the game goes on
    await live.settle()
    table = await live.store.load(gid)
    assert table.status is Status.PLAYING and table.group_access is GroupAccess.UNWRITABLE
    # the deadline is the table's own, on Redis's clock: a restart keeps it
    await live.stop()
    await live.start()
    await live.settle()
    await live.advance(live.settings.lobby_timeout - 60)
    await live.settle()
    assert (await live.store.load(gid)).status is Status.PLAYING  # not yet
    await live.advance(60)
    retired = replace(await live.store.load(gid), status=Status.CANCELLED, ended=Ending.UNWRITABLE)
    texts = await _told_privately(live, retired, users)
    assert all("15" in text for text in texts.values())  # «… уже 15 минут …»
    await live.settle()
    table = await live.store.load(gid)
    assert (
        table.status is Status.CANCELLED and table.ended == Ending.UNWRITABLE and table.group_access is GroupAccess.GONE
    )
    assert table.deadline is None and gid not in live.app.bot_data["services"].timers._handles
    assert gid not in await live.store.records.live_games() and await live.store.chat_game(group.id, None) is None
    assert not await live.store.redis.hget(live.store.keys.game(gid), "counted")  # no result: never counted
    assert not _bot_messages_since(emu, group, since)
    assert emu.violations == []


@pytest.mark.parametrize("how", ["deleted", "kicked", "topic_deleted"])
async def test_a_group_that_is_gone_retires_its_game_at_once_and_for_good(live, how):
    emu = live.emu
    group, topic, gid, users = await _game(live, 1400, "forum")
    # a lobby in another topic of the forum: it goes with the chat, not with the first topic
    stranger = emu.add_user(1499, "Глеб")
    group.members[stranger.id] = stranger
    other_topic = await emu.create_topic(group, "Стол 2")
    other = await live.open_game(group, [stranger], thread_id=other_topic, start=False)
    if how == "deleted":
        emu.delete_chat(group)  # 400 "Bad Request: chat not found", no update
    elif how == "kicked":
        await emu.remove_bot(group, notify=False)  # 403 "bot was kicked", the update lost
    else:
        emu.delete_topic(group, topic)  # 400 "Bad Request: message thread not found"
    await live.play_one(gid, users)  # the move's board edit meets Telegram's answer
    reason = Ending.BOT_REMOVED if how == "kicked" else Ending.CHAT_GONE
    retired = replace(await live.store.load(gid), status=Status.CANCELLED, ended=reason.value)
    texts = await _told_privately(live, retired, users)
    await live.settle()
    table = await live.store.load(gid)
    assert table.status is Status.CANCELLED and table.ended == reason and table.group_access is GroupAccess.GONE
    assert gid not in await live.store.records.live_games() and gid not in live.app.bot_data["services"].timers._handles
    assert await live.store.chat_game(group.id, topic) is None
    other_table = await live.store.load(other)
    if how == "topic_deleted":
        assert other_table.status is Status.LOBBY and other_table.group_access is GroupAccess.WRITABLE
    else:
        assert other_table.ended == reason and other_table.group_access is GroupAccess.GONE
        assert other not in await live.store.records.live_games()
    calls = len(emu.calls_by(None, group.id))
    # a restart does not bring it back, nor does a crash that left it in the start-up set
    for crash in (False, True):
        if crash:
            await live.store.redis.sadd(live.store.keys.live(), gid)
        await live.stop()
        await live.start()
        await live.settle()
        assert gid not in await live.store.records.live_games()
        assert (await live.store.load(gid)).ended == reason
        assert len(emu.calls_by(None, group.id)) == calls  # the group is never called again
        assert all(_notes_to(emu, user, texts[user.id]) == 1 for user in users.values())  # told once
    assert emu.violations == []


# -- the pieces: Telegram's answers, the table's transitions, its timer -----------------------


@pytest.mark.parametrize(
    "error,refusal",
    [
        (BadRequest("Bad Request: not enough rights to send text messages to the chat"), GroupRefusal.UNWRITABLE),
        (BadRequest("Bad Request: have no rights to send a message"), GroupRefusal.UNWRITABLE),
        (BadRequest("Bad Request: TOPIC_CLOSED"), GroupRefusal.UNWRITABLE),
        (BadRequest("Bad Request: CHAT_WRITE_FORBIDDEN"), GroupRefusal.UNWRITABLE),
        (Forbidden("Forbidden: not enough rights to send text messages to the chat"), GroupRefusal.UNWRITABLE),
        (BadRequest("Bad Request: chat not found"), GroupRefusal.CHAT_GONE),
        (BadRequest("Bad Request: message thread not found"), GroupRefusal.TOPIC_GONE),
        (BadRequest("Bad Request: TOPIC_DELETED"), GroupRefusal.TOPIC_GONE),
        (Forbidden("Forbidden: the group chat was deleted"), GroupRefusal.CHAT_GONE),
        (Forbidden("Forbidden: bot was kicked from the supergroup chat"), GroupRefusal.BOT_REMOVED),
        (Forbidden("Forbidden: bot is not a member of the supergroup chat"), GroupRefusal.BOT_REMOVED),
        (BadRequest("Bad Request: message is too long"), None),
        (BadRequest("Bad Request: message to edit not found"), None),
    ],
)
def test_telegrams_answers_say_how_a_group_refuses(error, refusal):
    assert group_refusal(error) is refusal


def test_the_table_keeps_since_when_its_group_refuses_and_when_it_retires():
    game, _ = started(3)  # (no timer of its own: started without a clock)
    assert group_writable(game).reply == "unchanged"
    assert "group_access" not in json.loads(game.to_json())  # stored as before while writable
    shut = group_unwritable(game, 1000.0, 900.0)
    table = shut.table
    assert shut.reply == "unwritable" and (table.group_access, table.unwritable_since, table.retire_at) == (
        GroupAccess.UNWRITABLE,
        1000.0,
        1900.0,
    )
    assert group_unwritable(table, 1500.0, 900.0).table is table  # the first refusal counts
    assert Table.from_json(table.to_json()) == table
    # the timer: a try of the group every minute, then the retirement
    assert [play.next_timer(table, now) for now in (1000.0, 1061.0, 1899.0)] == [1060.0, 1120.0, 1900.0]
    assert play.on_deadline(table, 1899.0).reply == "unchanged"
    retired = play.on_deadline(table, 1900.0)
    assert retired.reply == "retired" and not retired.outbox  # there is no group to tell
    assert (retired.table.status, retired.table.ended, retired.table.group_access) == (
        Status.CANCELLED,
        "unwritable",
        GroupAccess.GONE,
    )
    assert (
        play.next_timer(retired.table, 1900.0) is None
        and group_gone(retired.table, Ending.CHAT_GONE).reply == "unchanged"
    )
    # a message went through: no retirement, no more tries
    back = group_writable(table).table
    assert (back.group_access, back.unwritable_since, back.retire_at) == (GroupAccess.WRITABLE, None, None)
    assert play.next_timer(back, 1000.0) is None and back == game
    # a finished game whose group is gone keeps its end: it still counts
    over = replace(table, status=Status.OVER, ended="finished")
    assert group_gone(over, Ending.CHAT_GONE).table.ended == "finished"


async def test_an_ended_game_waiting_for_its_group_keeps_its_timer_until_retired(store, syncer):
    clock = FakeClock(1000)
    timers = wired(store, syncer, clock)
    await store.create(lobby(3, gid="W", now=1000, timeout=60))
    await store.transact("W", lambda t: cancel(t, 1, False))  # ended: its note waits
    assert timers.pending() == 0
    await store.transact("W", lambda t: group_unwritable(t, 1000.0, 900.0))
    assert timers.pending() == 1 and 59 < delay(timers, "W") <= 60  # the next try of the group
    clock.t = 1060
    version = (await store.load("W")).version
    syncer.requests.clear()
    await timers.fire("W")  # as its timer does: no deadline due, but the group is tried again
    assert syncer.requests == ["W"] and (await store.load("W")).version == version
    assert 59 < delay(timers, "W") <= 60  # the next try
    clock.t = 1900
    syncer.requested.clear()
    timers.schedule(await store.load("W"))  # the retirement is due now: fires at once
    await fired(syncer)
    table = await store.load("W")
    assert table.group_access is GroupAccess.GONE and table.ended == "stopped" and timers.pending() == 0
    await timers.close()
