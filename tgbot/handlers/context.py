"""The handlers' typed PTB context (``ContextTypes(context=BotContext)``): one per update, with the
process's :class:`Services`, the update's commit marks, the one resolver of a reply's language, and
replies bounded in groups (:mod:`tgbot.handlers.budget`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from telegram import InlineKeyboardMarkup, Update
from telegram.error import Forbidden, TelegramError
from telegram.ext import Application, CallbackContext, ExtBot, filters

from tgbot import i18n
from tgbot.game.table import Change, Table
from tgbot.handlers.budget import Hush, ReplyBudget, hush
from tgbot.handlers.identity import actor_id
from tgbot.owner.clock import RedisClock
from tgbot.owner.store import Committed, Store, UpdateMark, game_id_for_update
from tgbot.owner.timers import Timers
from tgbot.settings import Settings
from tgbot.sync.syncer import Syncer

log = logging.getLogger(__name__)

#: A command in a group: its reply there is bounded (:mod:`tgbot.handlers.budget`).
GROUP_COMMAND = filters.COMMAND & filters.ChatType.GROUPS & filters.UpdateType.MESSAGE


@dataclass
class Services:
    """What the handlers share while this process is the active one (set by the runner)."""

    settings: Settings
    store: Store
    syncer: Syncer
    username: str
    clock: RedisClock
    bot_id: str
    timers: Timers | None = None
    budget: ReplyBudget = field(default_factory=ReplyBudget)

    def now(self) -> float:
        """Epoch seconds on Redis's clock (every deadline is measured on it)."""
        return self.clock.now()


class BotContext(CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], dict[Any, Any]]):
    """The context of one update (PTB makes one per update and passes it to each handler)."""

    def __init__(self, application: Application[Any, Any, Any, Any, Any, Any], **ids: Any) -> None:
        super().__init__(application, **ids)
        self.current_update: Update | None = None
        self.mark: UpdateMark | None = None
        self._hush: tuple[Hush | None] | None = None

    @classmethod
    def from_update(cls, update: object, application: Application[Any, Any, Any, Any, Any, Any]) -> BotContext:
        context = super().from_update(update, application)
        if isinstance(update, Update):
            context.current_update, context.mark = update, UpdateMark(update.update_id)
        return context

    @property
    def services(self) -> Services:
        services: Services = self.application.bot_data["services"]
        return services

    @property
    def store(self) -> Store:
        return self.services.store

    def new_game_id(self) -> str:
        """The id of the game this update opens (the same for a second delivery of it)."""
        assert self.current_update is not None
        return game_id_for_update(self.services.bot_id, self.current_update.update_id)

    async def transact(self, game_id: str, transition: Callable[[Table], Change]) -> Committed:
        """:meth:`Store.transact` as this update (applied once however often it is delivered)."""
        return await self.store.transact(game_id, transition, self.mark)

    async def create(self, table: Table) -> bool:
        """:meth:`Store.create` as this update."""
        return await self.store.create(table, self.mark)

    # -- the language of a reply (docs/DESIGN.md, i18n) ----------------------------------------

    async def language(self, table: Table | None = None, group_id: int | None = None) -> str:
        """The language of a message to the sender: about ``table``, their seat's (else their own
        choice, else the table's); else their own choice, else their group's (``group_id``'s
        setting, or that of a live game they sit in), else their Telegram app's, else Russian."""
        user = self.current_update.effective_user if self.current_update else None
        if user is None:
            return i18n.DEFAULT_LANGUAGE
        store = self.store
        if table is not None:
            own = None if table.seat_of(user.id) is not None else await store.records.user_lang(user.id)
            return table.language_for(user.id, own)
        own = await store.records.user_lang(user.id)
        if i18n.supported(own):
            return i18n.pick_language(own)
        if group_id is not None:
            group = (await store.records.chat_settings(group_id)).lang
        else:
            games = await store.user_games(user.id)
            seat = games[0].seat_of(user.id) if games else None
            group = games[0].seat_language(seat) if seat is not None else None
        return i18n.message_language(own, group, user.language_code)

    async def group_language(self, chat_id: int) -> str:
        """A group's language: its setting; until an admin sets one, the sender's Telegram
        language when they write as themselves (not as the chat or anonymously) and it is one of
        ours (not stored); else the default."""
        stored = (await self.store.records.chat_settings(chat_id)).lang
        update, hint = self.current_update, None
        if not i18n.supported(stored) and update is not None and actor_id(update):
            user = update.effective_user
            hint = user.language_code if user is not None and not user.is_bot else None
        return i18n.pick_language(stored, hint)

    # -- replies ---------------------------------------------------------------------------------

    async def hush(self) -> Hush | None:
        """Why no reply to this update may be posted in its group (``None``: it may; always for
        anything but a command in a group); decided (and the budget spent) once per update."""
        update = self.current_update
        if update is None or not GROUP_COMMAND.check_update(update):
            return None
        if self._hush is None:
            services = self.services
            self._hush = (await hush(update, self, self.store, services.budget, services.syncer.group.causes),)
        return self._hush[0]

    async def reply(self, text: str, markup: InlineKeyboardMarkup | None = None) -> None:
        """Reply in the update's chat (PTB keeps its forum topic); in a group only when
        :meth:`hush` allows."""
        message = self.current_update.effective_message if self.current_update else None
        if message is not None and await self.hush() is None:
            await message.reply_text(text, reply_markup=markup)

    async def tell(self, user_id: int, text: str) -> bool:
        """A private message to ``user_id``; False when not sent (a 403 marks them unreachable, a
        transient error only loses it)."""
        try:
            await self.bot.send_message(user_id, text)
        except Forbidden:  # only a 403 means the user blocked the bot (or never started it)
            await self.store.records.set_dm(user_id, False)
            return False
        except TelegramError as error:  # a 429, a timeout, a 5xx: says nothing of the user
            log.info("private message to %s not sent: %s", user_id, error)
            return False
        return True

    def background(self, work: Coroutine[Any, Any, None]) -> None:
        """Run a slow fan-out off the update's path (its errors reach the error handler)."""
        self.application.create_task(work, update=self.current_update)
