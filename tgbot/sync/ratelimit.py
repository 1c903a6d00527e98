"""Telegram's message limits (docs/DESIGN.md, tgbot/), in the active process's memory: a window per
group and per private chat, a 429 blocks only its chat, a deferred call raises
:class:`ThrottledError` instead of waiting, game calls go before replies."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from datetime import timedelta
from enum import StrEnum
from typing import Any

from telegram.error import RetryAfter, TelegramError
from telegram.ext import BaseRateLimiter

from tgbot import metrics
from tgbot.sync.shares import SHARE_PART, PersonShares, Window as _Window

__all__ = ["CLAIM_GRACE", "REPLY_WAIT", "SAFETY", "Priority", "RateLimiter", "ThrottledError", "counted", "priority_of"]

log = logging.getLogger(__name__)

#: Factor on Telegram's periods: its limits are "about" 30 a second, 20 a minute (Bot FAQ).
SAFETY = 1.05
#: Seconds a call without ``defer`` (a command reply) may wait for its chat before it is dropped.
REPLY_WAIT = 5.0
#: Seconds past its ``retry_after`` that a deferred GAME call's claim on its group's next slot lasts.
CLAIM_GRACE = 1.0

_COUNTED_EXTRA = {"copyMessage", "copyMessages", "forwardMessage", "forwardMessages", "stopPoll"}


def counted(endpoint: str) -> bool:
    """Whether Bot API method ``endpoint`` sends or edits a message (is limited)."""
    if endpoint.startswith("send"):
        return endpoint != "sendChatAction"
    return endpoint.startswith("edit") or endpoint in _COUNTED_EXTRA


class Priority(StrEnum):
    """Whose call goes first when several wait for one group's slot."""

    GAME = "game"  #: a game's own messages (boards, panels, announcements)
    REPLY = "reply"  #: replies to commands
    OWN = "own"  #: a redraw of what only the tapper sees (their panel): :mod:`tgbot.sync.shares`


_RANK = {Priority.GAME: 0, Priority.REPLY: 1, Priority.OWN: 2}


def priority_of(rate_limit_args: dict[str, Any] | None) -> Priority:
    """A call's ``priority``, else GAME for a deferred call (the view sync's), else REPLY."""
    options = rate_limit_args or {}
    return Priority(options.get("priority", Priority.GAME if options.get("defer") else Priority.REPLY))


def _is_group(chat_id: object) -> bool:
    """Group, supergroup and channel ids are negative (or ``@username`` strings)."""
    if isinstance(chat_id, str):
        return chat_id.startswith(("-", "@"))
    return isinstance(chat_id, int) and chat_id < 0


class ThrottledError(RetryAfter):
    """A call was not made: its chat has no slot for ``seconds`` (float); ``retry_after`` is that
    rounded up to whole seconds, as Telegram's."""

    def __init__(self, seconds: float) -> None:
        super().__init__(max(1, math.ceil(seconds)))
        self.seconds = seconds


class _Chat:
    """One chat: its window (none for a call without a chat), its 429 block and a GAME call's claim
    (until, clock seconds), and the calls waiting for it as (priority rank, arrival)."""

    def __init__(self, window: _Window | None) -> None:
        self.window = window
        self.blocked_until = self.claim_until = 0.0
        self.waiting: list[tuple[int, int]] = []

    def idle(self, now: float) -> bool:
        """Whether forgetting this chat loses nothing."""
        held = max(self.blocked_until, self.claim_until) > now
        return (self.window is None or self.window.empty(now)) and not held and not self.waiting

    def wait(self, caller: tuple[int, int], now: float) -> float:
        """Seconds until ``caller`` may have the next slot: after the 429 block, and after the GAME
        claim and the waiting calls ahead of it."""
        wait = self.blocked_until - now
        if self.window is not None:
            ahead = sum(1 for other in self.waiting if other < caller)
            slot = self.window.wait(now, ahead + 1)
            if caller[0] > _RANK[Priority.GAME] and self.claim_until > now:
                # the claimed slot is taken, or the claim lapses (then look again)
                slot = min(self.window.wait(now, ahead + 2), max(slot, self.claim_until - now))
            wait = max(wait, slot)
        return max(wait, 0.0)


#: What a Bot API call returns (PTB's JSONDict, or a list of them).
_Result = bool | dict[str, Any] | list[dict[str, Any]]
_Call = Callable[..., Coroutine[Any, Any, _Result]]


#: Bot API methods any process may call (DESIGN.md, Processes: a standby calls getMe at most).
_ANY_PROCESS = frozenset({"getMe", "getUpdates", "get_me", "get_updates"})


class NotActiveError(TelegramError):
    """A Bot API call by a process that is not (or no longer) the active one: never sent."""


