"""What one person's commands may make the bot post in a group (docs/DESIGN.md, tgbot/): nothing for a
bystander of a running game, one reply per identical command per :data:`REPLY_WINDOW`, :data:`REPLY_CAP` in all."""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from enum import StrEnum

from telegram import Update
from telegram.ext import ContextTypes

from tgbot.game.table import Status, Table
from tgbot.handlers.identity import actor_id, is_admin
from tgbot.owner.store import Store
from tgbot.sync.causes import GroupCauses

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


def command_key(update: Update, tables: list[Table]) -> str:
    """What makes two commands identical: the topic, the command (lower case, without
    ``@botname``), its arguments (spaces collapsed), the replied-to message and the chat's live
    games ``tables`` (a new game's ``/stop_game`` is no repeat)."""
    message = update.effective_message
    assert message is not None
    words = (message.text or "").split()
    command = words[0].partition("@")[0].lower() if words else ""
    replied = message.reply_to_message.message_id if message.reply_to_message is not None else 0
    thread = message.message_thread_id if message.is_topic_message else 0
    games = ",".join(sorted(table.id for table in tables))
    return f"{thread}|{command}|{' '.join(words[1:])}|{replied}|{games}"


async def game_running(store: Store, chat_id: int) -> bool:
    """Whether a game is being played in the chat, in any of its forum topics."""
    return any(table.status is Status.PLAYING for table in await store.chat_games(chat_id))


async def hush(
    update: Update, context: ContextTypes.DEFAULT_TYPE, store: Store, budget: ReplyBudget, causes: GroupCauses
) -> Hush | None:
    """Why the reply to a command sent in a group may not be posted there (``None``: it may);
    spends the asker's budget when it may, and for someone outside the chat's games (not an
    admin) one of the group messages they may cause (:class:`GroupCauses`)."""
    chat, user = update.effective_chat, update.effective_user
    chat_id, user_id = chat.id if chat else 0, user.id if user else 0
    tables = await store.chat_games(chat_id)
    key = command_key(update, tables)
    verdict = Hush.GAME if await _bystander(update, context, tables) else budget.take(chat_id, user_id, key)
    if verdict is None and actor_id(update) and not _inside(update, tables) and not causes.spend(chat_id, user_id):
        verdict = None if await is_admin(context, chat_id, update) else Hush.SPENT
    if verdict is not None:
        log.debug("reply to %s in %s not posted: %s", user_id, chat_id, verdict)
    return verdict


async def _bystander(update: Update, context: ContextTypes.DEFAULT_TYPE, tables: list[Table]) -> bool:
    """A game runs in the chat (its live games: ``tables``) and the asker neither sits at nor
    created one of them, nor is an admin (one getChatMember, asked only then)."""
    assert update.effective_chat is not None
    if not any(table.status is Status.PLAYING for table in tables) or _inside(update, tables):
        return False
    return not await is_admin(context, update.effective_chat.id, update)


def _inside(update: Update, tables: list[Table]) -> bool:
    """Whether the asker sits at or created one of the chat's live games ``tables``."""
    actor = actor_id(update)
    return bool(actor) and any(table.seat_of(actor) is not None or table.creator == actor for table in tables)
