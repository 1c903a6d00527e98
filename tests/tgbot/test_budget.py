"""One person cannot drain the bot's message budget (issue 16 item 11).

Driven through the Bot API emulator (tests/fakes/botapi.py) against the bot's real Application
(in-process, :mod:`tests.tgbot.live`) and a private redis-server: a blocked player's note once
per game, whatever block and unblock cycles and restarts come; bystanders' commands during a
game never delay its showdown, at Telegram's real group limit; a person's repeated commands get
one reply; every group message a handler sends is a REPLY, every one the view sync sends a GAME
message. The reply budget itself on a virtual clock (:class:`tgbot.handlers.budget.ReplyBudget`).
"""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.tgbot.live import cb, live_fixture, running
from tgbot.handlers.budget import REPLY_CAP, REPLY_WINDOW, Hush, ReplyBudget
from tgbot.i18n import translator
from tgbot.render.announcements import note, unreachable
from tgbot.render.board import board
from tgbot.render.menus import help_text, private_hint, rules
from tgbot.render.text import group_title, name
from tgbot.sync.causes import CAUSE_CAP
from tgbot.sync.ratelimit import Priority, RateLimiter, counted, priority_of

pytestmark = pytest.mark.e2e

DB = 7

live = live_fixture(DB)

#: A bystander's flood during a game: the replies that went to the group before the fix
#: (/board posts the board anew, /start_game, /language and /notify_me answer there) and those
#: that never did (/rules, /stats: privately).
FLOOD = ("/rules", "/stats", "/board", "/start_game", "/language", "/notify_me")
#: Seconds a showdown may take to reach the group when the game's own messages leave room in
#: its window (processing only: the tap, the commit, one sendMessage).
SHOWDOWN_SLACK = 5.0


@pytest.fixture
async def real_limits(redis_server):
    """A :func:`running` bot with Telegram's real group limit (20 messages a minute)."""
    async with running(redis_server.url.replace("/0", f"/{DB}"), group_window=60.0) as bot:
        yield bot


def _people(emu, base, names=("Аня", "Борис", "Вера", "Глеб", "Даша", "Егор", "Жора", "Зоя")):
    return [emu.add_user(base + i, n) for i, n in enumerate(names)]


def _sends(emu, chat_id):
    """The bot's messages Telegram accepted in a chat, as calls (params, time)."""
    return [c for c in emu.calls_by("sendMessage", chat_id) if c["ok"]]


def _bot_texts(emu, chat_id):
    """The texts (HTML, as sent) of the bot's messages in a chat."""
    return [c["params"]["text"] for c in _sends(emu, chat_id)]


def _window(emu, chat_id):
    """The bot's counted calls to a chat in Telegram's last group window (with a margin)."""
    return [
        c
        for c in emu.calls_by(None, chat_id)
        if counted(c["method"]) and c["time"] > time.time() - emu.group_window * 1.05
    ]


def _by_handler() -> bool:
    """Whether an update is being processed in this task (the consumer names those tasks)."""
    task = asyncio.current_task()
    return task is not None and task.get_name().startswith("update-")


class PriorityLog:
    """Every counted call to a group the limiter let through: (method, priority, whether a
    handler made it: an update was being processed)."""

    def __init__(self, limiter: RateLimiter) -> None:
        self.calls: list[tuple[str, Priority, bool]] = []
        process = limiter.process_request

        async def recording(callback, args, kwargs, endpoint, data, rate_limit_args):
            chat = data.get("chat_id")
            if counted(endpoint) and isinstance(chat, int) and chat < 0:
                self.calls.append((endpoint, priority_of(rate_limit_args), _by_handler()))
            return await process(callback, args, kwargs, endpoint, data, rate_limit_args)

        limiter.process_request = recording


# -- a note about a blocked player: once per game ---------------------------------------------


