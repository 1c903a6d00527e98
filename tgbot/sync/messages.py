"""The sync's Telegram calls (show a message by editing or sending it, delete one) and what
Telegram's errors say of a group (:func:`group_refusal`)."""

from __future__ import annotations

import logging
import warnings
from enum import StrEnum
from typing import Any

import httpx
from telegram import CallbackQuery
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError, TimedOut
from telegram.ext import ExtBot
from telegram.warnings import PTBUserWarning

from tgbot.owner.store import Store
from tgbot.render.text import Rendered

log = logging.getLogger(__name__)

#: Seconds a send or an edit waits for Telegram's answer: longer than Telegram holds a bot's
#: message in a group in slow mode (about 10 s), so a message held is not taken for a lost one.
SEND_READ_TIMEOUT = 15.0

#: rate_limit_args of the sync's sends and edits: do not wait for a group slot, raise ThrottledError
#: (:class:`tgbot.sync.ratelimit.RateLimiter`), so the lane runs again with the newest state.
DEFER = {"defer": True, "priority": "game"}
#: rate_limit_args of a redraw of what only its tapper sees: as DEFER, from the person's share
#: (:mod:`tgbot.sync.shares`), after the games' own messages.
OWN_VIEW = {"defer": True, "priority": "own"}

# Messages calls sendMessage and editMessageText raw on purpose (see Messages)
warnings.filterwarnings("ignore", message=r"Please use 'Bot\.(sendMessage|editMessageText)'", category=PTBUserWarning)


class MaybeSentError(TelegramError):
    """A send whose answer did not come in time: Telegram may have delivered it, so it is never
    sent again blindly (an announcement counts as posted, a panel or board kept is edited next time)."""


def maybe_delivered(error: TelegramError) -> bool:
    """Whether a call that failed with ``error`` may have reached Telegram: its answer timed out
    (not a connection never made, nor a request that found no free connection)."""
    return isinstance(error, TimedOut) and not isinstance(error.__cause__, httpx.ConnectTimeout | httpx.PoolTimeout)


class GroupRefusal(StrEnum):
    """How a game's group refused a message (:func:`group_refusal`)."""

    #: for now: a change of rights undoes it (the announcements wait, the game goes on)
    UNWRITABLE = "unwritable"
    #: for good: the chat no longer exists (every game of it is retired)
    CHAT_GONE = "chat_gone"
    #: for good: the game's forum topic no longer exists (that game is retired)
    TOPIC_GONE = "topic_gone"
    #: for good: the bot is no longer a member of the group (every game of it is retired)
    BOT_REMOVED = "bot_removed"


#: Telegram's answers (parts of the description, lowercase) that a change of rights undoes, all
#: 400 and usually without any update: a read-only group or a restricted bot ("not enough
#: rights to send text messages to the chat", "have no rights to send a message",
#: "CHAT_WRITE_FORBIDDEN", "CHAT_RESTRICTED", "need administrator rights in the channel chat")
#: and a closed forum topic ("TOPIC_CLOSED").
UNWRITABLE_ANSWERS = (
    "not enough rights",
    "have no rights to send",
    "chat_write_forbidden",
    "chat_restricted",
    "need administrator rights",
    "topic_closed",
)
#: … of a chat that no longer exists: 400 "chat not found", "group chat was deactivated"; 403
#: "the group chat was deleted".
CHAT_GONE_ANSWERS = ("chat not found", "chat was deactivated", "chat was deleted")
#: … of a forum topic that no longer exists: 400 "message thread not found", "TOPIC_DELETED".
TOPIC_GONE_ANSWERS = ("message thread not found", "topic_deleted")


def says(error: TelegramError, *texts: str) -> bool:
    """Whether Telegram's description of ``error`` contains one of ``texts`` (lowercase)."""
    description = str(error.message).lower()
    return any(text in description for text in texts)


def group_refusal(error: TelegramError) -> GroupRefusal | None:
    """What Telegram's ``error`` to a message for a group says of the group: a refusal for now,
    a chat or a topic that is no more, any other 403 ("bot was kicked from the supergroup chat",
    "bot is not a member …") the bot removed; ``None`` for what concerns the message only."""
    if not isinstance(error, BadRequest | Forbidden):
        return None
    if says(error, *UNWRITABLE_ANSWERS):
        return GroupRefusal.UNWRITABLE
    if says(error, *CHAT_GONE_ANSWERS):
        return GroupRefusal.CHAT_GONE
    if says(error, *TOPIC_GONE_ANSWERS):
        return GroupRefusal.TOPIC_GONE
    return GroupRefusal.BOT_REMOVED if isinstance(error, Forbidden) else None


