"""One person cannot spend everyone's budget (issue 26 item 3).

Driven through the Bot API emulator against the bot's real Application (in-process,
:mod:`tests.tgbot.live`) and a private redis-server, counting what the emulator received: a
stranger toggling Join and Leave causes at most a few group messages a minute (Telegram's real
group window); 300 card-pick taps from one player are each answered at once and redraw their panel
about once a second, ending on the last pick; 300 ``/help`` take at most a person's share of the
overall window. The share and the overall window's order on a virtual clock (the limiter's); one
chat's backlog of updates holds up no other chat's.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.tgbot.live import cb, running
from tests.tgbot.test_ingest import LEASE_VALUE, ready, update
from tests.tgbot.test_ratelimit import Rig, settle
from tgbot.ingest import consumer as consumer_module
from tgbot.ingest.consumer import Consumer
from tgbot.render.menus import help_text
from tgbot.sync.ratelimit import SAFETY, Priority, ThrottledError, counted

pytestmark = pytest.mark.e2e

DB = 3

#: A person's share of Telegram's 30 messages a second (issue 26: "at most about 5 of the 30").
SHARE = 5
#: Group messages someone outside the game may cause a minute (issue 26: "at most about 3").
CAUSE_CAP = 3


@pytest.fixture
async def live(redis_server):
    async with running(redis_server.url.replace("/0", f"/{DB}")) as bot:
        yield bot


@pytest.fixture
async def real_limits(redis_server):
    """A bot with Telegram's real group limit (20 messages a minute)."""
    async with running(redis_server.url.replace("/0", f"/{DB}"), group_window=60.0) as bot:
        yield bot


async def _handled(live, timeout: float = 60) -> None:
    """Every update queued so far fetched and processed (the view sync may still wait)."""
    await live.emu.wait_for(lambda: not live.emu.pending_updates, timeout)
    runner = live.runner
    while await runner.redis.xlen(runner.ingest.stream) > 0 or runner.consumer._chains:
        await runner.consumer.idle()
        await live.emu.wait_for(lambda: True, 0.1)


def _counted_calls(emu, chat_id, since, method=None):
    """The bot's counted calls Telegram accepted in a chat from call ``since`` on."""
    return [
        c
        for c in emu.calls[since:]
        if c["chat_id"] == chat_id and counted(c["method"]) and c["ok"] and method in (None, c["method"])
    ]


def _most_in_a_second(calls) -> int:
    """The most of ``calls`` within any second (by the emulator's clock)."""
    times = sorted(c["time"] for c in calls)
    return max((sum(1 for u in times if t <= u < t + 1.0) for t in times), default=0)


# -- a stranger's Join and Leave ---------------------------------------------------------------


async def test_a_stranger_toggling_join_and_leave_causes_a_few_group_messages_a_minute(real_limits):
    live = real_limits
    emu = live.emu
    a, b, stranger = emu.add_user(2601, "Аня"), emu.add_user(2602, "Борис"), emu.add_user(2603, "Чужак")
    group = emu.add_group(-1002600, "Клуб", members=[a, b, stranger], admins=[a], is_forum=True)
    topic = await emu.create_topic(group, "Стол")
    await b.start_bot(answered=True)
    await stranger.start_bot(answered=True)
    gid = await live.open_game(group, [a], thread_id=topic, start=False)
    lobby = emu.last_message(group.id, lambda m: cb(m, f"j:{gid}"))
    since = len(emu.calls)
    taps = [await stranger.tap(lobby, cb(lobby, "j:" if n % 2 == 0 else "l:")[0], strict=False) for n in range(20)]
    for tap in taps:
        assert await tap.answer(15)  # each tap answered
    await _handled(live)
    caused = _counted_calls(emu, group.id, since)
    assert len(caused) <= CAUSE_CAP, caused
    # the stranger is not seated (20 taps); a member's Join is drawn at once, with what is true now
    await (await b.tap(lobby, cb(lobby, "j:")[0], strict=False)).answer(15)
    board = await emu.wait_for(lambda: (m := emu._msg(group.id, lobby.message_id)) and "Борис" in m.text and m, 20)
    assert "Чужак" not in board.text
    assert len(_counted_calls(emu, group.id, since)) <= CAUSE_CAP + 1
    assert [e for e in emu.errors if e["error_code"] == 429] == []
    assert emu.violations == []


# -- one player's taps on their own panel --------------------------------------------------------