async def test_a_blocked_players_note_is_posted_once_per_game(live):
    emu = live.emu
    a, b, c = _people(emu, 7100, ("Аня", "Борис", "Вера"))
    group = emu.add_group(-7001, "Клуб", members=[a, b, c], admins=[a])
    gid = await live.open_game(group, [a, b, c])
    table = await live.store.load(gid)
    note = unreachable(table, table.seat_of(b.id), emu.bot_username)
    for cycle in range(4):
        if cycle == 2:  # a restart in the middle: the note is remembered with the game
            await live.stop()
            await live.start()
        b.block_bot()
        await live.settle()
        assert not await live.store.records.can_dm(b.id)
        assert _bot_texts(emu, group.id).count(note) == 1, cycle
        old = live.panel(b, gid)
        await b.start_bot()
        await live.settle()
        await emu.wait_for(lambda old=old: (p := live.panel(b, gid)) and p.message_id > old.message_id, 20)
    # a 403 without a membership update (the update was lost) is the same note: not again
    users = {u.id: u for u in (a, b, c)}
    while (t := await live.store.load(gid)).seats[(t.state.current + 1) % 3].user_id != b.id:
        await live.play_one(gid, users)
    b.blocked = True
    await live.play_one(gid, users)  # b's turn: their panel is sent anew, and meets a 403
    await live.settle()
    assert any(e["error_code"] == 403 and e["params"].get("chat_id") in (b.id, str(b.id)) for e in emu.errors)
    assert _bot_texts(emu, group.id).count(note) == 1
    assert emu.violations == []


# -- bystanders' commands never delay the game ------------------------------------------------


@pytest.mark.parametrize("forum", [False, True], ids=["group", "forum"])
async def test_a_bystanders_flood_never_delays_the_showdown_at_real_limits(real_limits, forum):
    # in a forum the game runs in a topic and the flood comes in General: the group's 20
    # messages a minute are shared by all its topics
    live = real_limits
    emu = live.emu
    people = _people(emu, 7200)
    players, bystanders = people[:3], people[3:]
    group = emu.add_group(-1007002 if forum else -7002, "Клуб", members=people, admins=players[:1], is_forum=forum)
    topic = await emu.create_topic(group, "Стол") if forum else None
    log = PriorityLog(live.app.bot.rate_limiter)
    for u in bystanders[:3]:  # some of them can be written to privately, some not
        await u.start_bot(answered=True)
    gid = await live.open_game(group, players, thread_id=topic)
    users = {u.id: u for u in players}
    await live.play_one(gid, users)
    table = await live.store.load(gid)
    doubter = users[table.seats[table.state.current].user_id]
    panel = await emu.wait_for(lambda: (p := live.panel(doubter, gid)) and cb(p, "c:") and p, 20)
    assert len(_window(emu, group.id)) <= 15  # the game's own messages leave room in the window
    flood_start = len(log.calls)
    for command in FLOOD:
        for u in bystanders:
            await u.send(group, command)
    # the last command's private answer shows the flood handled (one chat's updates are
    # handled in order), or, as before the fix, the flood's replies have filled the window
    last, helps = bystanders[0], _bot_texts(emu, bystanders[0].id).count(help_text("ru"))
    await last.send(group, "/help")
    await emu.wait_for(
        lambda: (
            len(_window(emu, group.id)) >= emu.group_rate or _bot_texts(emu, last.id).count(help_text("ru")) > helps
        ),
        120,
    )
    tapped = time.time()
    await (await doubter.tap(panel, cb(panel, "c:")[0])).answer(15)
    doubt = translator("ru").t("{challenger}: «I doubt it!»", challenger=name(table, table.seat_of(doubter.id)))
    showdown = await emu.wait_for(
        lambda: next((c for c in _sends(emu, group.id) if doubt in c["params"]["text"]), None), 90
    )
    assert showdown["time"] - tapped < SHOWDOWN_SLACK, f"the showdown waited {showdown['time'] - tapped:.1f} s"
    await live.settle(60)
    # the group heard nothing of the flood (in a forum, the first /start_game opened a lobby in
    # General: its creator is no bystander, and gets a few replies); the bystanders who can be
    # written to were answered privately
    replies = [call for call in log.calls[flood_start:] if call[2]]
    assert len(replies) <= (REPLY_CAP if forum else 0), replies
    for u in bystanders[1 if forum else 0 : 3]:
        texts = [c["params"]["text"] for c in _sends(emu, u.id)]
        assert rules("ru") in texts  # /rules
        assert note("notify_on_private", "ru", group=group_title(group.title)) in texts  # /notify_me
    # a player's /board is answered: the board posted anew at the bottom
    await players[1].send(group, "/board", thread_id=topic)
    await live.settle(60)
    assert _bot_texts(emu, group.id)[-1] == board(await live.store.load(gid), emu.bot_username).text
    assert [e for e in emu.errors if e["error_code"] == 429] == []
    # every group message a handler sent is a reply, every one the sync sent the game's
    assert {(priority, by_handler) for _, priority, by_handler in log.calls} == {
        (Priority.REPLY, True),
        (Priority.GAME, False),
    }
    assert emu.violations == []


