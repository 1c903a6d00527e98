"""The in-process rate limiter (tgbot/process/ratelimit.py): Telegram's overall and group windows hold,
a 429 delays only the chat it names, callback answers and other uncounted calls never wait, a
game's messages go before command replies in one group, deferred calls get ThrottledError, and
a group's window is read (sent) and given to the next holder (recall) at a take-over.

Time is virtual (:class:`Clock`, handed to the limiter): a test moves it on and then lets the
event loop run what became ready; nothing depends on how fast the machine is.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from typing import Any

import pytest
from telegram.error import RetryAfter

from tgbot.sync import ratelimit
from tgbot.sync.ratelimit import (
    CLAIM_GRACE,
    SAFETY,
    Priority,
    RateLimiter,
    ThrottledError,
    counted,
)

UNCOUNTED = (
    "answerCallbackQuery",
    "getUpdates",
    "deleteMessage",
    "setMyCommands",
    "getMe",
    "getChatMember",
    "setWebhook",
    "sendChatAction",
)


async def settle() -> None:
    """Let every task that can run now run (a fixed number of event-loop turns, no wall clock)."""
    for _ in range(50):
        await asyncio.sleep(0)


class Clock:
    """Virtual seconds: ``sleep`` returns when :meth:`advance` has moved past its end."""

    def __init__(self) -> None:
        self.now = 1000.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + seconds, next(self._order), woken))
        await woken

    async def advance(self, seconds: float) -> None:
        """Move time on by ``seconds``, waking the sleepers in the order of their ends."""
        await settle()  # calls started before now run first
        end = self.now + seconds
        while self._sleepers and self._sleepers[0][0] <= end:
            at, _, woken = heapq.heappop(self._sleepers)
            self.now = max(self.now, at)
            if not woken.done():
                woken.set_result(None)
            await settle()
        self.now = end
        await settle()


class Rig:
    """A limiter on a virtual clock, and the Bot API calls it let through: (label, time)."""

    def __init__(self, **params: Any) -> None:
        self.clock = Clock()
        params = {"group_max": 3, "group_period": 40.0, "overall_max": 100, "overall_period": 1.0, **params}
        self.limiter = RateLimiter(**params, clock=self.clock, sleep=self.clock.sleep)
        self.made: list[tuple[str, float]] = []

    def call(
        self,
        chat: int | None,
        label: str,
        endpoint: str = "sendMessage",
        errors: tuple[Exception, ...] = (),
        gate: asyncio.Event | None = None,
        **rate_limit_args: Any,
    ) -> asyncio.Task:
        """Start one call; it raises ``errors`` one after the other at its first attempts,
        and (given ``gate``) stays in flight until the gate opens."""
        left = list(errors)

        async def callback() -> bool:
            self.made.append((label, self.clock.now))
            if gate is not None:
                await gate.wait()
            if left:
                raise left.pop(0)
            return True

        data = {"chat_id": chat} if chat is not None else {}
        return asyncio.ensure_future(
            self.limiter.process_request(callback, (), {}, endpoint, data, rate_limit_args or None)
        )

    def labels(self) -> list[str]:
        return [label for label, _ in self.made]

    def time_of(self, label: str) -> float:
        return next(t - 1000.0 for made, t in self.made if made == label)


def test_counted_methods():
    assert counted("sendMessage") and counted("editMessageText") and counted("copyMessage") and counted("sendPhoto")
    assert not any(counted(m) for m in UNCOUNTED)


async def test_the_group_window_holds_and_other_chats_go_on():
    rig = Rig(group_max=3, group_period=40.0)
    first = [rig.call(-1, f"g{i}", defer=True) for i in range(3)]
    await settle()
    assert all(t.done() and t.result() is True for t in first)
    reply = rig.call(-1, "reply")  # would wait 42 s: dropped at once, past REPLY_WAIT
    deferred = rig.call(-1, "deferred", defer=True)
    others = [rig.call(-2, "other group"), rig.call(42, "private")]
    await settle()
    assert isinstance(reply.exception(), ThrottledError) and isinstance(deferred.exception(), ThrottledError)
    assert deferred.exception().seconds == pytest.approx(40 * SAFETY)
    assert all(t.done() for t in others) and rig.labels() == ["g0", "g1", "g2", "other group", "private"]
    await rig.clock.advance(40 * SAFETY - 0.01)
    early = rig.call(-1, "early", defer=True)
    await settle()
    assert isinstance(early.exception(), ThrottledError)
    await rig.clock.advance(0.02)
    late = rig.call(-1, "on time", defer=True)
    await settle()
    assert late.result() is True and rig.labels()[-1] == "on time"


async def test_a_slot_is_held_until_a_period_after_its_call_finished():
    # Telegram counts a message when it arrives, at the latest when its answer comes back:
    # a call 3 s in flight holds its group's slot until 3 s + the period after it started
    rig = Rig(group_max=1, group_period=4.0)
    gate = asyncio.Event()
    slow = rig.call(-1, "slow", gate=gate)
    await rig.clock.advance(3.0)
    gate.set()
    await settle()
    assert slow.result() is True
    reply = rig.call(-1, "reply")
    await rig.clock.advance(4 * SAFETY - 0.01)
    assert rig.labels() == ["slow"]
    await rig.clock.advance(0.02)
    assert reply.result() is True and rig.time_of("reply") == pytest.approx(3 + 4 * SAFETY, abs=0.02)


async def test_the_overall_window_holds_and_deferred_calls_wait_for_it():
    rig = Rig(overall_max=5, overall_period=1.0, group_max=100)
    calls = [rig.call(100 + i, f"p{i}") for i in range(6)] + [rig.call(-1, "deferred", defer=True)]
    await settle()
    assert rig.labels() == [f"p{i}" for i in range(5)]
    await rig.clock.advance(1 * SAFETY + 0.001)
    assert all(t.done() and t.result() is True for t in calls)
    times = sorted(t for _, t in rig.made)
    assert max(sum(1 for u in times if t <= u < t + SAFETY) for t in times) <= 5


async def test_uncounted_calls_never_wait():
    rig = Rig(group_max=1, overall_max=2)
    await rig.call(-1, "fills both windows")
    blocked = rig.call(-2, "429", errors=(RetryAfter(30),), defer=True)
    await settle()
    assert isinstance(blocked.exception(), RetryAfter)
    # every window full, chat -2 blocked: calls that send no message still go at once
    uncounted = [rig.call(chat, method, endpoint=method) for method in UNCOUNTED for chat in (-1, -2, 42, None)]
    await settle()
    assert all(t.done() and t.result() is True for t in uncounted)
    assert len(rig.made) == 2 + 4 * len(UNCOUNTED)


async def test_a_429_blocks_only_the_chat_it_names_for_its_retry_after():
    rig = Rig(group_max=100)
    hit = rig.call(-7, "hit", errors=(RetryAfter(10),), defer=True)
    await settle()
    assert isinstance(hit.exception(), RetryAfter) and not isinstance(hit.exception(), ThrottledError)
    again = rig.call(-7, "again", defer=True)
    reply = rig.call(-7, "reply")  # 10 s > REPLY_WAIT: dropped
    others = [rig.call(-8, "other group"), rig.call(42, "private"), rig.call(-8, "deferred", defer=True)]
    await settle()
    assert isinstance(again.exception(), ThrottledError) and again.exception().seconds == pytest.approx(10)
    assert isinstance(reply.exception(), ThrottledError)
    assert all(t.done() and t.result() is True for t in others)
    await rig.clock.advance(10.001)
    assert await rig.call(-7, "after the block", defer=True) is True


async def test_a_reply_that_met_a_429_is_made_again_after_it_while_others_go_on():
    rig = Rig()
    reply = rig.call(42, "reply", errors=(RetryAfter(2),))
    await settle()
    other = rig.call(43, "another private chat")
    group = rig.call(-1, "a group")
    await settle()
    assert other.done() and group.done() and not reply.done()
    await rig.clock.advance(2.001)
    assert reply.result() is True and [label for label, t in rig.made if label == "reply"] == ["reply", "reply"]
    assert rig.time_of("another private chat") == 0


async def test_a_game_message_goes_before_a_reply_waiting_for_the_same_group():
    rig = Rig(group_max=2, group_period=4.0)
    period = 4 * SAFETY
    await rig.call(-1, "a")
    await rig.clock.advance(2.0)
    await rig.call(-1, "b")
    reply = rig.call(-1, "reply")  # waits for a's slot, at `period`
    await rig.clock.advance(1.0)
    game = rig.call(-1, "game", priority=Priority.GAME)  # came later, waits for the same slot
    await rig.clock.advance(period - 3 + 0.001)
    assert game.result() is True and not reply.done()
    await rig.clock.advance(2.0)  # b's slot
    assert reply.result() is True
    assert rig.labels() == ["a", "b", "game", "reply"]
    assert rig.time_of("game") == pytest.approx(period, abs=0.01)
    assert rig.time_of("reply") == pytest.approx(period + 2, abs=0.01)
    assert Priority("game") is Priority.GAME  # callers may pass the string


async def test_replies_waiting_for_a_group_never_delay_its_game_messages(monkeypatch):
    # a burst of command replies waits for one group's window: a game message that comes after
    # them (a deferred one, as the view sync makes, and a waiting one) takes each next slot
    monkeypatch.setattr(ratelimit, "REPLY_WAIT", 60.0)
    rig = Rig(group_max=1, group_period=4.0)
    period = 4 * SAFETY
    await rig.call(-1, "board", defer=True)
    replies = [rig.call(-1, f"reply {n}") for n in range(5)]
    await rig.clock.advance(1.0)
    showdown = rig.call(-1, "showdown", defer=True)
    await settle()
    assert isinstance(showdown.exception(), ThrottledError)
    await rig.clock.advance(showdown.exception().seconds)  # the sync sleeps that long, then calls again
    assert await rig.call(-1, "showdown again", defer=True) is True
    result = rig.call(-1, "result", priority=Priority.GAME)
    await rig.clock.advance(period + 0.001)
    assert result.result() is True
    assert rig.labels() == ["board", "showdown again", "result"]
    assert rig.time_of("showdown again") == pytest.approx(period, abs=0.01)
    assert rig.time_of("result") == pytest.approx(2 * period, abs=0.01)
    await rig.clock.advance(6 * period)
    assert all(r.result() is True for r in replies) and rig.labels()[3:] == [f"reply {n}" for n in range(5)]


async def test_a_throttled_game_call_keeps_its_claim_on_the_next_slot(monkeypatch):
    monkeypatch.setattr(ratelimit, "REPLY_WAIT", 60.0)
    rig = Rig(group_max=1, group_period=4.0)
    period = 4 * SAFETY
    await rig.call(-1, "board", defer=True)  # deferred: priority GAME by default
    await rig.clock.advance(1.0)
    sync = rig.call(-1, "sync", defer=True)
    await settle()
    assert isinstance(sync.exception(), ThrottledError)
    reply = rig.call(-1, "reply")  # the slot at `period` is the sync's
    await rig.clock.advance(sync.exception().seconds + 0.001)
    assert rig.labels() == ["board"]
    assert await rig.call(-1, "sync again", defer=True) is True
    await rig.clock.advance(2 * period)
    assert reply.result() is True and rig.labels() == ["board", "sync again", "reply"]


async def test_a_claim_lapses_when_the_game_call_does_not_come_back(monkeypatch):
    monkeypatch.setattr(ratelimit, "REPLY_WAIT", 60.0)
    rig = Rig(group_max=1, group_period=4.0)
    await rig.call(-1, "board", defer=True)
    sync = rig.call(-1, "sync", defer=True)
    await settle()
    assert isinstance(sync.exception(), ThrottledError)
    reply = rig.call(-1, "reply")
    await rig.clock.advance(4 * SAFETY + CLAIM_GRACE - 0.01)
    assert not reply.done()
    await rig.clock.advance(0.02)
    assert reply.result() is True
    assert rig.time_of("reply") == pytest.approx(4 * SAFETY + CLAIM_GRACE)


async def test_a_reply_waits_for_its_group_up_to_reply_wait():
    rig = Rig(group_max=1, group_period=4.0)
    await rig.call(-1, "first")
    reply = rig.call(-1, "waits 4.2 s")
    await rig.clock.advance(4 * SAFETY + 0.001)
    assert reply.result() is True
    long = Rig(group_max=1, group_period=10.0)
    await long.call(-1, "first")
    dropped = long.call(-1, "would wait 10.5 s")
    await settle()
    assert isinstance(dropped.exception(), ThrottledError) and dropped.exception().retry_after == 11
    assert long.labels() == ["first"]


async def test_a_cancelled_waiting_call_leaves_no_trace():
    rig = Rig(group_max=1, group_period=4.0)
    await rig.call(-1, "first")
    game = rig.call(-1, "game", priority="game")
    await settle()
    game.cancel()
    await settle()
    reply = rig.call(-1, "reply")
    await rig.clock.advance(4 * SAFETY + 0.001)
    assert reply.result() is True and rig.labels() == ["first", "reply"]


async def test_sent_lists_a_group_window_with_a_call_in_flight_as_sent_now():
    rig = Rig(group_max=5, group_period=10.0)
    await rig.call(-1, "first")
    await rig.clock.advance(3.0)
    await rig.call(-1, "second")
    await rig.call(42, "private")
    await rig.clock.advance(1.0)
    gate = asyncio.Event()
    flying = rig.call(-1, "in flight", gate=gate)
    await settle()
    assert rig.limiter.sent(-1) == [pytest.approx(4.0), pytest.approx(1.0), 0.0]
    assert rig.limiter.sent(42) == [] and rig.limiter.sent(-9) == []
    await rig.clock.advance(10 * SAFETY - 4 + 0.001)  # the first left the window
    assert rig.limiter.sent(-1) == [pytest.approx(10 * SAFETY - 3 + 0.001), 0.0]
    gate.set()
    assert await flying is True
    rig.limiter.recall(-1, [5.0, 4.0, 3.0, 2.0, 1.0])  # more than the window holds: the newest count
    assert rig.limiter.sent(-1) == [pytest.approx(a) for a in (4.0, 3.0, 2.0, 1.0, 0.0)]


async def test_recall_counts_a_former_holders_messages_in_their_group_window():
    rig = Rig(group_max=3, group_period=10.0)
    period = 10 * SAFETY
    rig.limiter.recall(-1, [9.0, 2.0, 1.0])  # three sent, the oldest 9 s ago: full until it leaves
    rig.limiter.recall(-2, [9.0, 30.0])  # one in the window, one long gone
    rig.limiter.recall(42, [1.0])  # a private chat has no group window
    full = rig.call(-1, "full", defer=True)
    room = [rig.call(-2, "room", defer=True), rig.call(-2, "room too", defer=True), rig.call(42, "private")]
    await settle()
    assert full.exception().seconds == pytest.approx(period - 9)
    assert [t.result() for t in room] == [True, True, True]
    assert isinstance(
        (await asyncio.gather(rig.call(-2, "no room", defer=True), return_exceptions=True))[0], ThrottledError
    )
    await rig.clock.advance(period - 9 + 0.001)
    assert await rig.call(-1, "after the oldest left", defer=True) is True
    assert rig.limiter.sent(-1) == [pytest.approx(period - 7 + 0.001), pytest.approx(period - 8 + 0.001), 0.0]


async def test_idle_chats_are_forgotten():
    rig = Rig(overall_max=10_000)  # a private chat's window: 3 per 3 s

    async def privately(first: int) -> None:
        for i in range(500):
            await rig.call(first + i, "private")
            if i % 50 == 49:
                await rig.clock.advance(3 * SAFETY + 0.01)  # those chats' windows are empty again

    await privately(10_000)
    await rig.call(-1, "group")  # a group's window is kept while it holds a slot
    assert len(rig.limiter._chats) < 200
    await privately(20_000)
    assert "-1" in rig.limiter._chats


async def test_a_process_that_is_not_active_calls_nothing_but_get_me_and_get_updates():
    """A former holder waking from a pause must not reach Telegram (DESIGN.md, Processes): its
    calls are refused before they are made; getMe and getUpdates are any process's."""
    limiter = ratelimit.RateLimiter()
    made: list[str] = []
    active = [False]

    async def may_call() -> bool:
        return active[0]

    limiter.may_call = may_call
    for endpoint in ("sendMessage", "editMessageText", "answerCallbackQuery", "deleteMessage", "getMe", "getUpdates"):

        async def call(endpoint: str = endpoint) -> str:
            made.append(endpoint)
            return endpoint

        try:
            await limiter.process_request(call, (), {}, endpoint, {"chat_id": 1}, None)
        except ratelimit.NotActiveError:
            pass
    assert made == ["getMe", "getUpdates"]
    active[0] = True

    async def send() -> str:
        made.append("sendMessage")
        return "sent"

    assert await limiter.process_request(send, (), {}, "sendMessage", {"chat_id": 1}, None) == "sent"


