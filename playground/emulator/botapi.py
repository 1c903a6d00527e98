"""An in-process Telegram Bot API emulator, as strict as Telegram: the tests' and the playground's.

Start it, point the bot at ``emu.base_url`` (PTB: ``Application.builder().base_url(...)``,
calls go to ``{base_url}{token}/{method}``), drive simulated users, read what the bot did::

    emu = BotAPIEmulator(group_window=6.0)          # 20 group messages per 6 s, 3 per 0.3 s in private
    await emu.start()
    alice = emu.add_user(1001, "Alice")
    group = emu.add_group(-100500, "Cards", members=[alice], admins=[alice])
    await alice.send(group, "/newgame")              # queued for getUpdates
    msg = await emu.wait_message(group.id, lambda m: m.buttons)
    answer = await (await alice.tap(msg, "Join"))     # waits for answerCallbackQuery
    assert emu.violations == []
    await emu.stop()

Every call is validated against ``api.min.json`` (see :mod:`.spec`); malformed calls are
answered 400 like Telegram and listed in ``emu.violations``. Text limits, HTML parse mode
(:mod:`.html`), callback data bytes, private chats with users who never started the bot,
blocked users, kicked bots, group membership (who left or was removed no longer writes there;
getChatMember says "left" or "kicked"), migrated groups, callback query answers and rate limits
behave as Telegram documents them; so does a group that takes no message from the bot (restricted, a
read-only group, a closed topic: 400 with Telegram's texts, usually without any update) or is
gone (deleted: 400 "chat not found"). The rate limits are 30 messages a second in all, 20 per
``group_window`` in a group and 3 per ``private_window`` (``group_window / 20`` unless given:
Telegram's 3 s for its minute) in a private chat, each answered 429 with ``retry_after`` in whole
seconds as Telegram does.

Run standalone for manual tries: ``python -m playground.emulator.botapi --port 8081 --demo`` prints
the base_url; simulated users are then driven over ``/_sim/...`` (see ``_handle_control``).
``python -m playground`` runs it with the real bot and a page to play on.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import re
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlparse

from aiohttp import web

from .html import HTMLParseError, parse_html, trim_formatted, utf16_len
from .spec import ApiError, FileRef, Spec, bad_request

__all__ = ["ApiError", "BotAPIEmulator", "MessageRecord", "SimChat", "SimUser", "TapResult"]

QUERY_TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"
NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply "
    "markup are exactly the same as a current content and reply markup of the message"
)
#: update types Telegram delivers when allowed_updates is empty/unset
DEFAULT_EXCLUDED_UPDATES = {"chat_member", "message_reaction", "message_reaction_count"}
CHAT_ACTIONS = {
    "typing",
    "upload_photo",
    "record_video",
    "upload_video",
    "record_voice",
    "upload_voice",
    "upload_document",
    "choose_sticker",
    "find_location",
    "record_video_note",
    "upload_video_note",
}
#: GroupAnonymousBot: the sender of anonymous group admins' messages
ANONYMOUS_ADMIN_ID = 1087968824
#: The user id a channel persona's messages come from in a group (Channel_Bot, ``sender_chat``
#: the channel), and the one of a linked channel's automatic forwards ("Telegram").
CHANNEL_BOT_ID = 136817688
TELEGRAM_ID = 777000
#: Telegram deletes no message older than this (https://core.telegram.org/bots/api#deletemessage).
DELETE_WINDOW = 48 * 3600
#: The longest Telegram holds a bot's message in a group in slow mode before delivering it (s).
SLOW_MODE_HOLD = 10.0
#: InlineKeyboardButton.style: the values the Bot API documents (api.min.json). The Bot API
#: server (telegram-bot-api, ``Client::get_button_style``) also lets "default", "" and other
#: letter cases through; the emulator keeps to the documented three (never more lenient).
BUTTON_STYLES = {"danger", "success", "primary"}
_COMMAND_RE = re.compile(r"^/([A-Za-z0-9_]{1,64})(?:@([A-Za-z0-9_]{1,64}))?")


def _counted(method: str) -> bool:
    """Is ``method`` a sending/editing method subject to the message rate limits?"""
    return (
        (method.startswith("send") and method != "sendChatAction")
        or method.startswith("edit")
        or method in {"copyMessage", "copyMessages", "forwardMessage", "forwardMessages", "stopPoll"}
    )


def _chat_id_of(chat: Any) -> int:
    if isinstance(chat, (SimChat, SimUser)):
        return chat.id
    return int(chat)


# --------------------------------------------------------------------------- model
@dataclass(eq=False)
class SimUser:
    """A simulated Telegram user. Its private chat with the bot has the same id."""

    emu: BotAPIEmulator = field(repr=False)
    id: int
    first_name: str
    username: str | None = None
    language_code: str | None = "ru"
    last_name: str | None = None
    started: bool = False
    blocked: bool = False
    is_bot: bool = False

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name}
        if self.last_name:
            d["last_name"] = self.last_name
        if self.username:
            d["username"] = self.username
        if self.language_code:
            d["language_code"] = self.language_code
        return d

    @property
    def chat(self) -> SimChat:
        """The user's private chat with the bot."""
        return self.emu.chats[self.id]

    async def send(self, chat: Any, text: str, *, thread_id: int | None = None, reply_to: Any = None) -> int | None:
        """Send ``text`` to ``chat`` (SimChat, SimUser = private chat, or id).

        Returns the update id, or None when the bot does not receive the message (privacy
        mode in groups: only commands, replies to the bot and service messages arrive).
        """
        return self.emu._user_sends(self, chat, text, thread_id=thread_id, reply_to=reply_to)

    async def edit(self, message: Any, text: str) -> int | None:
        """Edit one of the user's own messages (a MessageRecord, or ``(chat, message_id)``) to
        ``text``: Telegram sends an ``edited_message`` update (same message_id, ``edit_date``)
        when the bot would have received the message. Returns the update id, or None."""
        return self.emu._user_edits(self, message, text)

    async def start_bot(self, payload: str | None = None, *, answered: bool = False, timeout: float = 30) -> int | None:
        """Press Start (or open a ``t.me/bot?start=payload`` link): sends ``/start [payload]``.
        ``answered``: also wait (up to ``timeout`` seconds) for the bot's reply in this chat, so
        that what the user sends next in another chat cannot overtake the /start (a bot may
        process different chats' updates concurrently)."""
        if self.blocked:
            self.blocked = False
            self.emu._queue_my_member(self.chat, self, "kicked", "member")
        self.started = True
        update_id = await self.send(self.chat, "/start" + (f" {payload}" if payload else ""))
        if answered and update_id is not None:
            since = self.emu.updates[update_id]["message"]["message_id"]
            await self.emu.wait_message(self.id, since=since, timeout=timeout)
        return update_id

    def set_language(self, language_code: str | None) -> None:
        """Switch the language of the user's Telegram app: their next updates carry it."""
        self.language_code = language_code
        self.emu._notify()

    def block_bot(self) -> int:
        """Block the bot: sends become 403 until :meth:`start_bot`. Returns the update id of
        the my_chat_member update."""
        self.blocked = True
        return self.emu._queue_my_member(self.chat, self, "member", "kicked")

    async def tap(self, message: Any, button: Any, *, strict: bool = True) -> TapResult:
        """Press an inline button of ``message`` (a MessageRecord or ``(chat_id, message_id)``).

        ``button``: the button's text or callback_data, or a button dict. With
        ``strict=False`` a string not on the keyboard is sent as raw callback data (a stale or
        forged button). Raises for url buttons and deleted messages.
        """
        return self.emu._tap(self, message, button, strict=strict)


@dataclass(eq=False)
class SimChat:
    """A chat known to the emulator: ``private``, ``group`` or ``supergroup``."""

    emu: BotAPIEmulator = field(repr=False)
    id: int
    type: str
    title: str | None = None
    user: SimUser | None = field(default=None, repr=False)  # private chats
    members: dict[int, SimUser] = field(default_factory=dict, repr=False)
    admins: set[int] = field(default_factory=set)
    creator: int | None = None
    is_forum: bool = False
    username: str | None = None
    bot_status: str = "member"  # member | administrator | restricted | left | kicked
    bot_kicked: bool = False
    migrated_to: int | None = None
    topics: dict[int, str] = field(default_factory=dict)
    #: users an admin removed from a supergroup (status "kicked" until added again)
    banned: set[int] = field(default_factory=set)
    #: the members list is hidden (supergroups): getChatMember about another user answers a
    #: bot that is not an admin 400 CHAT_ADMIN_REQUIRED
    hidden_members: bool = False
    #: the chat's default permissions forbid members to write (a read-only group): only
    #: administrators (the bot too, when it is one) may send or edit
    read_only: bool = False
    #: the group was deleted: every method answers 400 "Bad Request: chat not found"
    deleted: bool = False
    #: forum topics an admin closed: only administrators may post there
    closed_topics: set[int] = field(default_factory=set)
    #: slow mode (seconds between two messages): Telegram holds a bot's message sent sooner,
    #: up to :data:`SLOW_MODE_HOLD`, then delivers and answers it
    slow_mode_delay: float = 0.0

    def to_dict(self) -> dict:
        if self.type == "private":
            assert self.user is not None
            d: dict[str, Any] = {"id": self.id, "type": "private", "first_name": self.user.first_name}
            if self.user.last_name:
                d["last_name"] = self.user.last_name
            if self.user.username:
                d["username"] = self.user.username
            return d
        d = {"id": self.id, "type": self.type, "title": self.title}
        if self.username:
            d["username"] = self.username
        if self.is_forum:
            d["is_forum"] = True
        return d

    @property
    def kind(self) -> str:
        return "supergroup chat" if self.type == "supergroup" else "group chat"


