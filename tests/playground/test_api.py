"""The playground page's API acts as the demo people through the emulator's simulation only: what
the emulator refuses a person, the page refuses too; what the bot sends is shown as Telegram parsed it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import aiohttp
import pytest

from playground.emulator.botapi import BotAPIEmulator
from playground.page import Demo, Page, serve

ALICE, BORIS, GROUP = 1001, 1002, -100


@pytest.fixture
async def served() -> AsyncIterator[tuple[BotAPIEmulator, str, aiohttp.ClientSession]]:
    """The emulator, the page's URL and an HTTP session. Борис is a demo person but no member of
    the group."""
    emu = BotAPIEmulator()
    await emu.start()
    alice, boris = emu.add_user(ALICE, "Алиса"), emu.add_user(BORIS, "Борис", language_code="en")
    group = emu.add_group(GROUP, "Demo group", members=[alice], admins=[alice])
    runner, port = await serve(Page(emu, Demo(group, [alice, boris])), "127.0.0.1", 0)
    try:
        async with aiohttp.ClientSession() as http:
            yield emu, f"http://127.0.0.1:{port}", http
    finally:
        await runner.cleanup()
        await emu.stop()


async def post(http: aiohttp.ClientSession, url: str, body: dict) -> tuple[int, dict]:
    async with http.post(url, json=body) as response:
        return response.status, await response.json()


async def bot_call(http: aiohttp.ClientSession, emu: BotAPIEmulator, method: str, params: dict) -> dict:
    async with http.post(f"{emu.base_url}{emu.token}/{method}", json=params) as response:
        return await response.json()


async def lobby(http: aiohttp.ClientSession, emu: BotAPIEmulator) -> dict:
    """The bot posts a message with a Join button in the group."""
    keyboard = {"inline_keyboard": [[{"text": "Join", "callback_data": "j"}]]}
    return await bot_call(http, emu, "sendMessage", {"chat_id": GROUP, "text": "Lobby", "reply_markup": keyboard})


async def test_a_message_carries_the_persons_telegram_language(served) -> None:
    emu, url, http = served
    assert (await post(http, f"{url}/api/send", {"user": ALICE, "chat": GROUP, "text": "/start_game"}))[0] == 200
    assert (await post(http, f"{url}/api/language", {"user": ALICE, "language_code": "fr"}))[0] == 200
    assert (await post(http, f"{url}/api/send", {"user": ALICE, "chat": GROUP, "text": "/rules"}))[0] == 200
    sent = [(u["message"]["text"], u["message"]["from"]["language_code"]) for u in emu.pending_updates]
    assert sent == [("/start_game", "ru"), ("/rules", "fr")]


async def test_what_the_emulator_refuses_a_person_the_page_refuses(served) -> None:
    emu, url, http = served
    status, body = await post(http, f"{url}/api/send", {"user": BORIS, "chat": GROUP, "text": "/start_game"})
    assert status == 409 and "not a member" in body["description"]
    message = await lobby(http, emu)
    message_id = message["result"]["message_id"]
    tap = {"user": ALICE, "chat": GROUP, "message_id": message_id, "data": "forged"}
    status, body = await post(http, f"{url}/api/tap", tap)
    assert status == 409 and "no button" in body["description"]
    status, body = await post(http, f"{url}/api/tap", dict(tap, user=BORIS, data="j"))  # no member: cannot see it
    assert status == 409 and "no member" in body["description"]
    assert emu.pending_updates == []


async def test_a_tap_waits_for_the_bots_answer(served) -> None:
    emu, url, http = served
    message = await lobby(http, emu)

    async def bot() -> None:
        update = await emu.wait_for(lambda: next((u for u in emu.pending_updates if "callback_query" in u), None))
        query = update["callback_query"]
        assert (query["from"]["id"], query["data"]) == (ALICE, "j")
        await bot_call(http, emu, "answerCallbackQuery", {"callback_query_id": query["id"], "text": "You're in."})

    answering = asyncio.ensure_future(bot())
    status, body = await post(
        http,
        f"{url}/api/tap",
        {"user": ALICE, "chat": GROUP, "message_id": message["result"]["message_id"], "data": "j"},
    )
    await answering
    assert status == 200 and body == {"ok": True, "answered": True, "answer": {"text": "You're in."}}


async def test_the_events_show_messages_as_telegram_parsed_them(served) -> None:
    emu, url, http = served
    await bot_call(
        http,
        emu,
        "sendMessage",
        {
            "chat_id": GROUP,
            "text": '<b>Board</b> <tg-time unix="1796131919" format="r">in 90 s</tg-time>',
            "parse_mode": "HTML",
        },
    )
    async with http.get(f"{url}/api/events") as response:
        while not (line := (await response.content.readline()).decode()).startswith("data: "):
            pass
    state = json.loads(line.removeprefix("data: "))
    assert [p["name"] for p in state["head"]["people"]] == ["Алиса", "Борис"]
    (message,) = state["chats"][str(GROUP)]
    assert message["text"] == "Board in 90 s"
    assert [e["type"] for e in message["entities"]] == ["bold", "date_time"]
    assert message["entities"][1]["unix_time"] == 1796131919