async def test_300_card_picks_are_each_answered_and_redraw_the_panel_about_once_a_second(real_limits):
    live = real_limits  # (a private chat takes 3 messages per 3 s there)
    emu = live.emu
    people = [emu.add_user(2610 + n, name) for n, name in enumerate(("Аня", "Борис", "Вера"))]
    group = emu.add_group(-2610, "Клуб", members=people, admins=people[:1])
    gid = await live.open_game(group, people)
    table = await live.store.load(gid)
    tapper = next(u for u in people if u.id == table.seats[table.state.current].user_id)
    panel = await emu.wait_for(lambda: (p := live.panel(tapper, gid)) and cb(p, "k:") and p, 20)
    picks = [button["callback_data"] for button in cb(panel, "k:")[:2]]
    since = len(emu.calls)
    taps = [await tapper.tap(panel, picks[n % 2], strict=False) for n in range(300)]
    for tap in taps:
        assert (await tap.answer(15))["callback_query_id"]  # each tap answered
    await _handled(live)
    last = picks[299 % 2].split(":")[-1]  # the cards the last tap picked
    final = await emu.wait_for(
        lambda: (p := live.panel(tapper, gid)) and any(b["callback_data"].split(":")[3] == last for b in cb(p, "p:")),
        20,
    )
    assert final
    redraws = _counted_calls(emu, tapper.id, since, "editMessageText")
    assert 1 <= _most_in_a_second(redraws) <= emu.private_rate, len(redraws)  # a burst, then about one a second
    assert _most_in_a_second(_counted_calls(emu, tapper.id, since)) <= SHARE
    assert emu.violations == []


async def test_a_flood_of_help_commands_takes_at_most_a_persons_share(live):
    """40 /help at once: each answered (a reply waits for the share, as for its chat's window),
    never more than the share in a second, and no update set aside."""
    emu = live.emu
    user = emu.add_user(2620, "Аня")
    await user.start_bot(answered=True)
    since = len(emu.calls)
    for _ in range(40):
        await user.send(user, "/help")
    await _handled(live)
    helps = [c for c in _counted_calls(emu, user.id, since) if c["params"].get("text") == help_text("ru")]
    assert len(helps) == 40
    assert _most_in_a_second(helps) <= SHARE
    assert emu.violations == []
    runner = live.runner
    assert await runner.redis.xlen(runner.ingest.keys.dead_letters) == 0


# -- the share and the overall window's order, on a virtual clock -------------------------------


async def test_a_persons_replies_past_their_share_wait_for_it_a_redraw_is_not_made_a_games_goes():
    rig = Rig(overall_max=30, overall_period=1.0, private_max=100)  # (the share, not the chat's window)
    replies = [rig.call(42, f"reply {n}") for n in range(SHARE + 2)]
    redraw = rig.call(42, "redraw", defer=True, priority="own")  # a redraw of their own panel
    game = rig.call(42, "turn panel", defer=True, priority=Priority.GAME)
    other = rig.call(43, "another person")
    await settle()
    assert [r.result() for r in replies[:SHARE]] == [True] * SHARE
    assert not any(r.done() for r in replies[SHARE:])  # waiting for the share, as for a window
    assert isinstance(redraw.exception(), ThrottledError)
    assert game.result() is True and other.result() is True
    await rig.clock.advance(SAFETY + 0.001)
    assert all(r.result() is True for r in replies[SHARE:])
    assert all(rig.time_of(f"reply {n}") == pytest.approx(SAFETY, abs=0.01) for n in range(SHARE, SHARE + 2))


async def test_a_games_call_waiting_for_the_overall_window_is_not_overtaken_by_replies():
    rig = Rig(overall_max=5, overall_period=1.0, group_max=100)
    for n in range(5):
        await rig.call(100 + n, f"first {n}")
    replies = [rig.call(200 + n, f"reply {n}") for n in range(6)]
    await rig.clock.advance(0.1)
    showdown = rig.call(-1, "showdown", defer=True)  # the view sync's
    await rig.clock.advance(SAFETY - 0.1 + 0.001)
    assert showdown.result() is True and rig.time_of("showdown") == pytest.approx(SAFETY, abs=0.01)
    await rig.clock.advance(2 * SAFETY)
    assert all(r.result() is True for r in replies)


# -- one chat's backlog of updates ---------------------------------------------------------------


@pytest.mark.parametrize("redis", ["fake"], indirect=True)
async def test_one_chats_backlog_holds_up_no_other_chats_update(redis, monkeypatch):
    monkeypatch.setattr(consumer_module, "IN_FLIGHT", 4)
    gate, other = asyncio.Event(), asyncio.Event()

    async def process(data: dict, last_try: bool) -> bool:
        if data["update_id"] == 100:
            await gate.wait()  # the first of one person's 10 updates takes long
        if data["update_id"] == 200:
            other.set()
        return True

    ingest = await ready(redis)
    consumer = Consumer(ingest, redis, "holder-1", process)
    reading = asyncio.create_task(consumer.run())
    elsewhere = update(200)
    elsewhere["message"]["chat"]["id"] = elsewhere["message"]["from"]["id"] = 6
    polled = asyncio.create_task(consumer.polled([update(100 + n) for n in range(10)] + [elsewhere], LEASE_VALUE, 201))
    try:
        await asyncio.wait_for(other.wait(), 10)  # before the person's backlog is done
        assert not gate.is_set()
        gate.set()
        assert await asyncio.wait_for(polled, 10)
        await asyncio.wait_for(consumer.idle(), 10)
    finally:
        gate.set()
        for task in (polled, reading):
            task.cancel()
        await asyncio.gather(polled, reading, return_exceptions=True)
