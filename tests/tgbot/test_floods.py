"""Telegram's answers as they really are, and the message budget (issue 16: 6, 7, 10, 12).

Driven through the Bot API emulator (tests/fakes/botapi.py) against the bot's real
Application (in-process, :mod:`tests.tgbot.live`) and a private redis-server.
"""

from __future__ import annotations


import pytest

from tests.fakes.botapi import SimUser
from tests.fakes.spec import ApiError
from tests.tgbot.live import cb, live_fixture
from tgbot.render.menus import stats_text
from tgbot.storage import stats

pytestmark = pytest.mark.e2e

DB = 13

live = live_fixture(DB)


# -- 6. transient errors are not "the user blocked the bot" ----------------------------------


@pytest.mark.parametrize(
    "error",
    [
        ApiError(500, "Internal Server Error"),
        ApiError(502, "Bad Gateway"),
        ApiError(429, "Too Many Requests: retry after 1", {"retry_after": 1}),
    ],
    ids=["500", "502", "429"],
)
async def test_transient_errors_never_mark_a_player_unreachable(live, error):
    emu = live.emu
    a, b, c = (emu.add_user(1600 + i, n) for i, n in enumerate(("Аня", "Борис", "Вера")))
    group = emu.add_group(-16006, "Клуб", members=[a, b, c], admins=[a])
    for u in (a, b, c):
        await u.start_bot(answered=True)  # b's /notify_me below must find b reachable
    await b.send(group, "/notify_me")
    await live.settle()
    victims = {str(a.id), str(b.id)}
    emu.fault = lambda method, raw: error if method == "sendMessage" and str(raw.get("chat_id")) in victims else None
    await a.send(group, "/rules")  # the rules go to a's private chat: refused
    await c.send(group, "/start_game")  # b is told privately that a lobby opened: refused
    await live.settle()
    # the invitations go out off the update's path (Application.create_task)
    await emu.wait_for(
        lambda: any(
            e["error_code"] == error.code and e["params"].get("chat_id") in (b.id, str(b.id)) for e in emu.errors
        ),
        20,
    )
    assert any(e["error_code"] == error.code and e["params"].get("chat_id") in (a.id, str(a.id)) for e in emu.errors)
    assert await live.store.records.can_dm(a.id) and await live.store.records.can_dm(b.id)
    emu.fault = None
    # b's join tap seats b (no deep link: the bot still writes to b)
    lobby = emu.last_message(group.id, lambda m: cb(m, "j:"))
    answer = await (await b.tap(lobby, cb(lobby, "j:")[0])).answer(15)
    assert not answer.get("url")
    await live.settle()
    table = await live.store.load(cb(lobby, "j:")[0]["callback_data"][2:])
    assert table.seat_of(b.id) is not None
    assert emu.violations == []


# -- 7. forum topics reply implicitly ------------------------------------------------------


async def test_topic_implicit_reply_is_no_reply(live):
    emu = live.emu
    a, b, c, d = (emu.add_user(1700 + i, n) for i, n in enumerate(("Аня", "Борис", "Вера", "Глеб")))
    forum = emu.add_group(-1001700, "Форум", members=[a, b, c, d], admins=[a], is_forum=True)
    topic = await emu.create_topic(forum, "Стол", by=d)  # d created the topic
    gid = await live.open_game(forum, [a, b, d], thread_id=topic)
    # Telegram: a message in a topic that replies to nothing replies to the topic's creation
    uid = await a.send(forum, "/kick", thread_id=topic)
    update = emu.updates[uid]["message"]
    assert update["reply_to_message"]["message_id"] == topic and "forum_topic_created" in update["reply_to_message"]
    await live.settle()
    table = await live.store.load(gid)
    assert not table.seats[table.seat_of(d.id)].by_ai  # the topic's creator keeps their seat
    assert any(m.text and "/kick" in m.text for m in emu.chat_messages(forum.id, from_bot=True) if m.thread_id == topic)
    # a bare /stats shows the sender's own figures, not the topic creator's
    await b.send(forum, "/stats", thread_id=topic)
    await live.settle()
    sent = {c["params"]["text"] for c in emu.calls_by("sendMessage") if c["ok"]}
    for who, shown in ((b, True), (d, False)):
        totals, places = await stats.totals(live.store.records, who.id)
        assert (stats_text("ru", who.first_name, totals, places) in sent) is shown
    # a real reply still names its person
    d_says = await d.send(forum, "/stats", thread_id=topic)
    d_msg = emu.updates[d_says]["message"]["message_id"]
    await a.send(forum, "/kick", thread_id=topic, reply_to=d_msg)
    await live.settle()
    table = await live.store.load(gid)
    seat = table.seat_of(d.id)
    assert seat is None or table.seats[seat].by_ai  # the replied-to person lost their seat
    assert emu.violations == []