async def test_a_call_that_waited_for_a_slot_past_the_lease_is_not_made():
    """A call admitted only after a wait for the overall window (or a pause of the process)
    asks the lease again before it is made: the lease may have gone meanwhile."""
    rig = Rig(overall_max=1, overall_period=1.0)
    active = [True]

    async def may_call() -> bool:
        return active[0]

    rig.limiter.may_call = may_call
    first = rig.call(1, "first")
    waiting = rig.call(2, "waiting")  # no overall slot before the first one's period ends
    await rig.clock.advance(0.5)
    assert await first and [label for label, _ in rig.made] == ["first"]
    active[0] = False  # the lease lapsed while it waited
    await rig.clock.advance(1.0)
    with pytest.raises(ratelimit.NotActiveError):
        await waiting
    assert [label for label, _ in rig.made] == ["first"]


async def test_each_private_chat_has_its_window():
    """About one message a second in a private chat, bursts of 3 allowed (3 per 3 s): a fourth
    deferred call is refused until the first leaves the window; another private chat goes on."""
    rig = Rig(private_max=3, private_period=3.0)
    assert [await rig.call(42, f"burst {i}") for i in range(3)] == [True, True, True]
    fourth = (await asyncio.gather(rig.call(42, "fourth", defer=True), return_exceptions=True))[0]
    assert isinstance(fourth, ThrottledError) and fourth.seconds == pytest.approx(3 * SAFETY)
    assert await rig.call(43, "another private chat", defer=True) is True
    await rig.clock.advance(3 * SAFETY + 0.001)
    assert await rig.call(42, "fourth again", defer=True) is True
    rig.limiter.recall(44, [1.0, 0.5, 0.0])  # a former holder's, at a take-over
    refused = (await asyncio.gather(rig.call(44, "after take-over", defer=True), return_exceptions=True))[0]
    assert isinstance(refused, ThrottledError) and refused.seconds == pytest.approx(3 * SAFETY - 1.0)
