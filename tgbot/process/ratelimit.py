"""Telegram's message limits, kept in the memory of the bot's one active process.

Bot FAQ: about 30 messages a second overall, about 20 a minute per group (edits count),
answered with 429 and ``retry_after`` beyond (TELEGRAM.md). :class:`RateLimiter` keeps a
sliding-window log overall and one per group; private chats get none (Telegram only
advises about one message a second there), only 429 blocks.

A slot is held from admission until a period after the call *finished*: Telegram counts
a message on arrival, between our admission and our answer, so calls spaced so are a
full period apart at Telegram however long the network or a burst's queue delays them
(the old Redis limiter needed a measured 0.5 s margin, LATENCY, for that).

- Calls that send no message (:func:`counted`: ``answerCallbackQuery``, ``getUpdates``,
  ``deleteMessage``, ``setMyCommands``, ``getMe``, ``getChatMember``, ``setWebhook``...)
  are made at once, whatever the windows and blocks.
- A 429 blocks only the chat it names, for its ``retry_after``; other chats go on.
- ``rate_limit_args={"defer": True}`` (the view sync): a call whose chat has no slot now
  raises :class:`Throttled` at once; the caller sleeps and re-renders the newest state.
  Other calls (command replies) wait for their chat up to :data:`REPLY_WAIT` seconds,
  else are dropped with :class:`Throttled`. Overall waits (about 1 s) are waited out.
- ``rate_limit_args={"priority": Priority.GAME}`` (or ``"game"``; the default with
  ``defer``, else ``Priority.REPLY``): of the calls waiting for one group's slot, GAME
  ones go first, and a deferred GAME call sent back with :class:`Throttled` keeps a
  claim on the group's next slot until it is due back (plus :data:`CLAIM_GRACE`).
- :meth:`RateLimiter.assume_full` after a take-over.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Coroutine
from datetime import timedelta
from enum import StrEnum
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

__all__ = ["CLAIM_GRACE", "REPLY_WAIT", "SAFETY", "Priority", "RateLimiter",
           "Throttled", "counted", "priority_of"]

log = logging.getLogger(__name__)

#: Factor on Telegram's periods: its limits are "about" 30 a second, 20 a minute (FAQ).
SAFETY = 1.05
#: Seconds a command reply (a call without ``defer``) may wait for its chat's slot or
#: 429 block before it is dropped with :class:`Throttled` (a late reply helps nobody).
REPLY_WAIT = 5.0
#: Seconds past its ``retry_after`` that a deferred GAME call's claim on its group's
#: next slot lasts (the sync sleeps exactly that long, re-renders, and calls again).
CLAIM_GRACE = 1.0

_COUNTED_EXTRA = {"copyMessage", "copyMessages", "forwardMessage", "forwardMessages",
                  "stopPoll"}


def counted(endpoint: str) -> bool:
    """Whether Bot API method ``endpoint`` sends or edits a message (is limited)."""
    if endpoint.startswith("send"):
        return endpoint != "sendChatAction"
    return endpoint.startswith("edit") or endpoint in _COUNTED_EXTRA


def priority_of(rate_limit_args: dict[str, Any] | None) -> "Priority":
    """The priority of a call made with ``rate_limit_args``: its ``priority``, else GAME for a
    deferred call (the view sync's), else REPLY (a command's reply)."""
    options = rate_limit_args or {}
    return Priority(options.get("priority", "game" if options.get("defer") else "reply"))


def _is_group(chat_id: object) -> bool:
    """Group, supergroup and channel ids are negative (or ``@username`` strings)."""
    if isinstance(chat_id, str):
        return chat_id.startswith(("-", "@"))
    return isinstance(chat_id, int) and chat_id < 0


class Priority(StrEnum):
    """Whose call goes first when several wait for one group's slot."""

    GAME = "game"  #: a game's own messages (boards, panels, announcements)
    REPLY = "reply"  #: replies to commands


