"""One complete game in each language through the real bot process: the group's language set
with /language taps, one player with their own private language, players with different
Telegram language codes; every text and button the bot produced afterwards is checked for
text of another language (a missing translation falling back to the English msgid, Cyrillic in
an en/fr/it chat, …)."""

from __future__ import annotations

import random
import re
import string

import pytest
from babel.messages.pofile import read_po

from tests.e2e.harness import BotProcess, Table
from tests.fakes.botapi import BotAPIEmulator
from tgbot.i18n import LANGUAGES, LOCALES_DIR, translator

pytestmark = pytest.mark.e2e

CYRILLIC = re.compile("[А-Яа-яЁё]")


def _fragments(lang: str | None) -> set[str]:
    """Pieces of every text of ``lang`` (``None``: the English msgids) between placeholders,
    tags and line breaks, long enough to be telling."""
    with (LOCALES_DIR / (lang or "en") / "LC_MESSAGES" / "cheat.po").open("rb") as f:
        cat = read_po(f)
    texts: list[str] = []
    for m in cat:
        if not m.id:
            continue
        if lang is None:
            texts += list(m.id) if isinstance(m.id, tuple) else [m.id]
        else:
            texts += list(m.string) if isinstance(m.string, tuple) else [m.string]
    out = set()
    for text in texts:
        for piece in re.split(r"\{[^}]*\}|<[^>]+>|\n", text):
            piece = piece.strip(" .,:;!?()—«»“”\u00a0\u202f")
            if len(piece) >= 6 and re.search(r"[^\W\d_]{3}", piece):
                out.add(piece)
    return out


def foreign_fragments(lang: str) -> set[str]:
    """Fragments of the other languages (and of the msgids) that no text of ``lang`` contains."""
    own = _fragments(lang)
    own_text = "\n".join(own)
    others: set[str] = set()
    for other in (None, *LANGUAGES):
        if other != lang:
            others |= _fragments(other)
    return {f for f in others - own if f not in own_text}


def texts_to(emu: BotAPIEmulator, chat_id: int, since: int) -> list[str]:
    """Every text and button label the bot sent or edited into ``chat_id`` after call ``since``."""
    out = []
    for call in emu.calls[since:]:
        if call.get("chat_id") != chat_id:
            continue
        params = call.get("params") or {}
        if isinstance(params.get("text"), str):
            out.append(params["text"])
        markup = params.get("reply_markup")
        if isinstance(markup, str):
            import json

            markup = json.loads(markup)
        if isinstance(markup, dict):
            out += [b.get("text", "") for row in markup.get("inline_keyboard", []) for b in row]
    return out


def check_language(texts: list[str], lang: str, forbidden: set[str], where: str) -> None:
    assert texts, where
    for text in texts:
        if lang != "ru":
            # only the game's own name is Cyrillic in every language (the word table)
            assert not CYRILLIC.search(text.replace("Верю — не верю", "")), f"{where} ({lang}): Cyrillic in {text!r}"
        for frag in forbidden:  # whole words: "are due" is no English inside "giocare due"
            if frag in text:
                assert not re.search(r"(?<!\w)" + re.escape(frag) + r"(?!\w)", text), (
                    f"{where} ({lang}): {frag!r} (another language) in {text!r}"
                )


