"""What one person's commands may make the bot post in a group: bounded, never at a game's expense.

Telegram lets a bot post about 20 messages a minute in a group, edits included (TELEGRAM.md), and
a running game needs them for its board, showdowns and result; the rate limiter
(:mod:`tgbot.process.ratelimit`) lets a game's messages go before replies waiting for the same group,
but a reply it has already let through has used a slot. So a command's reply is posted in a
group only when all of these hold (else it is not posted at all; the command's effect still
happens):

- **the group is the game's while one runs**: while a game is running anywhere in the group
  (any forum topic: the 20 a minute are the whole group's), a person who is neither seated at
  one of the group's live games, nor the creator of one, nor an admin of the group (a
  *bystander*) gets no reply in the group. /rules, /help, /stats and /top answer them privately
  (tgbot.handlers.commands), /notify_me confirms privately, anything else is answered nowhere: the board
  in front of them shows why;
- **the same command is answered once**: a person's identical command (same text, topic and
  replied-to message) within :data:`REPLY_WINDOW` seconds gets no second reply in the group
  (the first one is just above);
- **a few replies a minute per person**: at most :data:`REPLY_CAP` replies to one person in one
  group within :data:`REPLY_WINDOW` seconds.

How: :class:`ReplyGate` is a PTB handler of group -1, run before the command's own handler for
every command sent in a group; it records who asked what for the rest of that update in
:data:`ASKER` (a context variable: each update is processed in a task of its own, see
:mod:`tgbot.ingest.stream`). :func:`hush` is asked before each group reply (``tgbot.handlers.commands._reply``,
the /board post): the first time, it decides and spends the asker's budget; later calls for the
same update get the same answer. The budget lives in the memory of the one active process, like
the rate limiter's windows: a take-over starts it afresh, which costs at most one more reply per
person.
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

from tgbot.handlers.identity import actor_id, is_admin
from tgbot.game.table import Status
from tgbot.owner.store import Store

__all__ = ["ASKER", "REPLY_CAP", "REPLY_WINDOW", "Asker", "Hush", "ReplyBudget", "ReplyGate", "command_key", "game_running", "hush"]

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
    """Each person's replies per group: (group id, user id) → the (clock seconds, command key)
    of the replies posted within ``window`` seconds, at most ``cap`` of them. ``clock``: for
    tests (default :func:`time.monotonic`)."""

    def __init__(self, window: float = REPLY_WINDOW, cap: int = REPLY_CAP, clock: Callable[[], float] = time.monotonic) -> None:
        self.window, self.cap, self._clock = window, cap, clock
        self._posted: dict[tuple[int, int], deque[tuple[float, str]]] = {}
        self._sweep_at = 1024  # forget people without a recent reply when this many are known

    def take(self, chat_id: int, user_id: int, command: str) -> Hush | None:
        """Spend one reply of ``user_id`` in ``chat_id`` to ``command`` (a :func:`command_key`);
        ``None`` when it may be posted, else why not (nothing is spent)."""
        now = self._clock()
        if len(self._posted) >= self._sweep_at:
            self._posted = {k: q for k, q in self._posted.items() if q and q[-1][0] > now - self.window}
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
    msg = update.effective_message
    assert msg is not None
    words = (msg.text or "").split()
    command = words[0].partition("@")[0].lower() if words else ""
    replied = msg.reply_to_message.message_id if msg.reply_to_message is not None else 0
    thread = msg.message_thread_id if msg.is_topic_message else 0
    return f"{thread}|{command}|{' '.join(words[1:])}|{replied}"


async def game_running(store: Store, chat_id: int) -> bool:
    """Whether a game is being played in the chat, in any of its forum topics."""
    return any(t.status is Status.PLAYING for t in await store.chat_games(chat_id))


@dataclass
class Asker:
    """A command sent in a group, as the gate saw it: who (``user_id``: the sender, an anonymous
    admin's shared id included), where, what (``command``: :func:`command_key`), and the
    verdict once :meth:`hush` decided it."""

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
        """Why no reply may be posted (see the module docstring), ``None`` when one may; the
        first call decides (and spends the budget), the others repeat it."""
        if not self.decided:
            self.verdict = Hush.GAME if await self._bystander() else self.budget.take(self.chat_id, self.user_id, self.command)
            self.decided = True
            if self.verdict is not None:
                log.debug("reply to %s in %s not posted: %s", self.user_id, self.chat_id, self.verdict)
        return self.verdict

    async def _bystander(self) -> bool:
        """A game runs in the chat and the asker is not seated at, nor created, any of its
        live games, nor is an admin (one getChatMember, asked only then)."""
        tables = await self.store.chat_games(self.chat_id)
        if not any(t.status is Status.PLAYING for t in tables):
            return False
        actor = actor_id(self.update)
        if actor and any(t.seat_of(actor) is not None or t.creator == actor for t in tables):
            return False
        return not await is_admin(self.context, self.chat_id, self.update)


#: The command of the update being processed in this task, when it was sent in a group.
ASKER: ContextVar[Asker | None] = ContextVar("asker", default=None)


async def hush(update: Update) -> Hush | None:
    """Why the reply to ``update`` may not be posted in its group (``None``: it may). Anything
    but a command sent in a group (a private chat, a tap) may always be answered."""
    asker = ASKER.get()
    if asker is None or asker.update is not update:
        return None
    return await asker.hush()


class ReplyGate:
    """The PTB handler (group -1) that records each group command's :class:`Asker`; it never
    stops the command. ``budget``: the replies' :class:`ReplyBudget` (one per process)."""

    def __init__(self, budget: ReplyBudget | None = None) -> None:
        self.budget = budget or ReplyBudget()

    async def check(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Record the command's asker for :func:`hush` (groups only; the store is the
        Services' one, ``bot_data["svc"].store``)."""
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None or chat.type == ChatType.PRIVATE or update.effective_message is None:
            return
        store = context.application.bot_data["svc"].store
        ASKER.set(Asker(update, context, store, self.budget, chat.id, user.id, command_key(update)))