@dataclass(eq=False)
class MessageRecord:
    """A message as stored by the emulator (live: it reflects later edits)."""

    emu: BotAPIEmulator = field(repr=False)
    chat_id: int
    message_id: int
    sender: SimUser | None  # None: the bot
    date: int
    text: str | None = None
    html: str | None = None  # the raw text as sent (HTML source when parse_mode=HTML)
    entities: list[dict] = field(default_factory=list)
    reply_markup: dict | None = None
    thread_id: int | None = None
    reply_to: int | None = None
    edit_date: int | None = None
    edited_count: int = 0
    deleted: bool = False
    document: dict | None = None
    file: FileRef | None = field(default=None, repr=False)
    caption: str | None = None
    caption_entities: list[dict] = field(default_factory=list)
    service: dict = field(default_factory=dict)
    sender_chat: int | None = None  # anonymous admins: the group itself

    @property
    def from_bot(self) -> bool:
        return self.sender is None

    @property
    def buttons(self) -> list[list[dict]]:
        """Inline keyboard rows of button dicts ({text, callback_data|url, ...})."""
        if not self.reply_markup or "inline_keyboard" not in self.reply_markup:
            return []
        return [[dict(b) for b in row] for row in self.reply_markup["inline_keyboard"]]

    @property
    def flat_buttons(self) -> list[dict]:
        return [b for row in self.buttons for b in row]

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def to_dict(self, *, with_reply: bool = True) -> dict:
        """The Message object as Telegram sends it."""
        emu = self.emu
        chat = emu.chats[self.chat_id]
        d: dict[str, Any] = {"message_id": self.message_id}
        if self.thread_id is not None:
            d["message_thread_id"] = self.thread_id
        d["from"] = emu.bot_user() if self.sender is None else self.sender.to_dict()
        d["date"] = self.date
        d["chat"] = chat.to_dict()
        if self.sender_chat is not None:
            d["sender_chat"] = emu.chats[self.sender_chat].to_dict()
        if self.thread_id is not None:
            d["is_topic_message"] = True
        if with_reply and self.reply_to is not None:
            replied = emu._msg(self.chat_id, self.reply_to)
            if replied is not None and not replied.deleted:
                d["reply_to_message"] = replied.to_dict(with_reply=False)
        if self.edit_date is not None:
            d["edit_date"] = self.edit_date
        if self.text is not None:
            d["text"] = self.text
            if self.entities:
                d["entities"] = [dict(e) for e in self.entities]
        if self.document is not None:
            d["document"] = dict(self.document)
            if self.caption:
                d["caption"] = self.caption
                if self.caption_entities:
                    d["caption_entities"] = [dict(e) for e in self.caption_entities]
        d.update(self.service)
        if self.reply_markup and "inline_keyboard" in self.reply_markup:
            d["reply_markup"] = self.reply_markup
        return d


class TapResult:
    """The result of :meth:`SimUser.tap`: ``await result`` (or ``await result.answer()``)
    waits for the bot's answerCallbackQuery and returns its parameters."""

    def __init__(self, emu: BotAPIEmulator, query_id: str, update_id: int, data: str):
        self.emu = emu
        self.query_id = query_id
        self.update_id = update_id
        self.data = data

    async def answer(self, timeout: float = 10) -> dict:
        return await self.emu.wait_answer(self.query_id, timeout)

    @property
    def answered(self) -> dict | None:
        return self.emu.answers.get(self.query_id)

    def __await__(self):
        return self.answer().__await__()

    def __repr__(self) -> str:
        return f"TapResult(query_id={self.query_id!r}, data={self.data!r})"