# -- 10. edited messages never re-run a command --------------------------------------------


async def test_edited_commands_never_run_again(live):
    emu = live.emu
    a, b = emu.add_user(1800, "Аня"), emu.add_user(1801, "Борис")
    group = emu.add_group(-1800, "Клуб", members=[a, b], admins=[a])
    gid = await live.open_game(group, [a, b], start=False)
    opened = emu.last_message(group.id, lambda m: m.text == "/start_game", from_bot=False)
    uid = await a.send(group, "/add_bot")
    await live.settle()
    assert sum(not s.human for s in (await live.store.load(gid)).seats) == 1
    added = emu.chat_messages(group.id, from_bot=False)[-1]
    assert added.message_id == emu.updates[uid]["message"]["message_id"]
    calls = len(emu.calls)
    for text in ("/add_bot", "/add_bot@cheat_test_bot"):
        eid = await a.edit(added, text)
        assert emu.updates[eid]["edited_message"]["message_id"] == added.message_id
        await live.settle()
    assert sum(not s.human for s in (await live.store.load(gid)).seats) == 1
    assert [c["method"] for c in emu.calls[calls:] if c["method"] not in ("getUpdates", "getMe")] == []
    # an old /start_game edited after the game stopped opens nothing
    await a.send(group, "/stop_game")
    await live.settle()
    assert await live.store.chat_game(group.id, None) is None
    calls = len(emu.calls)
    await a.edit(opened, "/start_game ")
    await live.settle()
    assert await live.store.chat_game(group.id, None) is None
    assert [c["method"] for c in emu.calls[calls:] if c["method"] not in ("getUpdates", "getMe")] == []
    assert emu.violations == []


# -- announcements that waited for the group ------------------------------------------------


async def test_announcements_that_waited_for_the_group_go_out_as_one_message(live):
    """A group that takes nothing for a while (its window full: here a 429 for every message to
    it) gets the showdowns that waited meanwhile in one message, in order, not one each, so the
    board catches up instead of queueing behind them."""
    emu = live.emu
    a, b, c = (emu.add_user(1650 + i, n) for i, n in enumerate(("Аня", "Борис", "Вера")))
    group = emu.add_group(-16050, "Клуб", members=[a, b, c], admins=[a])
    gid = await live.open_game(group, [a, b, c])
    users = {u.id: u for u in (a, b, c)}
    full = ApiError(429, "Too Many Requests: retry after 1", {"retry_after": 1})
    emu.fault = lambda method, raw: full if str(raw.get("chat_id")) == str(group.id) else None

    async def tap(op: str) -> SimUser:
        """The player to move taps their panel's first ``op`` button of the current action."""
        table = live.store._tables[gid]  # the owner's table in memory (no settling: the group lane waits)
        user = users[table.seats[table.state.current].user_id]
        prefix = f"{op}:{gid}:{table.action_count}"
        panel = await emu.wait_for(lambda: (m := live.panel(user, gid)) and cb(m, prefix) and m, timeout=20)
        await (await user.tap(panel, cb(panel, prefix)[0])).answer(15)
        return user

    for _ in range(2):
        count = live.store._tables[gid].action_count
        await tap("k")
        await tap("p")
        await emu.wait_for(lambda count=count: live.store._tables[gid].action_count == count + 1, timeout=20)
        await tap("c")
        await emu.wait_for(lambda count=count: live.store._tables[gid].action_count == count + 2, timeout=20)
    since = max(m.message_id for m in emu.chat_messages(group.id))
    emu.fault = None
    await emu.wait_message(group.id, lambda m: (m.text or "").count("Заявка") == 2, since=since, timeout=20)
    await live.settle()
    showdowns = [
        m.text
        for m in emu.chat_messages(group.id, from_bot=True)
        if m.message_id > since and "Заявка" in (m.text or "")
    ]
    assert len(showdowns) == 1, showdowns
    assert [part.count("Заявка") for part in showdowns[0].split("\n\n")] == [1, 1]  # one paragraph each
    assert emu.violations == []
