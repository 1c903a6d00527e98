"""The playground's page: the demo group and each demo person's private chat, as a Telegram client
shows them, driven through the emulator's simulation API (what a person does) and read from its
records (what the bot sent). Nothing here answers for the bot or skips one of the emulator's checks.

Routes: ``/`` the page; ``/api/events`` server-sent events, one ``state`` event per change;
``POST /api/send`` ``{user, chat, text}``; ``POST /api/tap`` ``{user, chat, message_id, data}``
(answers with the bot's answerCallbackQuery); ``POST /api/start`` ``{user, payload?}`` (Start);
``POST /api/language`` ``{user, language_code}``; ``GET /api/file/{chat}/{message_id}``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from aiohttp import web

from playground.emulator.botapi import BotAPIEmulator, MessageRecord, SimChat, SimUser

#: Telegram app languages offered per person: the bot's four, and one it does not speak
LANGUAGE_CHOICES = {"ru": "Русский", "en": "English", "fr": "Français", "it": "Italiano", "de": "Deutsch"}


@dataclass(frozen=True)
class Demo:
    """What the page shows: the group and the people (the first is the group's creator)."""

    group: SimChat
    people: list[SimUser]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Page:
    """The aiohttp application of the page, bound to one emulator and one demo."""

    def __init__(self, emu: BotAPIEmulator, demo: Demo) -> None:
        self.emu = emu
        self.demo = demo
        self.static = resources.files("playground") / "static"
        #: bumped when the page changes something the emulator does not record as an event
        self._revision = 0
        #: the open event streams, cancelled when the page stops (they never end by themselves)
        self._streams: set[asyncio.Task] = set()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/", self._index)
        app.router.add_get("/static/{name}", self._static)
        app.router.add_get("/api/events", self._events)
        app.router.add_get("/api/file/{chat}/{message_id}", self._file)
        app.router.add_post("/api/send", self._send)
        app.router.add_post("/api/tap", self._tap)
        app.router.add_post("/api/start", self._start)
        app.router.add_post("/api/language", self._language)
        app.on_shutdown.append(self._close_streams)
        return app

    async def _close_streams(self, app: web.Application) -> None:
        for task in self._streams:
            task.cancel()

    # ------------------------------------------------------------------ reading
    def state(self) -> dict:
        """Everything the page shows, as JSON-ready data."""
        people = self.demo.people
        chats = {str(self.demo.group.id): self._messages(self.demo.group.id)}
        for person in people:
            chats[str(person.id)] = self._messages(person.id)
        return {
            "bot": {"name": self.emu.bot_first_name, "username": self.emu.bot_username},
            "group": {
                "id": self.demo.group.id,
                "title": self.demo.group.title,
                "admins": sorted(self.demo.group.admins),
            },
            "people": [
                {
                    "id": p.id,
                    "name": p.first_name,
                    "username": p.username,
                    "language": p.language_code or "",
                    "started": p.started,
                    "blocked": p.blocked,
                    "menus": {"private": self._menu(p, "private"), "group": self._menu(p, "group")},
                }
                for p in people
            ],
            "languages": LANGUAGE_CHOICES,
            "chats": chats,
        }

    def _menu(self, person: SimUser, kind: str) -> list[dict]:
        """The bot's command menu this person's Telegram shows in a chat of ``kind``: the most
        specific scope and language the bot set (Telegram's order, for the scopes used here)."""
        scopes = ["all_private_chats"] if kind == "private" else ["all_group_chats"]
        if kind == "group" and person.id in self.demo.group.admins:
            scopes.insert(0, "all_chat_administrators")
        for scope in [*scopes, "default"]:
            key = json.dumps({"type": scope}, sort_keys=True)
            for language in (person.language_code or "", ""):
                if (key, language) in self.emu.commands:
                    return self.emu.commands[(key, language)]
        return []

    def _messages(self, chat_id: int) -> list[dict]:
        return [self._message(m) for m in self.emu.chat_messages(chat_id)]

    def _message(self, m: MessageRecord) -> dict:
        d: dict[str, Any] = {
            "id": m.message_id,
            "from": "bot" if m.sender is None else m.sender.id,
            "name": self.emu.bot_first_name if m.sender is None else m.sender.first_name,
            "date": m.date,
            "edited": m.edit_date is not None,
            "text": m.text,
            "entities": m.entities,
            "buttons": [
                [{k: b[k] for k in ("text", "callback_data", "url", "style") if k in b} for b in row]
                for row in m.buttons
            ],
        }
        if m.document is not None:
            d["document"] = {"name": m.document.get("file_name", "file"), "size": m.document.get("file_size", 0)}
            d["text"], d["entities"] = m.caption, m.caption_entities
        if m.reply_to is not None:
            replied = self._find(m.chat_id, m.reply_to)
            if replied is not None:
                d["reply_to"] = {
                    "name": self.emu.bot_first_name if replied.sender is None else replied.sender.first_name,
                    "text": (replied.text or replied.caption or "")[:80],
                }
        if m.service:
            d["service"] = sorted(m.service)
        return d

    def _find(self, chat_id: int, message_id: int) -> MessageRecord | None:
        return next((m for m in self.emu.chat_messages(chat_id) if m.message_id == message_id), None)

    def _revision_key(self) -> tuple[int, int, int]:
        """Changes whenever the bot called the emulator, a person acted, or the page changed
        something: a cheap test before building the state again."""
        return len(self.emu.calls), len(self.emu.updates), self._revision

    # ------------------------------------------------------------------ routes
    async def _index(self, request: web.Request) -> web.Response:
        return web.Response(text=(self.static / "index.html").read_text(encoding="utf-8"), content_type="text/html")

    async def _static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        types = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
        kind = next((t for ext, t in types.items() if name.endswith(ext)), None)
        file = self.static / name
        if kind is None or "/" in name or not file.is_file():
            raise web.HTTPNotFound()
        return web.Response(text=file.read_text(encoding="utf-8"), content_type=kind)

    async def _events(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events: the state whenever it changed (each chat only when it did), and a
        comment every 15 s so that proxies keep the stream open."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        task = asyncio.current_task()
        assert task is not None
        self._streams.add(task)
        try:
            await self._stream(response)
        except ConnectionResetError:  # the page was closed or reloaded
            pass
        finally:
            self._streams.discard(task)
        return response

    async def _stream(self, response: web.StreamResponse) -> None:
        sent: dict[str, str] = {}
        key: tuple[int, int, int] | None = None

        def moved_on() -> bool:
            return self._revision_key() != key

        while True:
            try:
                await self.emu.wait_for(moved_on, timeout=15)
            except TimeoutError:
                await response.write(b": keep-alive\n\n")
                continue
            key = self._revision_key()
            state = self.state()
            chats = {cid: _dumps(msgs) for cid, msgs in state.pop("chats").items()}
            changed = {cid: text for cid, text in chats.items() if sent.get(cid) != text}
            head = _dumps(state)
            if not changed and sent.get("") == head:
                continue
            sent[""] = head
            sent.update(changed)
            chats_json = ",".join(f'"{cid}":{text}' for cid, text in changed.items())
            body = f'{{"head":{head},"chats":{{{chats_json}}}}}'
            await response.write(f"event: state\ndata: {body}\n\n".encode())

    async def _json(self, request: web.Request) -> dict:
        try:
            body = await request.json()
        except ValueError:
            raise web.HTTPBadRequest(text="a JSON object expected") from None
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(text="a JSON object expected")
        return body

    def _person(self, body: dict) -> SimUser:
        person = next((p for p in self.demo.people if p.id == body.get("user")), None)
        if person is None:
            raise web.HTTPBadRequest(text="no such demo person")
        return person

    def _chat_id(self, body: dict) -> int:
        chat = body.get("chat")
        if chat not in {self.demo.group.id, *(p.id for p in self.demo.people)}:
            raise web.HTTPBadRequest(text="no such chat")
        return int(chat)

    @staticmethod
    def _refused(error: Exception) -> web.Response:
        """What the emulator refused a person (not a member, a deleted message...): the page
        shows it as Telegram's app would not have let them do it."""
        return web.json_response({"ok": False, "description": str(error)}, status=409, dumps=_dumps)

    async def _send(self, request: web.Request) -> web.Response:
        body = await self._json(request)
        person, chat = self._person(body), self._chat_id(body)
        text = str(body.get("text") or "").strip()
        if not text:
            raise web.HTTPBadRequest(text="empty message")
        try:
            update_id = await person.send(chat, text)
        except (ValueError, LookupError, PermissionError) as e:
            return self._refused(e)
        return web.json_response({"ok": True, "update_id": update_id})

    async def _tap(self, request: web.Request) -> web.Response:
        """Press a button as the person; wait for the bot's answer to the tap (a toast or an alert
        in Telegram's app), as long as Telegram waits for one."""
        body = await self._json(request)
        person, chat = self._person(body), self._chat_id(body)
        try:
            tap = await person.tap((chat, int(body["message_id"])), str(body["data"]))
        except (KeyError, TypeError, ValueError, LookupError, PermissionError) as e:
            return self._refused(e)
        try:
            answer = await tap.answer(timeout=self.emu.query_timeout)
        except TimeoutError:
            return web.json_response({"ok": True, "answered": False})
        shown = {k: answer[k] for k in ("text", "show_alert", "url") if answer.get(k)}
        return web.json_response({"ok": True, "answered": True, "answer": shown}, dumps=_dumps)

    async def _start(self, request: web.Request) -> web.Response:
        """The person presses Start in their private chat (also what a ``t.me/<bot>?start=…``
        link the bot answered a tap with leads to)."""
        body = await self._json(request)
        person = self._person(body)
        payload = body.get("payload")
        update_id = await person.start_bot(str(payload) if payload else None)
        return web.json_response({"ok": True, "update_id": update_id})

    async def _language(self, request: web.Request) -> web.Response:
        """Switch the language of the person's Telegram app: their next updates carry it."""
        body = await self._json(request)
        person = self._person(body)
        language = body.get("language_code")
        if language not in LANGUAGE_CHOICES:
            raise web.HTTPBadRequest(text="unknown language")
        person.set_language(language)
        self._revision += 1
        return web.json_response({"ok": True})

    async def _file(self, request: web.Request) -> web.Response:
        chat = self._chat_id({"chat": int(request.match_info["chat"])})
        message = self._find(chat, int(request.match_info["message_id"]))
        if message is None or message.file is None:
            raise web.HTTPNotFound()
        name = (message.document or {}).get("file_name", "file")
        return web.Response(
            body=message.file.data,
            content_type=message.file.content_type or "application/octet-stream",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )


async def serve(page: Page, host: str, port: int) -> tuple[web.AppRunner, int]:
    """Start the page on ``host``:``port`` (0: a free port); returns the runner and the port."""
    runner = web.AppRunner(page.app(), handle_signals=False, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner, runner.addresses[0][1]