# ----------------------------------------------------------------------- emulator
class BotAPIEmulator:
    """The Bot API server emulator. See the module docstring for an example.

    Records: ``calls`` (every request: method, params, time, chat_id, ok, result /
    error_code+description), ``errors`` (every error answer), ``violations`` (str: malformed
    calls, unknown parameters), ``unmodelled`` (valid methods answered generically),
    ``answers`` (query id -> answerCallbackQuery params), ``commands``
    ((scope JSON, language_code) -> commands), ``webhook``, ``menu_buttons``.
    """

    def __init__(
        self,
        token: str = "123456:TEST",
        *,
        bot_username: str = "cheat_test_bot",
        bot_first_name: str = "Cheat Test Bot",
        spec: Spec | None = None,
        query_timeout: float = 15.0,
        group_rate: int = 20,
        group_window: float = 60.0,
        global_rate: int = 30,
        global_window: float = 1.0,
        private_rate: float = 3,
        private_window: float | None = None,
        privacy_mode: bool = True,
        strict_unknown: bool = False,
        strict_amp: bool = True,
        first_update_id: int = 1,
        clock: Callable[[], float] = time.monotonic,
        host: str = "127.0.0.1",
        port: int = 0,
        control: bool = False,
    ):
        self.token = token
        self.bot_id = int(token.split(":", 1)[0])
        self.bot_username = bot_username
        self.bot_first_name = bot_first_name
        self.spec = spec or Spec.load()
        self.query_timeout = query_timeout
        self.group_rate, self.group_window = group_rate, group_window
        self.global_rate, self.global_window = global_rate, global_window
        # Telegram: about one message a second in a private chat, short bursts allowed; scaled
        # down with the group's window unless given (``private_rate=1e9``: no limit)
        self.private_rate = private_rate
        self.private_window = group_window / 20 if private_window is None else private_window
        self.privacy_mode = privacy_mode
        self.strict_unknown = strict_unknown
        self.strict_amp = strict_amp
        self.clock = clock
        self.host, self.port = host, port
        self.control = control

        self.users: dict[int, SimUser] = {}
        self.chats: dict[int, SimChat] = {}
        self._messages: dict[int, dict[int, MessageRecord]] = {}
        self._next_mid: dict[int, int] = {}
        self._next_update = first_update_id
        self._queue: list[list] = []  # [update dict, force (redelivered)]
        self.updates: dict[int, dict] = {}  # every update ever queued, by id
        self._allowed: set[str] | None = None
        self._poll_gen = 0
        self._queries: dict[str, dict] = {}
        self._qids = itertools.count(1)
        self._rate_global: deque[float] = deque()
        self._rate_chat: dict[int, deque[float]] = {}

        self.calls: list[dict] = []
        self.errors: list[dict] = []
        self.violations: list[str] = []
        self.unmodelled: list[dict] = []
        self.answers: dict[str, dict] = {}
        self.commands: dict[tuple[str, str], list[dict]] = {}
        self.webhook: dict[str, Any] = {}
        #: test-only: ``delay(method, raw params)`` → seconds to wait before answering a call
        self.delay: Callable[[str, dict], float] | None = None
        #: test-only: ``late(method, raw params)`` → seconds to wait after a call took effect
        #: before answering it (a reply that comes after the client's read timeout: delivered)
        self.late: Callable[[str, dict], float] | None = None
        self._slow_mode_last: dict[int, float] = {}  # chat id -> when its last bot message went out
        #: test-only: ``fault(method, raw params)`` → an :class:`ApiError` to answer the call
        #: with instead (a 429, a 5xx Telegram sends when it is unwell), or None
        self.fault: Callable[[str, dict], ApiError | None] | None = None
        #: test-only: deliver webhook updates round-robin to these URLs instead of webhook["url"]
        #: (several bot processes behind an imagined load balancer)
        self.webhook_targets: list[str] = []
        #: webhook POSTs: (target, update_id, HTTP status or exception name)
        self.deliveries: list[tuple[str, int, Any]] = []
        self._deliverer: asyncio.Task | None = None
        self.menu_buttons: dict[int | None, dict] = {}
        #: test-only: seconds added to Telegram's wall clock (message dates, the 48-hour delete
        #: rule), so a test can age the bot's messages without waiting: :meth:`age`
        self.wall_offset = 0.0
        #: test-only: messages ((chat id, message id)) whose taps carry an InaccessibleMessage
        #: (date 0, no thread, no text), as Telegram sends for messages it no longer shows the bot
        self.inaccessible: set[tuple[int, int]] = set()

        self._event = asyncio.Event()
        self._closing = False
        self._runner: web.AppRunner | None = None

    # ------------------------------------------------------------------ server
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/bot`` (PTB appends ``{token}/{method}``)."""
        return f"http://{self.host}:{self.port}/bot"

    async def start(self) -> BotAPIEmulator:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        if self.control:
            app.router.add_route("*", "/_sim/{action}", self._handle_control)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self._closing = False
        self._deliverer = asyncio.create_task(self._deliver_webhook())
        return self

    async def stop(self) -> None:
        self._closing = True
        self._notify()
        if self._deliverer is not None:
            self._deliverer.cancel()
            self._deliverer = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> BotAPIEmulator:
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    def _notify(self) -> None:
        ev, self._event = self._event, asyncio.Event()
        ev.set()

    async def _read_params(self, request: web.Request) -> tuple[dict, dict]:
        raw: dict[str, Any] = dict(request.query)
        files: dict[str, FileRef] = {}
        if request.can_read_body:
            ctype = request.content_type
            if ctype == "application/json":
                try:
                    body = await request.json()
                except ValueError:
                    raise bad_request("can't parse JSON encoded request") from None
                if not isinstance(body, dict):
                    raise bad_request("JSON request must be an object")
                raw.update(body)
            elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
                form = await request.post()
                for key, value in form.items():
                    if isinstance(value, web.FileField):
                        files[key] = FileRef(value.filename, value.content_type, value.file.read())
                    else:
                        raw[key] = value
            else:
                await request.read()
        return raw, files

    async def _handle(self, request: web.Request) -> web.Response:
        name = request.match_info["method"]
        method: str | None = None
        raw: dict[str, Any] = {}
        params: dict[str, Any] = {}
        try:
            if request.match_info["token"] != self.token:
                raise ApiError(401, "Unauthorized")
            method = self.spec.canonical_method(name)
            if method is None:
                raise ApiError(404, "Not Found: method not found")
            raw, files = await self._read_params(request)
            notes: list[str] = []
            try:
                params = self.spec.check_call(method, raw, files, notes)
            finally:
                self.violations.extend(notes)
            if notes and self.strict_unknown:
                raise bad_request(notes[0])
            if self.delay is not None and (pause := self.delay(method, raw)):
                await asyncio.sleep(pause)  # a slow Bot API (test knob)
            if self.fault is not None and (injected := self.fault(method, raw)) is not None:
                raise injected  # an unwell Bot API (test knob)
            if held := self._slow_mode_hold(method, raw):
                await asyncio.sleep(held)  # slow mode: the message is held, then delivered
            handler = getattr(self, f"_api_{method}", None)
            if handler is None:
                result = self._api_generic(method, params)
            else:
                result = handler(params)
                if asyncio.iscoroutine(result):
                    result = await result
            if self.late is not None and (pause := self.late(method, raw)):
                await asyncio.sleep(pause)  # delivered, answered late (test knob)
            body: dict[str, Any] = {"ok": True, "result": result}
            status = 200
        except ApiError as e:
            body, status = e.to_json(), e.code
            if e.violation:
                self.violations.append(f"{method or name}: {e.description}")
            self.errors.append(
                {
                    "method": method or name,
                    "params": params or raw,
                    "error_code": e.code,
                    "description": e.description,
                    "parameters": e.parameters,
                    "time": time.time(),
                }
            )
        chat_id = params.get("chat_id", raw.get("chat_id"))
        if isinstance(chat_id, str) and re.fullmatch(r"-?\d+", chat_id):
            chat_id = int(chat_id)
        self.calls.append(
            {
                "method": method or name,
                "params": params or raw,
                "time": time.time(),
                "chat_id": chat_id,
                "ok": body["ok"],
                "result": body.get("result"),
                "error_code": body.get("error_code"),
                "description": body.get("description"),
            }
        )
        self._notify()
        return web.json_response(body, status=status)

    # ---------------------------------------------------------------- helpers
    def _slow_mode_hold(self, method: str, raw: dict) -> float:
        """Seconds a bot's message to a chat in slow mode is held (its slot reserved), 0 otherwise."""
        try:
            chat = self.chats.get(int(raw.get("chat_id", 0)))
        except (TypeError, ValueError):
            return 0.0
        if chat is None or not chat.slow_mode_delay or not method.startswith("send") or not _counted(method):
            return 0.0
        now = self.clock()
        at = max(now, self._slow_mode_last.get(chat.id, -math.inf) + chat.slow_mode_delay)
        at = min(at, now + SLOW_MODE_HOLD)
        self._slow_mode_last[chat.id] = at
        return at - now

    def bot_user(self, *, full: bool = False) -> dict:
        d: dict[str, Any] = {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": self.bot_first_name,
            "username": self.bot_username,
        }
        if full:
            d.update(
                can_join_groups=True,
                can_read_all_group_messages=not self.privacy_mode,
                supports_inline_queries=False,
                can_connect_to_business=False,
                has_main_web_app=False,
            )
        return d

    def _msg(self, chat_id: int, message_id: int) -> MessageRecord | None:
        return self._messages.get(chat_id, {}).get(message_id)

    def _chat(self, chat_id: Any) -> SimChat:
        """Resolve a chat for any method: 400 chat not found / migrated."""
        chat = None
        if isinstance(chat_id, str):
            chat = next(
                (c for c in self.chats.values() if c.username and f"@{c.username}".lower() == chat_id.lower()), None
            )
        else:
            chat = self.chats.get(chat_id)
        if chat is None or chat.deleted:
            raise ApiError(400, "Bad Request: chat not found")
        if chat.migrated_to is not None:
            raise ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": chat.migrated_to},
            )
        return chat

    def _writable_chat(self, chat_id: Any, *, writes: str | None = None) -> SimChat:
        """Resolve a chat the bot acts in: adds the 403s of blocked/unstarted/kicked, and, when
        the call ``writes`` (what it posts: "text messages", "documents"; "edit" for an edit),
        the 400s of a group that takes no message from the bot (:meth:`_write_refusal`)."""
        chat = self._chat(chat_id)
        if chat.type == "private":
            user = chat.user
            assert user is not None
            if user.blocked:
                raise ApiError(403, "Forbidden: bot was blocked by the user")
            if not user.started:
                raise ApiError(403, "Forbidden: bot can't initiate conversation with a user")
        elif chat.bot_status in ("left", "kicked"):
            if chat.bot_kicked or chat.bot_status == "kicked":
                raise ApiError(403, f"Forbidden: bot was kicked from the {chat.kind}")
            raise ApiError(403, f"Forbidden: bot is not a member of the {chat.kind}")
        elif writes is not None and (refusal := self._write_refusal(chat, writes)) is not None:
            raise refusal
        return chat

    @staticmethod
    def _write_refusal(chat: SimChat, writes: str) -> ApiError | None:
        """Telegram's answer when the bot may not write in group ``chat`` (restricted without
        ``can_send_messages``, or a read-only group where it is no administrator): 400, not 403,
        and no membership update. A send to a supergroup: "Bad Request: not enough rights to
        send <what> to the chat"; to a basic group, and any edit: "Bad Request: have no rights
        to send a message". ``None`` when it may write."""
        restricted = chat.bot_status == "restricted"
        if not restricted and not (chat.read_only and chat.bot_status != "administrator"):
            return None
        if writes != "edit" and chat.type == "supergroup":
            return ApiError(400, f"Bad Request: not enough rights to send {writes} to the chat")
        return ApiError(400, "Bad Request: have no rights to send a message")

    def _thread(self, chat: SimChat, params: dict) -> int | None:
        tid = params.get("message_thread_id")
        if tid is None or chat.type != "supergroup" or not chat.is_forum:
            return None
        if tid not in chat.topics:
            raise ApiError(400, "Bad Request: message thread not found")
        if tid in chat.closed_topics and chat.bot_status != "administrator":
            raise ApiError(400, "Bad Request: TOPIC_CLOSED")
        return tid

    def _format(
        self, text: str, parse_mode: str | None, entities: list | None, *, limit: int, what: str
    ) -> tuple[str, list[dict]]:
        """Parse text like Telegram and check its length (``what``: 'message' or 'caption')."""
        if parse_mode and not entities:
            mode = parse_mode.lower()
            if mode == "html":
                try:
                    plain, ents = parse_html(text, strict_amp=self.strict_amp)
                except HTMLParseError as e:
                    raise bad_request(f"can't parse entities: {e}") from None
            elif mode in ("markdown", "markdownv2"):
                self.violations.append(f"parse_mode {parse_mode} is not modelled by the emulator")
                plain, ents = trim_formatted(text, [])
            else:
                raise bad_request("unsupported parse_mode")
        else:
            plain, ents = trim_formatted(text, [dict(e) for e in entities or []])
        if what == "message" and not plain:
            raise bad_request("message text is empty")
        if utf16_len(plain) > limit:
            raise bad_request("message is too long" if what == "message" else "message caption is too long")
        return plain, ents

    @staticmethod
    def _valid_url(url: str) -> bool:
        if not url or any(c.isspace() for c in url):
            return False
        if url.lower().startswith("tg://"):
            return bool(re.fullmatch(r"tg://[A-Za-z_]+(\?\S*)?", url))
        p = urlparse(url if "://" in url else "http://" + url)
        host = p.hostname or ""
        return (
            p.scheme.lower() in ("http", "https")
            and "." in host
            and not host.startswith(".")
            and not host.endswith(".")
        )

    def _markup(self, markup: dict | None) -> dict | None:
        """Check a reply_markup; normalise an inline keyboard (empty rows dropped)."""
        if markup is None:
            return None
        if "inline_keyboard" not in markup:
            return markup  # reply keyboards: validated by the spec, not stored
        rows = [list(r) for r in markup["inline_keyboard"] if r]
        if sum(len(r) for r in rows) > 100:
            raise bad_request("reply markup is too long")
        for row in rows:
            for b in row:
                actions = [k for k in b if k not in ("text", "icon_custom_emoji_id", "style")]
                if not actions:
                    raise bad_request(
                        "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
                    )
                if len(actions) > 1:
                    raise bad_request(
                        f"can't parse inline keyboard button: exactly one of {', '.join(actions)} must be specified"
                    )
                if "style" in b and b["style"] not in BUTTON_STYLES:
                    raise bad_request("can't parse inline keyboard button: invalid button style specified")
                if "callback_data" in b:
                    if not 1 <= len(b["callback_data"].encode("utf-8")) <= 64:
                        raise bad_request("BUTTON_DATA_INVALID")
                if "url" in b and not self._valid_url(b["url"]):
                    raise bad_request(f"inline keyboard button URL '{b['url']}' is invalid: Wrong HTTP URL")
        if not rows:
            return None
        return {"inline_keyboard": rows}

    def _rate_check(self, method: str, chat: SimChat | None) -> None:
        """429 if a counted call would exceed a sliding-window limit (nothing is consumed)."""
        if not _counted(method):
            return
        now = self.clock()
        retry = 0.0
        for dq, rate, window in self._rate_windows(chat):
            while dq and dq[0] <= now - window:
                dq.popleft()
            if len(dq) >= rate:
                retry = max(retry, dq[len(dq) - int(rate)] + window - now)
        if retry > 0:
            n = max(1, math.ceil(retry))
            raise ApiError(429, f"Too Many Requests: retry after {n}", {"retry_after": n})

    def _rate_consume(self, method: str, chat: SimChat | None) -> None:
        if _counted(method):
            now = self.clock()
            for dq, _rate, _window in self._rate_windows(chat):
                dq.append(now)

    def _rate_windows(self, chat: SimChat | None) -> list[tuple[deque, float, float]]:
        out: list[tuple[deque, float, float]] = [(self._rate_global, self.global_rate, self.global_window)]
        if chat is not None:
            dq = self._rate_chat.setdefault(chat.id, deque())
            if chat.type == "private":
                out.append((dq, self.private_rate, self.private_window))
            else:
                out.append((dq, self.group_rate, self.group_window))
        return out

    def _new_message(self, chat: SimChat, sender: SimUser | None, **fields: Any) -> MessageRecord:
        mid = self._next_mid.get(chat.id, 1)
        self._next_mid[chat.id] = mid + 1
        rec = MessageRecord(self, chat.id, mid, sender, int(self.wall_time()), **fields)
        self._messages.setdefault(chat.id, {})[mid] = rec
        return rec

    def _target_message(self, params: dict, *, action: str) -> tuple[SimChat, MessageRecord]:
        if "chat_id" not in params or "message_id" not in params:
            raise bad_request("message identifier is not specified")
        chat = self._writable_chat(params["chat_id"], writes="edit" if action == "edit" else None)
        msg = self._msg(chat.id, params["message_id"])
        if msg is None or msg.deleted:
            raise ApiError(400, f"Bad Request: message to {action} not found")
        return chat, msg

    # ------------------------------------------------------------- methods
    def _api_getMe(self, params: dict) -> dict:
        return self.bot_user(full=True)

    def _api_logOut(self, params: dict) -> bool:
        return True

    def _api_close(self, params: dict) -> bool:
        return True

    async def _api_getUpdates(self, params: dict) -> list[dict]:
        if self.webhook.get("url"):
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        self._poll_gen += 1
        gen = self._poll_gen
        self._notify()  # wakes an older poller, which then gets 409
        if params.get("allowed_updates") is not None:
            self._allowed = set(params["allowed_updates"]) or None
        offset = params.get("offset")
        if offset is not None:
            if offset < 0:
                keep = {u["update_id"] for u, _ in self._queue[offset:]}
                self._queue = [e for e in self._queue if e[0]["update_id"] in keep]
            else:
                self._queue = [e for e in self._queue if e[0]["update_id"] >= offset or e[1]]
        limit = params.get("limit") or 100
        if not 1 <= limit <= 100:
            limit = 100
        timeout = max(0, params.get("timeout") or 0)
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            if self._poll_gen != gen:
                raise ApiError(
                    409,
                    "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
                )
            self._queue = [e for e in self._queue if self._is_allowed(e[0])]
            if self._queue or self._closing:
                batch = sorted(self._queue, key=lambda e: e[0]["update_id"])[:limit]
                for entry in batch:
                    entry[1] = False
                return [e[0] for e in batch]
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return []
            ev = self._event
            try:
                await asyncio.wait_for(ev.wait(), remaining)
            except TimeoutError:
                pass

    def _is_allowed(self, update: dict) -> bool:
        kind = next(k for k in update if k != "update_id")
        if self._allowed is None:
            return kind not in DEFAULT_EXCLUDED_UPDATES
        return kind in self._allowed

    async def _deliver_webhook(self) -> None:
        """While a webhook is set, POST queued updates to it (or round-robin to
        ``webhook_targets``) with ``X-Telegram-Bot-Api-Secret-Token``, up to ``max_connections``
        at once; an update not answered 2xx is retried (Telegram retries too)."""
        import aiohttp

        rr = itertools.count()
        inflight: set[int] = set()
        async with aiohttp.ClientSession() as http:
            sem = asyncio.Semaphore(40)

            async def post(entry: list) -> None:
                update = entry[0]
                uid = update["update_id"]
                targets = self.webhook_targets or [self.webhook.get("url", "")]
                target = targets[next(rr) % len(targets)]
                headers = {}
                if self.webhook.get("secret_token"):
                    headers["X-Telegram-Bot-Api-Secret-Token"] = self.webhook["secret_token"]
                status: Any
                try:
                    async with (
                        sem,
                        http.post(target, json=update, headers=headers, timeout=aiohttp.ClientTimeout(total=30)) as r,
                    ):
                        status = r.status
                except Exception as e:  # refused, reset, timeout: retried like Telegram
                    status = type(e).__name__
                self.deliveries.append((target, uid, status))
                if isinstance(status, int) and 200 <= status < 300:
                    self._queue = [e for e in self._queue if e is not entry]
                else:
                    await asyncio.sleep(0.5)
                inflight.discard(id(entry))
                self._notify()

            while not self._closing:
                if self.webhook.get("url"):
                    for entry in list(self._queue):
                        if id(entry) not in inflight and self._is_allowed(entry[0]):
                            inflight.add(id(entry))
                            asyncio.create_task(post(entry))
                ev = self._event
                try:
                    await asyncio.wait_for(ev.wait(), 0.5)
                except TimeoutError:
                    pass

    def _api_setWebhook(self, params: dict) -> bool:
        url = params["url"]
        if url and not url.lower().startswith("https://"):
            raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
        if params.get("drop_pending_updates"):
            self._queue.clear()
        if params.get("allowed_updates") is not None:
            self._allowed = set(params["allowed_updates"]) or None
        self.webhook = {k: v for k, v in params.items() if not isinstance(v, FileRef)} if url else {}
        return True

    def _api_deleteWebhook(self, params: dict) -> bool:
        if params.get("drop_pending_updates"):
            self._queue.clear()
        self.webhook = {}
        return True

    def _api_getWebhookInfo(self, params: dict) -> dict:
        d: dict[str, Any] = {
            "url": self.webhook.get("url", ""),
            "has_custom_certificate": False,
            "pending_update_count": len(self._queue),
        }
        if self.webhook.get("url"):
            d["max_connections"] = self.webhook.get("max_connections", 40)
            if self.webhook.get("allowed_updates"):
                d["allowed_updates"] = self.webhook["allowed_updates"]
        return d

    def _api_sendMessage(self, params: dict) -> dict:
        plain, ents = self._format(
            params["text"], params.get("parse_mode"), params.get("entities"), limit=4096, what="message"
        )
        markup = self._markup(params.get("reply_markup"))
        chat = self._writable_chat(params["chat_id"], writes="text messages")
        thread = self._thread(chat, params)
        reply_to = self._reply_to(chat, params)
        self._rate_check("sendMessage", chat)
        rec = self._new_message(
            chat,
            None,
            text=plain,
            html=params["text"],
            entities=ents,
            reply_markup=markup,
            thread_id=thread,
            reply_to=reply_to,
        )
        self._rate_consume("sendMessage", chat)
        return rec.to_dict()

    def _reply_to(self, chat: SimChat, params: dict) -> int | None:
        rp = params.get("reply_parameters")
        if not rp:
            return self._topic_reply(chat, self._thread(chat, params))
        if rp.get("chat_id") not in (None, chat.id):
            return None
        msg = self._msg(chat.id, rp["message_id"])
        if msg is None or msg.deleted:
            if rp.get("allow_sending_without_reply"):
                return None
            raise ApiError(400, "Bad Request: message to be replied not found")
        return msg.message_id

    def _api_sendDocument(self, params: dict) -> dict:
        caption, cents = None, []
        if params.get("caption"):
            caption, cents = self._format(
                params["caption"], params.get("parse_mode"), params.get("caption_entities"), limit=1024, what="caption"
            )
        markup = self._markup(params.get("reply_markup"))
        chat = self._writable_chat(params["chat_id"], writes="documents")
        thread = self._thread(chat, params)
        reply_to = self._reply_to(chat, params)
        doc = params["document"]
        self._rate_check("sendDocument", chat)
        n = next(self._qids)
        document: dict[str, Any] = {"file_id": f"DOC{n:08d}", "file_unique_id": f"U{n:08d}"}
        ref = doc if isinstance(doc, FileRef) else None
        if ref is not None:
            if ref.filename:
                document["file_name"] = ref.filename
            if ref.content_type:
                document["mime_type"] = ref.content_type
            document["file_size"] = len(ref.data)
        rec = self._new_message(
            chat,
            None,
            document=document,
            file=ref,
            caption=caption,
            caption_entities=cents,
            reply_markup=markup,
            thread_id=thread,
            reply_to=reply_to,
        )
        self._rate_consume("sendDocument", chat)
        return rec.to_dict()

    def _api_editMessageText(self, params: dict) -> Any:
        if params.get("inline_message_id"):
            return self._api_generic("editMessageText", params)
        if "text" not in params:
            raise bad_request("message text is empty")
        plain, ents = self._format(
            params["text"], params.get("parse_mode"), params.get("entities"), limit=4096, what="message"
        )
        markup = self._markup(params.get("reply_markup"))
        chat, msg = self._target_message(params, action="edit")
        if not msg.from_bot:
            raise ApiError(400, "Bad Request: message can't be edited")
        if msg.text is None:
            raise ApiError(400, "Bad Request: there is no text in the message to edit")
        if msg.text == plain and msg.entities == ents and msg.reply_markup == markup:
            raise ApiError(400, NOT_MODIFIED)
        self._rate_check("editMessageText", chat)
        msg.text, msg.html, msg.entities, msg.reply_markup = plain, params["text"], ents, markup
        msg.edit_date = int(self.wall_time())
        msg.edited_count += 1
        self._rate_consume("editMessageText", chat)
        return msg.to_dict()

    def _api_editMessageReplyMarkup(self, params: dict) -> Any:
        if params.get("inline_message_id"):
            return self._api_generic("editMessageReplyMarkup", params)
        markup = self._markup(params.get("reply_markup"))
        chat, msg = self._target_message(params, action="edit")
        if not msg.from_bot:
            raise ApiError(400, "Bad Request: message can't be edited")
        if msg.reply_markup == markup:
            raise ApiError(400, NOT_MODIFIED)
        self._rate_check("editMessageReplyMarkup", chat)
        msg.reply_markup = markup
        msg.edit_date = int(self.wall_time())
        msg.edited_count += 1
        self._rate_consume("editMessageReplyMarkup", chat)
        return msg.to_dict()

    def _api_deleteMessage(self, params: dict) -> bool:
        chat, msg = self._target_message(params, action="delete")
        if not msg.from_bot and chat.type != "private" and chat.bot_status != "administrator":
            raise ApiError(400, "Bad Request: message can't be deleted")
        if self.wall_time() - msg.date >= DELETE_WINDOW:  # "sent less than 48 hours ago" only
            raise ApiError(400, "Bad Request: message can't be deleted")
        msg.deleted = True
        return True

    def _api_answerCallbackQuery(self, params: dict) -> bool:
        text = params.get("text")
        if text is not None and utf16_len(text) > 200:
            raise bad_request("MESSAGE_TOO_LONG")
        url = params.get("url")
        if url is not None and not re.fullmatch(
            rf"(?:https?://)?(?:t|telegram)\.me/{re.escape(self.bot_username)}"
            r"\?start=[A-Za-z0-9_-]{1,64}",
            url,
            re.I,
        ):
            raise bad_request("URL_INVALID")
        q = self._queries.get(params["callback_query_id"])
        if q is None or q["answered"] or self.clock() - q["time"] > self.query_timeout:
            raise ApiError(400, QUERY_TOO_OLD)
        q["answered"] = True
        self.answers[params["callback_query_id"]] = dict(params)
        return True

    def _api_sendChatAction(self, params: dict) -> bool:
        if params["action"] not in CHAT_ACTIONS:
            raise bad_request("wrong parameter action in request")
        chat = self._writable_chat(params["chat_id"])
        self._thread(chat, params)
        return True

    def _api_getChat(self, params: dict) -> dict:
        chat = self._chat(params["chat_id"])
        if chat.type != "private" and chat.bot_status in ("left", "kicked"):
            self._writable_chat(chat.id)
        d = chat.to_dict()
        d.update(
            accent_color_id=0,
            max_reaction_count=11,
            accepted_gift_types={
                "unlimited_gifts": False,
                "limited_gifts": False,
                "unique_gifts": False,
                "premium_subscription": False,
                "gifts_from_channels": False,
            },
        )
        return d

    def _member(self, chat: SimChat, user_id: int) -> dict:
        if user_id == self.bot_id:
            status = chat.bot_status if chat.type != "private" else "member"
            if status == "administrator":
                return self._admin_dict(self.bot_user(), can_be_edited=False)
            if status in ("kicked", "restricted"):
                return self._member_status(chat, status, self.bot_user())
            return {"status": status, "user": self.bot_user()}
        user = self.users.get(user_id)
        if user is None:
            raise ApiError(400, "Bad Request: user not found")
        if chat.hidden_members and chat.bot_status != "administrator":
            # getChatMember about other users is guaranteed to admin bots only (TELEGRAM.md)
            raise ApiError(400, "Bad Request: CHAT_ADMIN_REQUIRED")
        u = user.to_dict()
        if chat.type == "private":
            return {"status": "member" if user_id == chat.id else "left", "user": u}
        if user_id == chat.creator:
            return {"status": "creator", "user": u, "is_anonymous": False}
        if user_id in chat.admins:
            return self._admin_dict(u, can_be_edited=chat.bot_status == "administrator")
        if user_id in chat.members:
            return {"status": "member", "user": u}
        if user_id in chat.banned:
            return self._member_status(chat, "kicked", u)
        return {"status": "left", "user": u}

    @staticmethod
    def _admin_dict(user: dict, *, can_be_edited: bool) -> dict:
        d = {"status": "administrator", "user": user, "can_be_edited": can_be_edited, "is_anonymous": False}
        for right in (
            "can_manage_chat",
            "can_delete_messages",
            "can_manage_video_chats",
            "can_restrict_members",
            "can_promote_members",
            "can_change_info",
            "can_invite_users",
            "can_post_stories",
            "can_edit_stories",
            "can_delete_stories",
            "can_pin_messages",
        ):
            d[right] = right != "can_promote_members"
        return d

    def _api_getChatMember(self, params: dict) -> dict:
        chat = self._chat(params["chat_id"])
        return self._member(chat, params["user_id"])

    def _api_getChatAdministrators(self, params: dict) -> list[dict]:
        chat = self._chat(params["chat_id"])
        if chat.type == "private":
            raise ApiError(400, "Bad Request: there are no administrators in the private chat")
        ids = ([chat.creator] if chat.creator else []) + sorted(chat.admins - {chat.creator})
        out = [self._member(chat, i) for i in ids]
        if chat.bot_status == "administrator":
            out.append(self._member(chat, self.bot_id))
        return out

    def _api_getChatMemberCount(self, params: dict) -> int:
        chat = self._chat(params["chat_id"])
        if chat.type == "private":
            return 2
        return len(chat.members) + (chat.bot_status in ("member", "administrator"))

    def _api_leaveChat(self, params: dict) -> bool:
        chat = self._writable_chat(params["chat_id"])
        if chat.type == "private":
            raise ApiError(400, "Bad Request: chat member status can't be changed in private chats")
        self._set_bot_status(chat, "left", None)
        return True

    def _scope_key(self, params: dict) -> tuple[str, str]:
        scope = params.get("scope") or {"type": "default"}
        return json.dumps(scope, sort_keys=True), params.get("language_code") or ""

    def _api_setMyCommands(self, params: dict) -> bool:
        if len(params["commands"]) > 100:
            raise bad_request("BOT_COMMANDS_TOO_MUCH")
        for c in params["commands"]:
            if not re.fullmatch(r"[a-z0-9_]{1,32}", c["command"]):
                raise bad_request("BOT_COMMAND_INVALID")
            if not 1 <= len(c["description"]) <= 256:
                raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
        self.commands[self._scope_key(params)] = [dict(c) for c in params["commands"]]
        return True

    def _api_getMyCommands(self, params: dict) -> list[dict]:
        return [dict(c) for c in self.commands.get(self._scope_key(params), [])]

    def _api_deleteMyCommands(self, params: dict) -> bool:
        self.commands.pop(self._scope_key(params), None)
        return True

    def _api_setChatMenuButton(self, params: dict) -> bool:
        if params.get("chat_id") is not None:
            self._chat(params["chat_id"])
        self.menu_buttons[params.get("chat_id")] = params.get("menu_button") or {"type": "default"}
        return True

    def _api_getChatMenuButton(self, params: dict) -> dict:
        return self.menu_buttons.get(params.get("chat_id"), self.menu_buttons.get(None, {"type": "commands"}))

    def _api_generic(self, method: str, params: dict) -> Any:
        """A plausible ``ok`` answer for a valid method the emulator does not model."""
        self.unmodelled.append({"method": method, "params": params, "time": time.time()})
        chat = None
        if isinstance(params.get("chat_id"), int) and params["chat_id"] in self.chats:
            chat = self._writable_chat(params["chat_id"], writes="messages" if _counted(method) else None)
        self._rate_check(method, chat)
        self._rate_consume(method, chat)
        returns = self.spec.returns(method)
        kind = returns[0] if returns else "Boolean"
        if kind in ("Boolean", "True"):
            return True
        if kind == "Integer":
            return 0
        if kind == "String":
            return ""
        if kind.startswith("Array of"):
            return []
        if kind in ("Message", "MessageId") and chat is not None:
            rec = self._new_message(chat, None, thread_id=self._thread(chat, params))
            return rec.to_dict() if kind == "Message" else {"message_id": rec.message_id}
        return {}

    # ---------------------------------------------------------- simulation
    def add_user(
        self,
        user_id: int,
        first_name: str,
        username: str | None = None,
        language_code: str | None = "ru",
        last_name: str | None = None,
    ) -> SimUser:
        """A user (positive id) with a private chat of the same id, not yet started."""
        if user_id <= 0 or user_id in self.chats:
            raise ValueError(f"bad or duplicate user id {user_id}")
        user = SimUser(self, user_id, first_name, username, language_code, last_name)
        self.users[user_id] = user
        self.chats[user_id] = SimChat(self, user_id, "private", user=user)
        return user

    def add_group(
        self,
        chat_id: int,
        title: str,
        members: list[SimUser] = (),
        admins: list[SimUser] = (),
        supergroup: bool = False,
        is_forum: bool = False,
        *,
        bot_status: str = "member",
        username: str | None = None,
    ) -> SimChat:
        """A group (negative id) the bot is already in (``bot_status`` member/administrator/
        left). The first admin is the creator; admins are members too."""
        if chat_id >= 0 or chat_id in self.chats:
            raise ValueError(f"bad or duplicate group id {chat_id}")
        chat = SimChat(
            self,
            chat_id,
            "supergroup" if supergroup or is_forum else "group",
            title=title,
            is_forum=is_forum,
            bot_status=bot_status,
            username=username,
        )
        for u in list(members) + list(admins):
            chat.members[u.id] = u
        chat.admins = {u.id for u in admins}
        chat.creator = admins[0].id if admins else None
        self.chats[chat_id] = chat
        return chat

    def _queue_update(self, kind: str, payload: dict) -> int:
        uid = self._next_update
        self._next_update += 1
        update = {"update_id": uid, kind: payload}
        self.updates[uid] = update
        self._queue.append([update, False])
        self._notify()
        return uid

    def redeliver(self, update_id: int) -> int:
        """Queue an already delivered update again, with the same update_id."""
        self._queue.append([self.updates[update_id], True])
        self._notify()
        return update_id

    def inject(self, kind: str, payload: Any) -> int:
        """Test-only: queue an update of ``kind`` whose body is ``payload`` exactly as given (a
        malformed one too, as a self-hosted Bot API or an attacker may send); its update_id."""
        return self._queue_update(kind, payload)

    def reset_update_ids(self, next_id: int) -> None:
        """Test-only: restart update ids at ``next_id``, lower than before, as Telegram does after
        a week without updates (https://core.telegram.org/bots/api#update)."""
        self._next_update = next_id

    def _bot_in(self, chat: SimChat) -> bool:
        return chat.type == "private" or chat.bot_status in ("member", "administrator")

    def _user_message(
        self,
        user: SimUser,
        chat: SimChat,
        text: str | None = None,
        *,
        thread_id: int | None = None,
        reply_to: int | None = None,
        service: dict | None = None,
        sender_chat: int | None = None,
    ) -> int | None:
        entities = []
        if text:
            m = _COMMAND_RE.match(text)
            if m:
                entities = [{"type": "bot_command", "offset": 0, "length": m.end()}]
        if reply_to is None and not (service or {}).get("forum_topic_created"):
            reply_to = self._topic_reply(chat, thread_id)
        rec = self._new_message(
            chat,
            user,
            text=text,
            entities=entities,
            thread_id=thread_id,
            reply_to=reply_to,
            service=service or {},
            sender_chat=sender_chat,
        )
        if not self._bot_in(chat) or (service is None and not self._sees(chat, rec, text)):
            return None
        return self._queue_update("message", rec.to_dict())

    @staticmethod
    def _topic_reply(chat: SimChat, thread_id: int | None) -> int | None:
        """Telegram's implicit reply: in a forum topic, a message that replies to nothing
        carries ``reply_to_message`` = the topic's creation message (whose id is the topic's
        ``message_thread_id``)."""
        if thread_id is not None and chat.is_forum and thread_id in chat.topics:
            return thread_id
        return None

    def _sees(self, chat: SimChat, rec: MessageRecord, text: str | None) -> bool:
        """Does the bot receive this (non-service) message? Models privacy mode."""
        if chat.type == "private" or not self.privacy_mode or chat.bot_status == "administrator":
            return True
        m = _COMMAND_RE.match(text or "")
        if m:
            return m.group(2) is None or m.group(2).lower() == self.bot_username.lower()
        if rec.reply_to is not None:
            replied = self._msg(chat.id, rec.reply_to)
            return replied is not None and replied.from_bot
        return False

    def _user_sends(self, user: SimUser, chat: Any, text: str, *, thread_id: int | None, reply_to: Any) -> int | None:
        chat = self.chats[_chat_id_of(chat)]
        if chat.migrated_to is not None:
            raise ValueError(f"chat {chat.id} was migrated to {chat.migrated_to}")
        if chat.type == "private":
            if chat.id != user.id:
                raise ValueError("a user can only write to the bot in their own private chat")
            user.started, user.blocked = True, False
        elif user.id not in chat.members:
            raise ValueError(f"{user.first_name} is not a member of {chat.title}")
        elif chat.deleted:
            raise ValueError(f"{chat.title} was deleted")
        elif chat.read_only and user.id not in chat.admins:
            raise ValueError(f"{chat.title} is read-only for {user.first_name}")
        if thread_id is not None and thread_id not in chat.topics:
            raise ValueError(f"no topic {thread_id} in {chat.title}")
        if thread_id in chat.closed_topics and user.id not in chat.admins:
            raise ValueError(f"topic {thread_id} of {chat.title} is closed")
        rid = reply_to.message_id if isinstance(reply_to, MessageRecord) else reply_to
        return self._user_message(user, chat, text, thread_id=thread_id, reply_to=rid)

    def _user_edits(self, user: SimUser, message: Any, text: str) -> int | None:
        if isinstance(message, MessageRecord):
            rec = message
        else:
            chat_ref, mid = message
            rec = self._msg(_chat_id_of(chat_ref), mid)
            if rec is None:
                raise LookupError(f"no message {message}")
        if rec.sender is None or rec.sender.id != user.id or rec.deleted or rec.text is None or rec.service:
            raise ValueError("a user can only edit their own text messages")
        chat = self.chats[rec.chat_id]
        if not text:
            raise ValueError("a message text cannot be empty")
        m = _COMMAND_RE.match(text)
        rec.text = text
        rec.entities = [{"type": "bot_command", "offset": 0, "length": m.end()}] if m else []
        rec.edit_date = int(self.wall_time())
        rec.edited_count += 1
        if not self._bot_in(chat) or not self._sees(chat, rec, text):
            return None
        return self._queue_update("edited_message", rec.to_dict())

    async def send_as_anonymous_admin(self, chat: Any, text: str, *, thread_id: int | None = None) -> int | None:
        """An anonymous admin writes ``text`` in ``chat``: Telegram sends it from
        GroupAnonymousBot (id 1087968824, is_bot) with ``sender_chat`` = the group."""
        chat = self.chats[_chat_id_of(chat)]
        if chat.type == "private":
            raise ValueError("anonymous admins exist in groups only")
        if thread_id is not None and thread_id not in chat.topics:
            raise ValueError(f"no topic {thread_id} in {chat.title}")
        anon = SimUser(self, ANONYMOUS_ADMIN_ID, "Group", "GroupAnonymousBot", None, is_bot=True)
        return self._user_message(anon, chat, text, thread_id=thread_id, sender_chat=chat.id)

    def wall_time(self) -> float:
        """Telegram's wall clock (epoch seconds): the real one plus :attr:`wall_offset`."""
        return time.time() + self.wall_offset

    def age(self, seconds: float) -> None:
        """Move Telegram's wall clock ``seconds`` ahead: every message is that much older."""
        self.wall_offset += seconds

    def add_channel(self, chat_id: int, title: str) -> SimChat:
        """A channel (negative id) that people may write as, or that forwards its posts to a
        linked group. The bot is not in it."""
        if chat_id >= 0 or chat_id in self.chats:
            raise ValueError(f"bad or duplicate channel id {chat_id}")
        chat = SimChat(self, chat_id, "channel", title=title, bot_status="left")
        self.chats[chat_id] = chat
        return chat

    async def send_as_channel(
        self, user: SimUser, chat: Any, channel: SimChat, text: str, *, thread_id: int | None = None
    ) -> int | None:
        """``user`` writes ``text`` in ``chat`` as their ``channel`` (the «send as» persona):
        Telegram sends it from Channel_Bot with ``sender_chat`` = the channel."""
        chat = self.chats[_chat_id_of(chat)]
        if user.id not in chat.members:
            raise ValueError(f"{user.first_name} is not a member of {chat.title}")
        persona = SimUser(self, CHANNEL_BOT_ID, "Channel", "Channel_Bot", None, is_bot=True)
        return self._user_message(persona, chat, text, thread_id=thread_id, sender_chat=channel.id)

    def forward_from_channel(self, chat: Any, channel: SimChat, text: str) -> MessageRecord:
        """A post of ``channel`` forwarded automatically to its linked discussion group ``chat``:
        from "Telegram" (777000) with ``sender_chat`` the channel and ``is_automatic_forward``."""
        chat = self.chats[_chat_id_of(chat)]
        telegram = SimUser(self, TELEGRAM_ID, "Telegram", None, None)
        return self._new_message(
            chat, telegram, text=text, sender_chat=channel.id, service={"is_automatic_forward": True}
        )

    def _tap(self, user: SimUser, message: Any, button: Any, *, strict: bool) -> TapResult:
        if isinstance(message, MessageRecord):
            msg = message
        else:
            chat_id, mid = message
            msg = self._msg(_chat_id_of(chat_id), mid)
            if msg is None:
                raise LookupError(f"no message {message}")
        if msg.deleted:
            raise ValueError(f"message {msg.message_id} in {msg.chat_id} is deleted")
        chat = self.chats.get(msg.chat_id)
        if chat is not None and chat.type != "private" and not chat.username and user.id not in chat.members:
            # only members see a private group's messages; anyone may open a public one
            raise PermissionError(f"user {user.id} is no member of the private group {chat.id}")
        found = None
        for b in msg.flat_buttons:
            if isinstance(button, dict):
                if b == button or (
                    button.get("callback_data") is not None and b.get("callback_data") == button.get("callback_data")
                ):
                    found = b
                    break
            elif b.get("callback_data") == button:
                found = b
                break
        if found is None and isinstance(button, str):
            found = next((b for b in msg.flat_buttons if b.get("text") == button), None)
        if found is None:
            if strict or not isinstance(button, (str, dict)):
                labels = ", ".join(f"«{b.get('text')}»" for b in msg.flat_buttons)
                raise LookupError(f"no button «{button}» on message {msg.message_id}; it has: {labels}")
            found = button if isinstance(button, dict) else {"text": "?", "callback_data": button}
        if "callback_data" not in found:
            raise ValueError(f"button {found!r} is not a callback button")
        qid = str(4_000_000_000_000_000_000 + next(self._qids) * 7919)
        chat_instance = str((msg.chat_id * 2654435761) % (10**19))
        if msg.chat_id < 0:
            chat_instance = "-" + chat_instance
        self._queries[qid] = {
            "time": self.clock(),
            "answered": False,
            "user": user,
            "message": msg,
            "data": found["callback_data"],
        }
        uid = self._queue_update(
            "callback_query",
            {
                "id": qid,
                "from": user.to_dict(),
                "message": (
                    {"chat": self.chats[msg.chat_id].to_dict(), "message_id": msg.message_id, "date": 0}
                    if (msg.chat_id, msg.message_id) in self.inaccessible
                    else msg.to_dict()
                ),
                "chat_instance": chat_instance,
                "data": found["callback_data"],
            },
        )
        return TapResult(self, qid, uid, found["callback_data"])

    def _member_status(self, chat: SimChat, status: str, user: dict) -> dict:
        if status == "restricted":  # ChatMemberRestricted: may stay, may not write
            d: dict[str, Any] = {"status": "restricted", "user": user, "is_member": True, "until_date": 0}
            for right in (
                "can_send_messages",
                "can_send_audios",
                "can_send_documents",
                "can_send_photos",
                "can_send_videos",
                "can_send_video_notes",
                "can_send_voice_notes",
                "can_send_polls",
                "can_send_other_messages",
                "can_add_web_page_previews",
                "can_react_to_messages",
                "can_edit_tag",
                "can_change_info",
                "can_invite_users",
                "can_pin_messages",
                "can_manage_topics",
            ):
                d[right] = False
            return d
        if status == "kicked":
            return {"status": "kicked", "user": user, "until_date": 0}
        if status == "administrator":
            return self._admin_dict(user, can_be_edited=False)
        return {"status": status, "user": user}

    def _queue_my_member(self, chat: SimChat, by: SimUser | dict, old: str, new: str) -> int:
        bot = self.bot_user()
        return self._queue_update(
            "my_chat_member",
            {
                "chat": chat.to_dict(),
                "from": by if isinstance(by, dict) else by.to_dict(),
                "date": int(self.wall_time()),
                "old_chat_member": self._member_status(chat, old, bot),
                "new_chat_member": self._member_status(chat, new, bot),
            },
        )

    def _set_bot_status(self, chat: SimChat, status: str, by: SimUser | None, *, notify: bool = True) -> int | None:
        """Change the bot's status; ``by=None`` means the bot itself (leaveChat). With
        ``notify=False`` no my_chat_member update is queued (Telegram's lost or never sent
        one: only the answers to the bot's calls tell it); returns the update id, or None."""
        old = chat.bot_status
        chat.bot_status = status
        chat.bot_kicked = status == "kicked" or (status == "left" and by is not None)
        if not notify:
            return None
        return self._queue_my_member(chat, by if by is not None else self.bot_user(), old, status)

    def _default_actor(self, chat: SimChat, by: SimUser | None) -> SimUser:
        if by is not None:
            return by
        if chat.creator is not None:
            return chat.members[chat.creator]
        if chat.members:
            return next(iter(chat.members.values()))
        raise ValueError(f"chat {chat.id} has no members to act")

    async def remove_bot(self, chat: Any, by: SimUser | None = None, *, notify: bool = True) -> int | None:
        """An admin removes the bot: my_chat_member update (left in groups, kicked in
        supergroups; none with ``notify=False``); later sends answer 403 "bot was kicked from
        the ... chat"."""
        chat = self.chats[_chat_id_of(chat)]
        actor = self._default_actor(chat, by)
        return self._set_bot_status(chat, "kicked" if chat.type == "supergroup" else "left", actor, notify=notify)

    async def restrict_bot(self, chat: Any, by: SimUser | None = None, *, notify: bool = True) -> int | None:
        """An admin takes the bot's right to write (supergroups): my_chat_member update with
        status restricted (none with ``notify=False``); later sends and edits answer 400 (see
        :meth:`_write_refusal`)."""
        chat = self.chats[_chat_id_of(chat)]
        if chat.type != "supergroup":
            raise ValueError("members can be restricted in supergroups only")
        return self._set_bot_status(chat, "restricted", self._default_actor(chat, by), notify=notify)

    async def unrestrict_bot(self, chat: Any, by: SimUser | None = None, *, notify: bool = True) -> int | None:
        """An admin gives the restricted bot its rights back: my_chat_member update restricted
        → member (none with ``notify=False``)."""
        chat = self.chats[_chat_id_of(chat)]
        if chat.bot_status != "restricted":
            raise ValueError(f"the bot is not restricted in {chat.title}")
        return self._set_bot_status(chat, "member", self._default_actor(chat, by), notify=notify)

    def set_read_only(self, chat: Any, read_only: bool = True) -> None:
        """An admin makes the group read-only for members (its default permissions without
        ``can_send_messages``), or writable again. Telegram tells the bot nothing: while it is
        no administrator there, its sends and edits answer 400 (:meth:`_write_refusal`)."""
        chat = self.chats[_chat_id_of(chat)]
        if chat.type == "private":
            raise ValueError("private chats have no permissions")
        chat.read_only = read_only

    def delete_chat(self, chat: Any) -> None:
        """The group's owner deletes it: no update reaches the bot; from now on every call about
        it answers 400 "Bad Request: chat not found"."""
        chat = self.chats[_chat_id_of(chat)]
        if chat.type == "private":
            raise ValueError("a private chat cannot be deleted for the bot")
        chat.deleted = True

    async def close_topic(
        self, chat: Any, thread_id: int, by: SimUser | None = None, *, closed: bool = True
    ) -> int | None:
        """An admin closes (``closed=False``: reopens) a forum topic: a forum_topic_closed
        (reopened) service message in it; while closed, a send into it by a non-administrator
        answers 400 "Bad Request: TOPIC_CLOSED". Returns the service message's update id."""
        chat = self.chats[_chat_id_of(chat)]
        if thread_id not in chat.topics:
            raise ValueError(f"no topic {thread_id} in {chat.title}")
        if closed:
            chat.closed_topics.add(thread_id)
        else:
            chat.closed_topics.discard(thread_id)
        actor = self._default_actor(chat, by)
        service = {"forum_topic_closed": {}} if closed else {"forum_topic_reopened": {}}
        return self._user_message(actor, chat, thread_id=thread_id, service=service)

    def add_bot(self, chat: Any, by: SimUser | None = None) -> int:
        """Add the bot to a group: my_chat_member update plus a new_chat_members message.
        Returns the my_chat_member update id."""
        chat = self.chats[_chat_id_of(chat)]
        actor = self._default_actor(chat, by)
        uid = self._set_bot_status(chat, "member", actor)
        chat.bot_kicked = False
        self._user_message(actor, chat, service={"new_chat_members": [self.bot_user()]})
        return uid

    async def user_joined(self, chat: Any, user: SimUser) -> int | None:
        """``user`` joins: chat_member update (delivered only if allowed_updates asks for it)
        and a new_chat_members service message (its update id is returned)."""
        chat = self.chats[_chat_id_of(chat)]
        chat.members[user.id] = user
        old = "kicked" if user.id in chat.banned else "left"
        chat.banned.discard(user.id)  # (an admin adding a removed user lifts the ban)
        self._chat_member_update(chat, user, old, "member")
        return self._user_message(user, chat, service={"new_chat_members": [user.to_dict()]})

    async def user_left(self, chat: Any, user: SimUser) -> int | None:
        """``user`` leaves: chat_member update and a left_chat_member service message (its
        update id is returned)."""
        chat = self.chats[_chat_id_of(chat)]
        old = "creator" if user.id == chat.creator else "administrator" if user.id in chat.admins else "member"
        self._chat_member_update(chat, user, old, "left")
        uid = self._user_message(user, chat, service={"left_chat_member": user.to_dict()})
        chat.members.pop(user.id, None)
        chat.admins.discard(user.id)
        return uid

    async def remove_user(
        self, chat: Any, user: SimUser, by: SimUser | None = None, *, notify: bool = True
    ) -> int | None:
        """An admin (``by``, default the creator) removes ``user``: banned ("kicked") from a
        supergroup, "left" a basic group. The user is no longer a member (sends to the group
        fail, getChatMember says so); a chat_member update (admin bots only, if allowed_updates
        asks for it) and a left_chat_member service message from the admin, whose update id
        is returned. ``notify=False`` sends no service message (the bot never hears of it)."""
        chat = self.chats[_chat_id_of(chat)]
        if user.id not in chat.members:
            raise ValueError(f"{user.first_name} is not a member of {chat.title}")
        actor = self._default_actor(chat, by)
        if actor.id == user.id or actor.id not in chat.admins:
            raise ValueError("only another member who is an admin removes a member")
        old = "creator" if user.id == chat.creator else "administrator" if user.id in chat.admins else "member"
        new = "kicked" if chat.type == "supergroup" else "left"
        chat.members.pop(user.id, None)
        chat.admins.discard(user.id)
        if new == "kicked":
            chat.banned.add(user.id)
        self._chat_member_update(chat, user, old, new, by=actor)
        if not notify:
            return None
        return self._user_message(actor, chat, service={"left_chat_member": user.to_dict()})

    def _chat_member_update(
        self, chat: SimChat, user: SimUser, old: str, new: str, by: SimUser | None = None
    ) -> int | None:
        if chat.bot_status != "administrator":  # Telegram sends chat_member to admins only
            return None
        u = user.to_dict()
        old_d = (
            {"status": "creator", "user": u, "is_anonymous": False}
            if old == "creator"
            else self._member_status(chat, old, u)
        )
        return self._queue_update(
            "chat_member",
            {
                "chat": chat.to_dict(),
                "from": (by or user).to_dict(),
                "date": int(self.wall_time()),
                "old_chat_member": old_d,
                "new_chat_member": self._member_status(chat, new, u),
            },
        )

    async def migrate_group(self, chat: Any, new_id: int, by: SimUser | None = None, *, notify: bool = True) -> SimChat:
        """Upgrade a basic group to a supergroup ``new_id``: service messages with
        migrate_to_chat_id (old chat) and migrate_from_chat_id (new chat); afterwards calls
        to the old id answer 400 with parameters.migrate_to_chat_id. ``notify=False`` queues
        no service messages (the bot missed them: only the 400 tells it)."""
        old = self.chats[_chat_id_of(chat)]
        if old.type != "group":
            raise ValueError("only basic groups can be migrated")
        if new_id >= 0 or new_id in self.chats:
            raise ValueError(f"bad or duplicate supergroup id {new_id}")
        actor = self._default_actor(old, by)
        new = SimChat(
            self,
            new_id,
            "supergroup",
            title=old.title,
            members=dict(old.members),
            admins=set(old.admins),
            creator=old.creator,
            bot_status=old.bot_status,
        )
        self.chats[new_id] = new
        if notify:
            self._user_message(actor, old, service={"migrate_to_chat_id": new_id})
        old.migrated_to = new_id
        if notify:
            self._user_message(actor, new, service={"migrate_from_chat_id": old.id})
        return new

    async def announce_migration(self, chat: Any, by: SimUser | None = None) -> tuple[int | None, int | None]:
        """Queue the two service messages of an upgrade made with ``migrate_group(...,
        notify=False)``, late (Telegram delivered them after the bot met the 400). Returns the
        update ids (migrate_to_chat_id in the old chat, migrate_from_chat_id in the new one)."""
        old = self.chats[_chat_id_of(chat)]
        if old.migrated_to is None:
            raise ValueError(f"chat {old.id} was not migrated")
        new = self.chats[old.migrated_to]
        actor = self._default_actor(old, by)
        to = self._user_message(actor, old, service={"migrate_to_chat_id": new.id})
        return to, self._user_message(actor, new, service={"migrate_from_chat_id": old.id})

    async def create_topic(self, chat: Any, name: str, by: SimUser | None = None) -> int:
        """Create a forum topic; returns its message_thread_id."""
        chat = self.chats[_chat_id_of(chat)]
        if not chat.is_forum:
            raise ValueError("not a forum")
        actor = self._default_actor(chat, by)
        tid = self._next_mid.get(chat.id, 1)
        chat.topics[tid] = name
        self._user_message(
            actor, chat, thread_id=tid, service={"forum_topic_created": {"name": name, "icon_color": 7322096}}
        )
        return tid

    def delete_topic(self, chat: Any, thread_id: int) -> None:
        """An admin deletes a forum topic with its messages: no update reaches the bot; a send
        into it answers 400 "Bad Request: message thread not found", an edit of one of its
        messages "Bad Request: message to edit not found"."""
        chat = self.chats[_chat_id_of(chat)]
        if chat.topics.pop(thread_id, None) is None:
            raise ValueError(f"no topic {thread_id} in {chat.title}")
        chat.closed_topics.discard(thread_id)
        for message in self._messages.get(chat.id, {}).values():
            if message.thread_id == thread_id:
                message.deleted = True

    # --------------------------------------------------------------- queries
    def chat_messages(
        self, chat_id: Any, include_deleted: bool = False, *, from_bot: bool | None = None
    ) -> list[MessageRecord]:
        """Messages of a chat in order (user messages too unless ``from_bot`` is set)."""
        msgs = self._messages.get(_chat_id_of(chat_id), {}).values()
        return [m for m in msgs if (include_deleted or not m.deleted) and (from_bot is None or m.from_bot == from_bot)]

    def last_message(
        self, chat_id: Any, predicate: Callable[[MessageRecord], Any] | None = None, *, from_bot: bool | None = True
    ) -> MessageRecord | None:
        """The last non-deleted message (by default: sent by the bot) matching ``predicate``."""
        for m in reversed(self.chat_messages(chat_id, from_bot=from_bot)):
            if predicate is None or predicate(m):
                return m
        return None

    def clear_records(self) -> None:
        """Forget calls, errors, violations, unmodelled methods (state is kept)."""
        self.calls.clear()
        self.errors.clear()
        self.violations.clear()
        self.unmodelled.clear()

    def calls_by(self, method: str | None = None, chat_id: Any = None) -> list[dict]:
        cid = None if chat_id is None else _chat_id_of(chat_id)
        return [
            c for c in self.calls if (method is None or c["method"] == method) and (cid is None or c["chat_id"] == cid)
        ]

    @property
    def pending_updates(self) -> list[dict]:
        """Updates queued and not yet acknowledged by an offset."""
        return [e[0] for e in self._queue]

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 10) -> Any:
        """Wait until ``predicate()`` is truthy (re-checked after every request of the bot and
        every simulated event); return its value or raise TimeoutError."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            value = predicate()
            if value:
                return value
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"condition not met within {timeout} s")
            ev = self._event
            try:
                await asyncio.wait_for(ev.wait(), remaining)
            except TimeoutError:
                pass

    async def wait_answer(self, query_id: str, timeout: float = 10) -> dict:
        """Wait for the bot's answerCallbackQuery of ``query_id``; return its params."""
        return await self.wait_for(lambda: self.answers.get(query_id), timeout)

    async def wait_message(
        self,
        chat_id: Any,
        predicate: Callable[[MessageRecord], Any] | None = None,
        *,
        since: int = 0,
        timeout: float = 10,
        from_bot: bool | None = True,
    ) -> MessageRecord:
        """Wait for a message (by default from the bot) with message_id > ``since`` matching
        ``predicate`` (evaluated on its current, possibly edited, content)."""
        return await self.wait_for(
            lambda: self.last_message(
                chat_id, lambda m: m.message_id > since and (predicate is None or predicate(m)), from_bot=from_bot
            ),
            timeout,
        )

    async def wait_call(self, method: str, chat_id: Any = None, *, count: int = 1, timeout: float = 10) -> dict:
        """Wait until the bot made ``count`` calls of ``method`` (to ``chat_id``); return the
        last one."""
        return await self.wait_for(
            lambda: len(self.calls_by(method, chat_id)) >= count and self.calls_by(method, chat_id)[-1], timeout
        )

    # ------------------------------------------------- control API (manual tries)
    async def _handle_control(self, request: web.Request) -> web.Response:
        """``/_sim/<action>`` for driving the emulator from curl when run standalone.

        POST JSON: ``user`` {id, first_name, username?, language_code?}; ``group`` {id, title,
        members: [ids], admins: [ids], supergroup?, is_forum?}; ``start`` {user, payload?};
        ``send`` {user, chat, text, thread_id?}; ``tap`` {user, chat, message_id, button};
        ``block`` {user}; ``leave`` {user, chat}; ``remove`` {user, chat, by?} (an admin removes
        the user). GET: ``messages?chat_id=N``; ``records`` (violations, errors...).
        """
        action = request.match_info["action"]
        q: dict[str, Any] = dict(request.query)
        if request.can_read_body:
            q.update(await request.json())
        try:
            if action == "user":
                u = self.add_user(int(q["id"]), q["first_name"], q.get("username"), q.get("language_code", "ru"))
                result: Any = u.to_dict()
            elif action == "group":
                g = self.add_group(
                    int(q["id"]),
                    q["title"],
                    [self.users[int(i)] for i in q.get("members", [])],
                    [self.users[int(i)] for i in q.get("admins", [])],
                    bool(q.get("supergroup")),
                    bool(q.get("is_forum")),
                )
                result = g.to_dict()
            elif action == "start":
                result = await self.users[int(q["user"])].start_bot(q.get("payload"))
            elif action == "block":
                result = self.users[int(q["user"])].block_bot()
            elif action == "leave":
                result = await self.user_left(int(q["chat"]), self.users[int(q["user"])])
            elif action == "remove":
                by = self.users[int(q["by"])] if q.get("by") else None
                result = await self.remove_user(int(q["chat"]), self.users[int(q["user"])], by)
            elif action == "send":
                result = await self.users[int(q["user"])].send(int(q["chat"]), q["text"], thread_id=q.get("thread_id"))
            elif action == "tap":
                tap = await self.users[int(q["user"])].tap((int(q["chat"]), int(q["message_id"])), q["button"])
                result = {"query_id": tap.query_id, "update_id": tap.update_id}
            elif action == "messages":
                result = [
                    dict(m.to_dict(), deleted=m.deleted)
                    for m in self.chat_messages(int(q["chat_id"]), include_deleted=True)
                ]
            elif action == "records":
                result = {
                    "violations": self.violations,
                    "errors": self.errors,
                    "unmodelled": self.unmodelled,
                    "answers": self.answers,
                }
            else:
                return web.json_response({"ok": False, "description": "unknown action"}, status=404)
        except (KeyError, ValueError, LookupError) as e:
            return web.json_response(
                {"ok": False, "description": f"{type(e).__name__}: {e}"},
                status=400,
                dumps=lambda o: json.dumps(o, ensure_ascii=False),
            )
        # readable as it comes (Cyrillic button texts unescaped), as a person reads the demo
        return web.json_response({"ok": True, "result": result}, dumps=lambda o: json.dumps(o, ensure_ascii=False))


async def _serve(args: argparse.Namespace) -> None:
    emu = BotAPIEmulator(args.token, port=args.port, control=True)
    await emu.start()
    if args.demo:
        users = [
            emu.add_user(1001, "Алиса", "alice"),
            emu.add_user(1002, "Борис", "boris"),
            emu.add_user(1003, "Вера", "vera", "en"),
        ]
        for u in users:  # each presses Start, so the bot learns it may write to them
            await u.start_bot()
        emu.add_group(-100, "Demo group", members=users, admins=users[:1])
    print(emu.base_url, flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await emu.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Telegram Bot API emulator")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--token", default="123456:TEST")
    parser.add_argument("--demo", action="store_true", help="create users 1001-1003 (started) and group -100")
    args = parser.parse_args(argv)
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