def retry_seconds(error: RetryAfter) -> float:
    """How long a RetryAfter asks to wait, in seconds (ThrottledError carries the exact float)."""
    exact = getattr(error, "seconds", None)
    if exact is not None:
        return float(exact)
    after = error.retry_after
    return float(after if isinstance(after, int | float) else after.total_seconds())


class Messages:
    """Shows and deletes messages through ``Bot.do_api_request`` with keyboards as JSON and the
    answer read for the message id alone (cheaper than PTB's objects, docs/scaling.md), the
    Defaults applied as PTB does; a private chat that answers 403 is recorded as lost."""

    def __init__(self, bot: ExtBot[Any], store: Store) -> None:
        self.bot = bot
        self.store = store
        defaults = bot.defaults
        self._defaults: dict[str, Any] = {}
        if defaults is not None:
            if defaults.parse_mode:
                self._defaults["parse_mode"] = defaults.parse_mode
            if defaults.link_preview_options is not None:
                self._defaults["link_preview_options"] = defaults.link_preview_options.to_dict()

    async def _call(self, method: str, rendered: Rendered, limits: dict[str, Any] = DEFER, **parameters: Any) -> Any:
        """``method`` with ``rendered``'s text and keyboard; Telegram's result as JSON (``limits``:
        the rate limiter's arguments)."""
        parameters = {
            **self._defaults,
            **{key: value for key, value in parameters.items() if value is not None},
            "text": rendered.text,
        }
        if rendered.keyboard is not None:
            parameters["reply_markup"] = rendered.reply_markup
        return await self.bot.do_api_request(
            method, api_kwargs=parameters, rate_limit_args=limits, read_timeout=SEND_READ_TIMEOUT
        )

    async def send(self, chat_id: int, rendered: Rendered, thread_id: int | None = None) -> int | None:
        """Send ``rendered``; its message id, ``None`` when a private chat is lost (a group's 403
        raises). Raises :class:`MaybeSentError` when the answer did not come in time."""
        try:
            sent = await self._call("sendMessage", rendered, chat_id=chat_id, message_thread_id=thread_id)
        except TimedOut as error:
            if maybe_delivered(error):
                log.warning("chat %s: a message's answer did not come in time: taken as sent", chat_id)
                raise MaybeSentError(str(error)) from error
            raise
        except Forbidden:
            if chat_id < 0:
                raise
            await self.store.records.set_dm(chat_id, False)
            return None
        return int(sent["message_id"])

    async def show(
        self, chat_id: int, thread_id: int | None, message_id: int | None, rendered: Rendered, resend: bool = True
    ) -> int | None:
        """Edit message ``message_id`` to ``rendered``, or send it anew when there is none or it is
        gone (unless ``resend`` is False: a redraw of a tapped panel, :data:`OWN_VIEW`); "not
        modified" is success. Returns the message id, or ``None`` when a private chat is lost (403)
        or the message is gone and not resent."""
        if message_id is None:
            return await self.send(chat_id, rendered, thread_id)
        limits = DEFER if resend else OWN_VIEW
        try:
            await self._call("editMessageText", rendered, limits, chat_id=chat_id, message_id=message_id)
            return message_id
        except BadRequest as error:
            if says(error, "not modified"):
                return message_id
            if not says(error, "not found", "can't be edited"):
                raise
        except Forbidden:
            if chat_id < 0:
                raise
            await self.store.records.set_dm(chat_id, False)
            return None
        return await self.send(chat_id, rendered, thread_id) if resend else None

    async def retire(self, chat_id: int, message_id: int, pointer: Rendered) -> None:
        """Delete a message that is current no more (an old board, panel or reminder). Telegram
        deletes none sent 48 hours ago or more (400 "message can't be deleted"): that one is
        edited into ``pointer``, one line without buttons, so no live button stays above the
        current message. A message already gone, or a chat lost, is left as it is."""
        try:
            await self.bot.delete_message(chat_id, message_id)
        except Forbidden:
            return
        except BadRequest as error:
            if not says(error, "can't be deleted"):
                return
            try:  # (waits for the chat's slot like the delete; a pointer not drawn stays a stale message)
                await self.bot.do_api_request(
                    "editMessageText",
                    api_kwargs={**self._defaults, "chat_id": chat_id, "message_id": message_id, "text": pointer.text},
                    rate_limit_args={"priority": "game"},
                )
            except TelegramError as refused:
                log.info("old message %s in %s neither deleted nor edited: %s", message_id, chat_id, refused)


async def answer_tap(query: CallbackQuery, text: str | None = None, url: str | None = None) -> bool:
    """Answer a callback query (the one place a tap is answered); False when Telegram refused: a
    late or repeated answer (400, about 15 s after the tap) must not undo or repeat the action."""
    try:
        await query.answer(text or None, url=url)
        return True
    except TelegramError as error:
        log.info("tap answer refused: %s", error)
        return False
