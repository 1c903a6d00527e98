"""What one person's commands may make the bot post in a group: bounded, never at a game's expense.

A group gets about 20 messages a minute, edits included
(https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this), and a running
game needs them. So a command's reply is posted in a group only when (else not at all; the
command's effect still happens):

- no game runs anywhere in the group, or the asker is seated at, or created, one of its live
  games, or is an admin: a *bystander* gets nothing there (/rules, /help, /stats, /top answer
  privately, /notify_me confirms privately);
- the person's identical command (text, topic, replied-to message) got no reply within
  :data:`REPLY_WINDOW` seconds;
- the person got fewer than :data:`REPLY_CAP` replies in the group within that window.

:class:`ReplyGate`, a PTB handler of group -1, records each group command's asker in
:data:`ASKER` (each update runs in a task of its own); :func:`hush` is asked before each group
reply (:func:`tgbot.handlers.common.reply`, /board) and decides once per update. The budget lives in
the active process's memory: a take-over starts it afresh.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum

from telegram import Update
from telegram.constants import ChatType
from telegram.ext import ContextTypes

from tgbot.game.table import Status
from tgbot.handlers.identity import actor_id, is_admin
from tgbot.owner.store import Store

log = logging.getLogger(__name__)

#: Seconds over which a person's replies in a group are bounded (Telegram's group window).
REPLY_WINDOW = 60.0
#: Replies one person may get in one group within :data:`REPLY_WINDOW` (someone trying the
#: bot's commands one after the other is answered; someone cycling through them is not).
REPLY_CAP = 5


class Hush(StrEnum):
    """Why a reply to a command is not posted in its group."""

    GAME = "game"  #: a game runs in the group and the asker is a bystander
    REPEAT = "repeat"  #: the asker's identical command was answered within the window
    SPENT = "spent"  #: the asker had REPLY_CAP replies in this group within the window


class ReplyBudget:
    """Each person's replies per group: (group id, user id) → (clock seconds, command key) of
    the replies posted within ``window`` seconds, at most ``cap``. ``clock``: for tests."""

    def __init__(
        self, window: float = REPLY_WINDOW, cap: int = REPLY_CAP, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.window, self.cap, self._clock = window, cap, clock
        self._posted: dict[tuple[int, int], deque[tuple[float, str]]] = {}
        self._sweep_at = 1024  # forget people without a recent reply when this many are known

    def take(self, chat_id: int, user_id: int, command: str) -> Hush | None:
        """Spend one reply of ``user_id`` in ``chat_id`` to ``command`` (a :func:`command_key`);
        ``None`` when it may be posted, else why not (nothing is spent)."""
        now = self._clock()
        if len(self._posted) >= self._sweep_at:
            self._posted = {
                key: posted for key, posted in self._posted.items() if posted and posted[-1][0] > now - self.window
            }
            self._sweep_at = 2 * len(self._posted) + 1024
        posted = self._posted.setdefault((chat_id, user_id), deque())
        while posted and posted[0][0] <= now - self.window:
            posted.popleft()
        if any(key == command for _, key in posted):
            return Hush.REPEAT
        if len(posted) >= self.cap:
            return Hush.SPENT
        posted.append((now, command))
        return None


def command_key(update: Update) -> str:
    """What makes two commands identical: the topic, the command (lower case, without
    ``@botname``), its arguments (spaces collapsed) and the replied-to message."""
    message = update.effective_message
    assert message is not None
    words = (message.text or "").split()
    command = words[0].partition("@")[0].lower() if words else ""
    replied = message.reply_to_message.message_id if message.reply_to_message is not None else 0
    thread = message.message_thread_id if message.is_topic_message else 0
    return f"{thread}|{command}|{' '.join(words[1:])}|{replied}"


async def game_running(store: Store, chat_id: int) -> bool:
    """Whether a game is being played in the chat, in any of its forum topics."""
    return any(table.status is Status.PLAYING for table in await store.chat_games(chat_id))


@dataclass
class Asker:
    """A command sent in a group: who, where, what (:func:`command_key`), and the verdict once
    :meth:`hush` decided it."""

    update: Update
    context: ContextTypes.DEFAULT_TYPE
    store: Store
    budget: ReplyBudget
    chat_id: int
    user_id: int
    command: str
    verdict: Hush | None = field(default=None, init=False)
    decided: bool = field(default=False, init=False)

    async def hush(self) -> Hush | None:
        """Why no reply may be posted (``None``: it may); decided (and spent) once."""
        if not self.decided:
            self.verdict = (
                Hush.GAME if await self._bystander() else self.budget.take(self.chat_id, self.user_id, self.command)
            )
            self.decided = True
            if self.verdict is not None:
                log.debug("reply to %s in %s not posted: %s", self.user_id, self.chat_id, self.verdict)
        return self.verdict

    async def _bystander(self) -> bool:
        """A game runs in the chat and the asker neither sits at nor created one of its live
        games, nor is an admin (one getChatMember, asked only then)."""
        tables = await self.store.chat_games(self.chat_id)
        if not any(table.status is Status.PLAYING for table in tables):
            return False
        actor = actor_id(self.update)
        if actor and any(table.seat_of(actor) is not None or table.creator == actor for table in tables):
            return False
        return not await is_admin(self.context, self.chat_id, self.update)


#: The command of the update being processed in this task, when it was sent in a group.
ASKER: ContextVar[Asker | None] = ContextVar("asker", default=None)


async def hush(update: Update) -> Hush | None:
    """Why the reply to ``update`` may not be posted in its group (``None``: it may; always so
    for anything but a command sent in a group)."""
    asker = ASKER.get()
    if asker is None or asker.update is not update:
        return None
    return await asker.hush()


class ReplyGate:
    """The PTB handler (group -1) that records each group command's :class:`Asker` (one
    :class:`ReplyBudget` per process); it never stops the command."""

    def __init__(self, budget: ReplyBudget | None = None) -> None:
        self.budget = budget or ReplyBudget()

    async def check(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Record the command's asker for :func:`hush` (groups only)."""
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None or chat.type == ChatType.PRIVATE or update.effective_message is None:
            return
        store = context.application.bot_data["services"].store
        ASKER.set(Asker(update, context, store, self.budget, chat.id, user.id, command_key(update)))