class Throttled(RetryAfter):
    """A call was not made: its chat has no slot for ``seconds`` (exact, float);
    ``retry_after`` is that rounded up to whole seconds, as Telegram's."""

    def __init__(self, seconds: float) -> None:
        super().__init__(max(1, math.ceil(seconds)))
        self.seconds = seconds


class _Slot:
    """One admitted call: ``end`` is when it finished (clock, s); None in flight."""

    __slots__ = ("end",)

    def __init__(self, end: float | None = None) -> None:
        self.end = end


class _Window:
    """A sliding-window log: ``limit`` calls per ``period`` seconds, each call counted
    until ``period`` after it finished."""

    def __init__(self, limit: int, period: float) -> None:
        self.limit, self.period = limit, period
        self.slots: list[_Slot] = []

    def wait(self, now: float, need: int = 1) -> float:
        """Seconds until ``need`` more calls fit (0: now); one in flight counts as
        finishing now."""
        period = self.period
        self.slots = [s for s in self.slots if s.end is None or s.end + period > now]
        over = len(self.slots) + need - self.limit
        if over <= 0:
            return 0.0
        frees = sorted((now if s.end is None else s.end) + period for s in self.slots)
        return (frees[over - 1] if over <= len(frees) else now + period) - now

    def fill(self, end: float) -> None:
        """Count the window as full until ``end`` plus its period."""
        self.slots += [_Slot(end)] * self.limit


class _Chat:
    """One chat: its window (groups only), its 429 block and a deferred GAME call's
    claim (both: until, clock seconds), the calls waiting (priority rank, arrival)."""

    def __init__(self, window: _Window | None) -> None:
        self.window = window
        self.blocked_until = self.claim_until = 0.0
        self.waiting: list[tuple[int, int]] = []

    def idle(self, now: float) -> bool:
        """Whether forgetting this chat loses nothing."""
        window = self.window
        empty = window is None or not window.wait(now, window.limit)
        held = max(self.blocked_until, self.claim_until) > now
        return empty and not held and not self.waiting


_RANK = {Priority.GAME: 0, Priority.REPLY: 1}
#: What a Bot API call returns (PTB's JSONDict, or a list of them).
_Result = bool | dict[str, Any] | list[dict[str, Any]]
_Call = Callable[..., Coroutine[Any, Any, _Result]]


