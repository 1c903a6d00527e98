"""The Telegram bookkeeping of a game (tgbot/sync/bookkeeping.py): field names before issue 15
(``p<seat>``, ``pk<seat>``, ``pd<seat>``, ``pt<seat>``, ``nr<seat>``, ``x<seat>``, ``b``, ``bh``) are
read as today's, and a take-over over such a hash neither sends the panels again nor posts the
board again."""

from __future__ import annotations

import pytest

from tests.tgbot.live import live_fixture
from tgbot.storage.redis import connect
from tgbot.sync import bookkeeping as fields

pytestmark = pytest.mark.e2e

DB = 6
live = live_fixture(DB)

#: Today's name → the name before issue 15.
_OLD = {
    "panel_message": "p",
    "panel_state": "pk",
    "panel_digest": "pd",
    "turn_panel_sent": "pt",
    "unreachable": "nr",
    "told_retired": "x",
}


def _old_name(field: str) -> str:
    if field == fields.BOARD_MESSAGE:
        return "b"
    if field == fields.BOARD_DIGEST:
        return "bh"
    name, _, seat = field.partition(":")
    return _OLD[name] + seat


def test_old_names_are_read_as_todays():
    stored = {
        "p0": "11",
        "pk0": "state",
        "pd0": "digest",
        "pt0": "3",
        "nr1": "1",
        "x2": "1",
        "b": "7",
        "bh": "board",
        "p12": "5",
    }
    current, old = fields.with_current_names(stored | {"panel_message:1": "21", "p1": "20"})
    assert current == {
        fields.panel_message(0): "11", fields.panel_state(0): "state", fields.panel_digest(0): "digest",
        fields.turn_panel_sent(0): "3", fields.unreachable(1): "1", fields.told_retired(2): "1",
        fields.BOARD_MESSAGE: "7", fields.BOARD_DIGEST: "board", fields.panel_message(12): "5",
        fields.panel_message(1): "21",  # today's name wins over an old one
    }  # fmt: skip
    assert sorted(old) == sorted([*stored, "p1"])
    assert fields.with_current_names({fields.BOARD_MESSAGE: "7"}) == ({fields.BOARD_MESSAGE: "7"}, [])


def test_group_sent_reads_back_no_earlier_than_sent_and_short():
    sent = [1733140001.25 + 3.1 * i for i in range(20)]  # a full window of 20
    value = fields.group_sent(sent)
    read = fields.read_group_sent(value)
    assert all(0 <= back - moment < 0.1 + 1e-6 for back, moment in zip(read, sent, strict=True)), read
    assert len(value) <= 64  # (a short hash value: Redis keeps the hash compact)
    assert fields.group_sent([]) == "" and fields.read_group_sent("") == []
    assert fields.read_group_sent(None) == fields.read_group_sent("x:1") == fields.read_group_sent("1:!!") == []


async def test_a_take_over_of_a_hash_with_old_names_sends_nothing_again(live):
    emu = live.emu
    people = [emu.add_user(960 + i, name) for i, name in enumerate(("Аня", "Борис", "Вера"))]
    group = emu.add_group(-3960, "Клуб", members=people, admins=[people[0]])
    gid = await live.open_game(group, people)
    await live.play_one(gid, {user.id: user for user in people})
    await live.settle()
    key = live.store.keys.telegram(gid)
    chats = [group.id, *(user.id for user in people)]
    await live.stop()
    shown = {chat: {m.message_id for m in emu.chat_messages(chat, from_bot=True)} for chat in chats}
    redis = await connect(live.url)
    try:
        stored = await redis.hgetall(key)
        assert fields.BOARD_MESSAGE in stored and fields.panel_message(0) in stored
        await redis.delete(key)
        stored.pop(fields.GROUP_SENT)  # (issue 25's: it never had another name)
        await redis.hset(key, mapping={_old_name(field): value for field, value in stored.items()})
        await live.start()
        await live.settle()
        assert {chat: {m.message_id for m in emu.chat_messages(chat, from_bot=True)} for chat in chats} == shown
        rewritten = await redis.hgetall(key)
        rewritten.pop(fields.GROUP_SENT, None)
        assert rewritten == stored  # rewritten under today's names, the old ones gone
    finally:
        await redis.aclose()
    assert emu.violations == []
