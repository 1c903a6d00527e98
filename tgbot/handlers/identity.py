"""Who sent an update, where, and what they may do: the one place for incoming identity checks.

Telegram facts (TELEGRAM.md; Bot API "Message"): an anonymous group admin's messages arrive
from the user GroupAnonymousBot (id 1087968824) with ``sender_chat`` = the group itself; a
message posted on behalf of a channel also has a ``sender_chat`` (the channel), which is *not*
an admin of the group. Callback queries always carry the real user who pressed. Forum topics:
a message in a topic has ``is_topic_message`` and its ``message_thread_id``; the General topic
has none. In a topic, a message that replies to nothing still carries ``reply_to_message`` = the
topic's creation message (``forum_topic_created``, id = the topic's ``message_thread_id``): that
is no reply (:func:`replied_user`).

Rules enforced here (the table transitions in :mod:`tgbot.game` check seats and turns):

- the anonymous-admin id is never seated nor stored as a player or a creator (creator ``0``
  means "admins only");
- starting, stopping and settings: the creator, or an admin of the chat (anonymous admins
  included);
- in-game buttons: only seated players (``play.act`` refuses others with ``not_seated``);
- a join deep link: only the member it was offered to (``lobby.join_by_link``), and not once
  Telegram says they left the group (:func:`telegram_says_gone`).
"""

from __future__ import annotations

import logging

from telegram import Update, User
from telegram.constants import ChatMemberStatus
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from tgbot.game.table import Answer, RefusedError, Seat, Table

__all__ = [
    "ANONYMOUS_ADMIN", "is_anonymous_admin", "actor_id", "is_admin", "seat_for", "place", "may_manage", "replied_user",
    "departed_user", "telegram_says_gone",
]

log = logging.getLogger(__name__)

#: The user id anonymous group admins send messages as (GroupAnonymousBot; TELEGRAM.md).
ANONYMOUS_ADMIN = 1087968824


def is_anonymous_admin(update: Update) -> bool:
    """The update is a message of an anonymous admin of its own chat (``sender_chat`` is the
    chat). A channel posting in a linked group is not."""
    msg, chat = update.effective_message, update.effective_chat
    if msg is None or chat is None or msg.sender_chat is None:
        return False
    return msg.sender_chat.id == chat.id


def actor_id(update: Update) -> int:
    """The user id acting: ``0`` for an anonymous admin or a channel, else the sender's id."""
    msg = update.effective_message
    user = update.effective_user
    if is_anonymous_admin(update) or (msg is not None and msg.sender_chat is not None) or user is None or user.id == ANONYMOUS_ADMIN:
        return 0
    return user.id


async def is_admin(context: ContextTypes.DEFAULT_TYPE, chat_id: int, update: Update) -> bool:
    """Whether the sender is an admin of ``chat_id`` (anonymous admins included). A failed
    getChatMember counts as "no" (fail closed)."""
    if is_anonymous_admin(update) and update.effective_chat is not None and update.effective_chat.id == chat_id:
        return True
    user_id = actor_id(update)
    if not user_id:
        return False
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except TelegramError:
        return False
    return member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


async def may_manage(context: ContextTypes.DEFAULT_TYPE, table: Table, update: Update) -> tuple[int, bool]:
    """(acting user id, is admin) for a start/stop/settings request on ``table``. The admin
    check (a Bot API call) is skipped for the creator."""
    user_id = actor_id(update)
    if user_id and user_id == table.creator:
        return user_id, False
    return user_id, await is_admin(context, table.chat_id, update)


def seat_for(update: Update) -> Seat:
    """The seat for the sender. Raises ``RefusedError(Answer.ANONYMOUS)`` for an anonymous admin or a
    channel (they have no private chat to receive cards) and ``RefusedError(Answer.NOT_ALLOWED)`` for
    bots."""
    user = update.effective_user
    if user is None or not actor_id(update):
        raise RefusedError(Answer.ANONYMOUS)
    if user.is_bot:
        raise RefusedError(Answer.NOT_ALLOWED)
    return Seat(user.id, user.full_name or user.username or "")


def place(update: Update) -> tuple[int, int | None]:
    """(chat id, forum topic id or ``None``) the update belongs to; the General topic and
    non-forum chats have no topic."""
    chat, msg = update.effective_chat, update.effective_message
    assert chat is not None
    thread = msg.message_thread_id if msg is not None and msg.is_topic_message else None
    return chat.id, thread


def replied_user(update: Update) -> User | None:
    """The user the message explicitly replies to, or ``None``: the one place commands read "the
    replied-to person" (/kick, /stats). Telegram's implicit reply to a forum topic's creation
    message (every message in a topic that replies to nothing carries it) is no reply, nor is a
    reply to any service message of a topic's creation."""
    msg = update.effective_message
    replied = msg.reply_to_message if msg is not None else None
    if replied is None or replied.from_user is None:
        return None
    if replied.forum_topic_created is not None:
        return None
    if msg.is_topic_message and msg.message_thread_id is not None and replied.message_id == msg.message_thread_id:
        return None
    return replied.from_user


def departed_user(update: Update) -> User | None:
    """The person an update says is no longer a member of its chat, or ``None``: a
    ``chat_member`` update whose new status is left, kicked (banned), or restricted and no
    member (Bot API ChatMemberRestricted ``is_member``), or a ``left_chat_member`` service
    message (sent by whoever removed them, or by themselves)."""
    if update.chat_member is not None:
        new = update.chat_member.new_chat_member
        return new.user if _gone(new) else None
    msg = update.effective_message
    return msg.left_chat_member if msg is not None else None


def _gone(member: object) -> bool:
    """A ChatMember status that is not membership: ``left``, ``kicked``, or ``restricted``
    with ``is_member`` false."""
    status = getattr(member, "status", None)
    if status in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
        return True
    return status == ChatMemberStatus.RESTRICTED and not getattr(member, "is_member", True)


async def telegram_says_gone(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool:
    """True when Telegram says ``user_id`` is no longer a member of ``chat_id`` (getChatMember:
    left, kicked, or restricted and no member). A defence in depth only: the proof of
    membership is the person's own tap in the group (``lobby.offer_link``), and getChatMember
    about other users is guaranteed to admin bots only (TELEGRAM.md), so when the call fails
    (no rights, a hidden members list: ``CHAT_ADMIN_REQUIRED``, a network error) the answer
    is False and the recorded offer stands on its own."""
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except TelegramError as e:
        log.info("membership of %s in %s not checked: %s", user_id, chat_id, e)
        return False
    return _gone(member)