class RateLimiter(BaseRateLimiter[dict[str, Any]]):
    """Telegram's limits in this process; see the module docstring.

    ``group_max`` messages per ``group_period`` seconds in each group, ``overall_max``
    per ``overall_period`` seconds overall (Bot FAQ: 20 per 60 s, 30 per 1 s); periods
    are widened by :data:`SAFETY`. ``max_retries``: how often a call that met a 429 is
    made again (a deferred one never is). ``clock`` (seconds) and ``sleep``: for tests.
    """

    def __init__(self, group_max: int = 20, group_period: float = 60.0,
                 overall_max: int = 30, overall_period: float = 1.0,
                 max_retries: int = 3, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.group_max, self.group_period = group_max, group_period * SAFETY
        self.overall = _Window(overall_max, overall_period * SAFETY)
        self.max_retries = max_retries
        self._clock, self._sleep = clock, sleep
        self._chats: dict[str, _Chat] = {}
        self._sweep_at = 64  # forget idle chats when this many are known
        self._arrivals = 0
        # (end, until): a group first seen before until gets a full window ending at end
        self._full = (0.0, 0.0)

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""

    def assume_full(self, period: float | None = None) -> None:
        """Count every group's window as full for ``period`` seconds from now (default:
        one group window, ``group_period`` times :data:`SAFETY`), and the overall one
        for its own period (at most ``period``); 0 or less: nothing. Call it when this
        process becomes the active one. Known groups get a full window of calls ending
        so; so does a group first seen within ``period`` (no list of the previous
        process's groups is needed)."""
        now = self._clock()
        until = now + (self.group_period if period is None else period)
        if until <= now:
            return
        self._full = (until - self.group_period, until)
        self.overall.fill(min(now, until - self.overall.period))
        for chat in self._chats.values():
            if chat.window is not None:
                chat.window.fill(self._full[0])

    def _chat(self, chat_id: object, now: float) -> _Chat:
        """The chat's state, made on first sight (and forgotten again once idle)."""
        chat = self._chats.get(str(chat_id))
        if chat is None:
            if len(self._chats) >= self._sweep_at:
                known = self._chats.items()
                self._chats = {k: c for k, c in known if not c.idle(now)}
                self._sweep_at = 2 * len(self._chats) + 64
            window = None
            if _is_group(chat_id):
                window = _Window(self.group_max, self.group_period)
                if now < self._full[1]:
                    window.fill(self._full[0])
            chat = self._chats[str(chat_id)] = _Chat(window)
        return chat

    def _chat_wait(self, chat: _Chat, me: tuple[int, int], now: float) -> float:
        """Seconds until caller ``me`` may have the chat's next slot (0: now): after its
        429 block, and after the GAME claim and the waiting calls ahead of ``me``."""
        wait = chat.blocked_until - now
        if chat.window is not None:
            ahead = sum(1 for other in chat.waiting if other < me)
            slot = chat.window.wait(now, ahead + 1)
            if me[0] > _RANK[Priority.GAME] and chat.claim_until > now:
                # the claimed slot is taken, or the claim lapses (then look again)
                lapse = max(slot, chat.claim_until - now)
                slot = min(chat.window.wait(now, ahead + 2), lapse)
            wait = max(wait, slot)
        return max(wait, 0.0)

    async def _admit(self, chat_id: object, priority: Priority,
                     defer: bool) -> list[_Slot]:
        """Wait for (or refuse with :class:`Throttled`) a slot in the chat's window and
        the overall one; returns the slots taken, marked when the call finishes."""
        chat = self._chat(chat_id, self._clock())
        self._arrivals += 1
        me = (_RANK[priority], self._arrivals)
        chat.waiting.append(me)
        waited = 0.0
        try:
            while True:
                now = self._clock()
                wait = self._chat_wait(chat, me, now)
                if wait > 0 and (defer or waited + wait > REPLY_WAIT):
                    if defer and priority is Priority.GAME and chat.window is not None:
                        claim = now + wait + CLAIM_GRACE
                        chat.claim_until = max(chat.claim_until, claim)
                    raise Throttled(wait)
                delay = max(wait, self.overall.wait(now))
                if delay <= 0:
                    break
                await self._sleep(delay)
                waited += delay
        finally:
            chat.waiting.remove(me)
        slots = [_Slot()]
        self.overall.slots.append(slots[0])
        if chat.window is not None:
            slots.append(_Slot())
            chat.window.slots.append(slots[1])
            if priority is Priority.GAME:
                chat.claim_until = 0.0
        return slots

    async def process_request(self, callback: _Call, args: Any, kwargs: dict[str, Any],
                              endpoint: str, data: dict[str, Any],
                              rate_limit_args: dict[str, Any] | None) -> _Result:
        """Make an uncounted call at once; admit (or defer, or wait for) a counted one
        and make it. On a 429, block that chat for ``retry_after`` seconds and make the
        call again (``max_retries`` times at most; a deferred call re-raises). Raises
        :class:`Throttled` for a deferred call whose chat has no slot now, and for any
        other whose chat would have none within :data:`REPLY_WAIT` seconds."""
        if not counted(endpoint):
            return await callback(*args, **kwargs)
        defer = bool((rate_limit_args or {}).get("defer"))
        priority = priority_of(rate_limit_args)
        chat_id = data.get("chat_id")
        attempt = 0
        while True:
            slots = await self._admit(chat_id, priority, defer)
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as error:
                after = error.retry_after
                wait = after.total_seconds() if isinstance(after, timedelta) else after
                log.warning("429 for chat %s: blocked for %s s", chat_id, wait)
                chat = self._chat(chat_id, self._clock())
                chat.blocked_until = max(chat.blocked_until, self._clock() + wait)
                if defer or attempt >= self.max_retries:
                    raise
                attempt += 1
            finally:
                now = self._clock()
                for slot in slots:
                    slot.end = now