# -- a person's repeated commands ---------------------------------------------------------------


async def test_repeated_commands_get_one_reply_and_a_person_a_few(live):
    emu = live.emu
    a, b, c = _people(emu, 7300, ("Аня", "Борис", "Вера"))
    group = emu.add_group(-7003, "Клуб", members=[a, b, c], admins=[a])
    await b.start_bot(answered=True)
    await live.open_game(group, [a], start=False)  # a lobby: no game is running
    before = len(_bot_texts(emu, group.id))
    repeated = ("/start_game", "/start_game", "/start_game@cheat_test_bot", "/notify_me", "/notify_me")
    distinct = ("/language", "/board", "/rules", "/top", "/help", "/stats")
    assert 2 + len(distinct) > REPLY_CAP
    for command in repeated + distinct:
        await b.send(group, command)
    for _ in range(3):
        await c.send(group, "/rules")  # c never started the bot: a hint in the group, once
    await live.settle()
    replies = _bot_texts(emu, group.id)[before:]
    already = translator("ru").t("A game is already open here. /board shows it.")
    assert replies.count(already) == 1
    assert replies.count(note("notify_on", "ru")) == 1
    assert replies.count(private_hint("ru", False)) == 1
    # b, outside the lobby: CAUSE_CAP replies in a minute (a player: REPLY_CAP), then none
    assert len(replies) == CAUSE_CAP + 1, replies
    # what the commands do still happens: b asked to be told, b got the rules privately
    assert await live.store.redis.sismember(f"{live.store.keys.prefix}:notify:{group.id}", str(b.id))
    assert rules("ru") in _bot_texts(emu, b.id)
    assert emu.violations == []


# -- the budget on a virtual clock --------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_reply_budget_answers_a_command_once_and_a_person_a_few_times_a_window():
    clock = Clock()
    budget = ReplyBudget(clock=clock)
    assert budget.take(-1, 5, "/rules") is None
    assert budget.take(-1, 5, "/rules") is Hush.REPEAT
    assert budget.take(-2, 5, "/rules") is None  # another group
    assert budget.take(-1, 6, "/rules") is None  # another person
    clock.now += 1.0
    for n in range(REPLY_CAP - 1):
        assert budget.take(-1, 5, f"/command{n}") is None
    assert budget.take(-1, 5, "/top") is Hush.SPENT
    clock.now += REPLY_WINDOW - 1.01
    assert budget.take(-1, 5, "/rules") is Hush.REPEAT
    clock.now += 0.02  # the first reply has left the window
    assert budget.take(-1, 5, "/rules") is None
    assert budget.take(-1, 5, "/top") is Hush.SPENT


def test_the_reply_budget_forgets_people_without_a_recent_reply():
    clock = Clock()
    budget = ReplyBudget(clock=clock)
    for user in range(1024):
        budget.take(-1, user, "/rules")
        clock.now += 0.001
    clock.now += REPLY_WINDOW
    budget.take(-1, 0, "/rules")
    assert len(budget._posted) == 1


async def test_stop_game_for_a_new_game_is_no_repeat(live):
    """An admin stops a game, opens a new one and asks to stop it within the minute: the command's
    text is the same, its game is not, so it is answered (the repeat rule hushes nothing here)."""
    emu = live.emu
    a, b, c = _people(emu, 7400, ("Аня", "Борис", "Вера"))
    group = emu.add_group(-7004, "Клуб", members=[a, b, c], admins=[a])
    for _ in range(2):
        await live.open_game(group, [a, b, c])
        since = len(emu.calls)
        await a.send(group, "/stop_game")
        await live.settle()
        asked = [
            call
            for call in emu.calls[since:]
            if call["method"] == "sendMessage" and "y:" in str(call["params"].get("reply_markup", ""))
        ]
        assert len(asked) == 1, "the confirmation of this game's stop"
        ask = emu.last_message(group.id, lambda m: cb(m, "y:"))
        await (await a.tap(ask, cb(ask, "y:")[0])).answer(15)
        await live.settle()
        assert await live.store.chat_game(group.id, None) is None
    assert emu.violations == []