class RateLimiter(BaseRateLimiter[dict[str, Any]]):
    """``group_max`` messages per ``group_period`` seconds in each group, ``private_max`` per
    ``private_period`` in each private chat, ``overall_max`` per ``overall_period`` overall (periods
    widened by :data:`SAFETY`). ``max_retries``: how often a call that met a 429 is made again (a
    deferred one never is). ``may_call``: whether this process may call the Bot API now (the lease;
    any other than getMe and getUpdates is refused without). ``clock``, ``sleep``: for tests."""

    def __init__(
        self,
        group_max: int = 20,
        group_period: float = 60.0,
        overall_max: int = 30,
        overall_period: float = 1.0,
        max_retries: int = 3,
        private_max: int = 3,
        private_period: float = 3.0,
        may_call: Callable[[], Awaitable[bool]] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.group_max, self.group_period = group_max, group_period * SAFETY
        self.overall = _Window(overall_max, overall_period * SAFETY)
        self.private_max, self.private_period = private_max, private_period * SAFETY
        self.shares = PersonShares(overall_max // SHARE_PART, overall_period * SAFETY)
        self.max_retries = max_retries
        self._clock, self._sleep = clock, sleep
        self._chats: dict[str, _Chat] = {}
        self._sweep_at = 64  # forget idle chats when this many are known
        self._arrivals = 0
        self.may_call = may_call

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""

    def sent(self, chat_id: object) -> list[float]:
        """Seconds ago of each message counted in the group's window now, oldest first (one in
        flight counts as sent now), the newest ``group_max`` only (they alone decide when the next
        one may go); empty for a private chat or a group not seen."""
        chat = self._chats.get(str(chat_id))
        if chat is None or chat.window is None or not _is_group(chat_id):
            return []
        now, window = self._clock(), chat.window
        ages = [now - end for end in window.ends if end + window.period > now] + [0.0] * window.in_flight
        return ages[-self.group_max :]

    def recall(self, chat_id: object, ages: Iterable[float]) -> None:
        """Count messages sent to the chat (a group or a private chat) ``ages`` seconds ago (by a
        former holder, which this process cannot see) in its window; on becoming active."""
        now = self._clock()
        window = self._chat(chat_id, now).window
        if window is not None:
            for age in sorted(ages, reverse=True):
                if now - age + window.period > now:
                    window.finish(now - age)

    def _chat(self, chat_id: object, now: float) -> _Chat:
        """The chat's state, made on first sight (and forgotten again once idle)."""
        chat = self._chats.get(str(chat_id))
        if chat is None:
            if len(self._chats) >= self._sweep_at:
                self._chats = {key: known for key, known in self._chats.items() if not known.idle(now)}
                self._sweep_at = 2 * len(self._chats) + 64
            window = None
            if _is_group(chat_id):
                window = _Window(self.group_max, self.group_period)
            elif chat_id is not None:
                window = _Window(self.private_max, self.private_period)
            chat = self._chats[str(chat_id)] = _Chat(window)
        return chat

    async def _admit(self, chat_id: object, priority: Priority, defer: bool) -> list[_Window]:
        """Wait for (or refuse with :class:`ThrottledError`) a slot in the chat's window, its
        person's share and the overall window; returns the windows whose slot the call holds
        while in flight."""
        chat, game = self._chat(chat_id, self._clock()), priority is Priority.GAME
        person = self.shares.person(chat_id, game)
        self._arrivals += 1
        caller = (_RANK[priority], self._arrivals)
        chat.waiting.append(caller)
        waited = 0.0
        try:
            while True:
                now = self._clock()
                wait = self._wait(chat, caller, defer, waited, person, now)
                delay = max(wait, self.overall.wait(now, self.shares.need(game)))
                if delay <= 0:
                    break
                queued = game and wait <= 0  # waiting for the overall window alone: goes first
                self.shares.game_waiting += queued
                try:
                    await self._sleep(delay)
                finally:
                    self.shares.game_waiting -= queued
                waited += delay
        finally:
            chat.waiting.remove(caller)
        windows = [self.overall] if person is None else [self.overall, self.shares.window(person, now)]
        if chat.window is not None:
            windows.append(chat.window)
            if game:
                chat.claim_until = 0.0
        for window in windows:
            window.in_flight += 1
        return windows

    def _wait(
        self, chat: _Chat, caller: tuple[int, int], defer: bool, waited: float, person: int | None, now: float
    ) -> float:
        """Seconds ``caller`` waits for its chat and its person's share; raises
        :class:`ThrottledError` when it may not wait (deferred, or a reply past :data:`REPLY_WAIT`)."""
        wait = chat.wait(caller, now)
        if person is not None:
            wait = max(wait, self.shares.wait(person, now))
        if wait > 0 and (defer or waited + wait > REPLY_WAIT):
            if defer and caller[0] == _RANK[Priority.GAME] and chat.window is not None:
                chat.claim_until = max(chat.claim_until, now + wait + CLAIM_GRACE)
            raise ThrottledError(wait)
        return wait

    async def _check_active(self, endpoint: str) -> None:
        """Raise :class:`NotActiveError` unless this process may call ``endpoint`` now."""
        if self.may_call is not None and endpoint not in _ANY_PROCESS and not await self.may_call():
            raise NotActiveError(f"{endpoint}: this process no longer holds the lease")

    async def process_request(
        self,
        callback: _Call,
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: dict[str, Any] | None,
    ) -> _Result:
        """Make an uncounted call at once; admit (or defer, or wait for) a counted one and make it.
        On a 429, block that chat for ``retry_after`` and make the call again (``max_retries`` at
        most; a deferred call re-raises). Raises :class:`ThrottledError` (see the module docstring)."""
        await self._check_active(endpoint)
        if not counted(endpoint):
            with metrics.bot_api_call(endpoint):
                return await callback(*args, **kwargs)
        defer = bool((rate_limit_args or {}).get("defer"))
        priority = priority_of(rate_limit_args)
        chat_id = data.get("chat_id")
        attempt = 0
        while True:
            windows = await self._admit(chat_id, priority, defer)
            try:
                await self._check_active(endpoint)  # again: the wait for a slot may have outlived the lease
                with metrics.bot_api_call(endpoint):
                    return await callback(*args, **kwargs)
            except RetryAfter as error:
                after = error.retry_after
                seconds = after.total_seconds() if isinstance(after, timedelta) else after
                log.warning("429 for chat %s: blocked for %s s", chat_id, seconds)
                chat = self._chat(chat_id, self._clock())
                chat.blocked_until = max(chat.blocked_until, self._clock() + seconds)
                if defer or attempt >= self.max_retries:
                    raise
                attempt += 1
            finally:
                now = self._clock()
                for window in windows:
                    window.in_flight -= 1
                    window.finish(now)