@pytest.mark.parametrize("lang", LANGUAGES)
async def test_a_full_game_in_each_language(redis_server, tmp_path, lang):
    index = LANGUAGES.index(lang)
    own = LANGUAGES[(index + 1) % 4]  # the language player 2 picks for themselves
    # its players tap as soon as a tap is answered: a private chat's limit kept on, but short
    emu = BotAPIEmulator(group_window=6.0, private_window=0.1)
    await emu.start()
    # databases 1-3, 7 and 8 of the private server belong to other tests
    bot = BotProcess(emu, redis_server.url.replace("/0", f"/{10 + index}"), tmp_path / "bot.log")
    bot.start()
    try:
        codes = ["en", "fr", "it", "ru"]
        users = [
            emu.add_user(500 + index * 10 + i, name, language_code=codes[(i + index) % 4])
            for i, name in enumerate(["Ana", "Bo", "Cy", "Dee"])
        ]
        group = emu.add_group(-2000 - index, "Club", members=users, admins=users[:1])
        for u in users:
            await u.start_bot()
        # player 2 chooses their own language in private chat
        await users[1].send(users[1].chat, "/language")
        menu = await emu.wait_message(
            users[1].id, lambda m: any(b.get("callback_data", "").startswith("g:") for b in m.flat_buttons), timeout=30
        )
        assert (await (await users[1].tap(menu, f"g:0:{own}")).answer(15)) is not None
        # a player who is not an admin cannot set the group's language; the admin can
        await users[0].send(group, "/language")
        menu = await emu.wait_message(
            group.id, lambda m: any(b.get("callback_data", "").startswith("g:") for b in m.flat_buttons), timeout=30
        )
        refused = await (await users[2].tap(menu, f"g:0:{lang}")).answer(15)
        assert refused.get("text")
        assert (await (await users[0].tap(menu, f"g:0:{lang}")).answer(15)) is not None
        await emu.wait_for(
            lambda: (
                menu.text
                == translator(lang).t(
                    "The group's language is now {language}.",
                    language=translator(lang).t(
                        {"ru": "Russian", "en": "English", "fr": "French", "it": "Italian"}[lang]
                    ),
                )
            ),
            timeout=15,
        )
        mark = len(emu.calls)

        await users[0].send(group, "/start_game")
        lobby = await emu.wait_message(
            group.id, lambda m: any(b.get("callback_data", "").startswith("j:") for b in m.flat_buttons), timeout=30
        )
        join = next(b for b in lobby.flat_buttons if b.get("callback_data", "").startswith("j:"))
        table = Table(emu, group, users, random.Random(11 + index))
        for u in users[1:]:
            assert await table.tap(u, lobby, join) is not None
        start = next(b for b in lobby.flat_buttons if b.get("callback_data", "").startswith("s:"))
        assert await table.tap(users[0], lobby, start) is not None
        await users[3].send(group, "/rules")  # during the game: answered privately, nothing in the group
        while table.taps < 6000 and await table.step(timeout=30):
            pass
        await emu.wait_for(table.finished, timeout=60)
        assert table.unanswered == [] and emu.errors == [] and emu.violations == []
        # after the game: /rules in the group (answered privately), /help in private chat
        await users[2].send(group, "/rules")
        await users[1].send(users[1].chat, "/help")
        await emu.wait_for(
            lambda: len(texts_to(emu, users[2].id, mark)) and any("300" in t for t in texts_to(emu, users[2].id, mark)),
            timeout=30,
        )
        await emu.wait_for(lambda: any("/board" in t for t in texts_to(emu, users[1].id, mark)), timeout=30)

        hints = {
            translator(code).t(msg)
            for code in LANGUAGES
            for msg in (
                "I sent it to you in private chat.",
                "I can't write to you privately: open a chat with me, press «Start» and ask again.",
            )
        }
        await emu.wait_for(lambda: any(m.text in hints for m in emu.chat_messages(group.id, from_bot=True)), timeout=30)
        group_hints = [m.text for m in emu.chat_messages(group.id, from_bot=True) if m.text in hints]
        assert group_hints == [translator(lang).t("I sent it to you in private chat.")]  # only the one after the game
        assert any("300" in t for t in texts_to(emu, users[3].id, mark))
        expected = {group.id: lang, **{u.id: (own if i == 1 else lang) for i, u in enumerate(users)}}
        for chat_id, want in expected.items():
            check_language(texts_to(emu, chat_id, mark), want, foreign_fragments(want), f"chat {chat_id}")
        for user, ans in table.answers:
            want = own if user is users[1] else lang
            if ans.get("text"):
                check_language([ans["text"]], want, foreign_fragments(want), f"answer to {user.first_name}")
        result = [m for m in emu.chat_messages(group.id) if m.text and translator(lang).t("Game over.") in m.text]
        assert len(result) == 1
        # the command lists are registered in every language
        for code in LANGUAGES:
            cmds = emu.commands.get((next(k for k, _ in emu.commands if '"all_group_chats"' in k), code))
            assert cmds and any(c["command"] == "language" for c in cmds)
            assert cmds[0]["description"] == translator(code).t("Open a lobby for a new game")
    finally:
        bot.stop()
        await emu.stop()
