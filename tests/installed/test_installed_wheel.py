"""The package as users install it: ``.ci/run``'s installed-wheel stage builds the wheel, installs
it without extras into a fresh virtual environment outside the source tree and runs this file with
``CHEAT_BOT`` set to that environment's console script. The bot runs from an empty folder (no
source tree, no catalogs but the packaged ones) against the Bot API emulator. A Russian group (the
default language) plays a whole game to its result: two people tapping the keyboards the bot
offers and two AI seats (one from the lobby's button, one from /add_bot), the AI's pauses at their
least. A French group (set with /language) plays the game's opening. Every group, private and
tap-answer text is checked to be in its chat's language."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess

import pytest

from tests.e2e.harness import Table
from tests.e2e.test_languages import check_language, foreign_fragments, texts_to
from tests.fakes.botapi import BotAPIEmulator, MessageRecord
from tests.redis_server import free_port
from tgbot.i18n import translator

pytestmark = pytest.mark.e2e

CHEAT_BOT = os.environ.get("CHEAT_BOT", "")

if not CHEAT_BOT:
    pytest.skip(
        "runs in .ci/run's installed-wheel stage (CHEAT_BOT=<the installed console script>)", allow_module_level=True
    )


def _installed_env(**extra: str) -> dict[str, str]:
    """A user's environment: no PYTHONPATH, no virtual environment of the source tree."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")
    return {**{k: os.environ[k] for k in keep if k in os.environ}, "PYTHONUNBUFFERED": "1", **extra}


def test_help_and_version_need_no_token(tmp_path):
    help_run = subprocess.run([CHEAT_BOT, "--help"], cwd=tmp_path, env=_installed_env(), capture_output=True, text=True)
    assert help_run.returncode == 0, help_run.stderr
    assert "BOT_TOKEN" in help_run.stdout and "HTTP_LISTEN" in help_run.stdout
    version = subprocess.run(
        [CHEAT_BOT, "--version"], cwd=tmp_path, env=_installed_env(), capture_output=True, text=True
    )
    assert version.returncode == 0 and version.stdout.startswith("cheat-bot ") and "unknown" not in version.stdout


def _with_button(prefix: str):
    """A message predicate: it has a button whose callback data starts with ``prefix``."""
    return lambda m: any(b.get("callback_data", "").startswith(prefix) for b in m.flat_buttons)


async def _open(table: Table, lang: str | None, bots: int = 0) -> int:
    """The group's admin sets ``lang`` (None: the default), a lobby opens, everyone joins, the
    admin seats ``bots`` AI players (the first with the lobby's button, the others with
    /add_bot) and starts the game. Returns the number of the emulator's calls before the lobby."""
    emu, group, users = table.emu, table.group, table.players
    if lang:
        await users[0].send(group, "/language")
        menu = await emu.wait_message(group.id, _with_button("g:"), timeout=30)
        assert await (await users[0].tap(menu, f"g:0:{lang}")).answer(15) is not None
    mark = len(emu.calls)
    await users[0].send(group, "/start_game")
    lobby = await emu.wait_message(group.id, _with_button("j:"), timeout=30)
    join = next(b for b in lobby.flat_buttons if b.get("callback_data", "").startswith("j:"))
    for u in users[1:]:
        assert await table.tap(u, lobby, join) is not None
    if bots:
        add = next(b for b in lobby.flat_buttons if b.get("callback_data", "").startswith("a:"))
        assert await table.tap(users[0], lobby, add) is not None
    for _ in range(bots - 1):
        await users[0].send(group, "/add_bot")
    seated = translator(lang or "ru").t("Players ({count}/6):", count=len(users) + bots)
    await emu.wait_for(lambda: seated in (lobby.text or ""), timeout=30)
    start = next(b for b in lobby.flat_buttons if b.get("callback_data", "").startswith("s:"))
    assert await table.tap(users[0], lobby, start) is not None
    return mark


async def _play(table: Table, taps: int | None = None) -> None:
    """The people tap random legal buttons of their panels (``Table``'s choice), each tap as soon
    as the emulator shows one, until the result is in the group (or ``taps`` more taps)."""
    end = None if taps is None else table.taps + taps
    while end is None or table.taps < end:
        acts = await table.emu.wait_for(lambda: table.finished() or table.actionable(), timeout=60)
        if acts is True:
            return
        user, panel, buttons = table.rng.choice(acts)
        await table.tap(user, panel, table.choose(buttons))


async def _check_the_end(table: Table, lang: str) -> None:
    """One result in the group, then the final board posted under it, both in ``lang``: the
    board's last line is the result's line (the winner, or a shared first place), its button
    Play again."""
    t = translator(lang)

    def final_boards() -> list[MessageRecord]:
        return [
            m
            for m in table.emu.chat_messages(table.group.id)
            if m.from_bot and not m.deleted and any(b.get("text") == t.t("Play again") for b in m.flat_buttons)
        ]

    (board,) = await table.emu.wait_for(final_boards, timeout=30)
    (result,) = [
        m for m in table.emu.chat_messages(table.group.id) if m.from_bot and t.t("Game over.") in (m.text or "")
    ]
    assert board.message_id > result.message_id
    result_line = board.text.splitlines()[-1]
    pile = (t.t("Pile: {cards}", cards=""), t.t("Pile: empty"))
    assert board.text.startswith(t.t("«I doubt it»")) and any(line in board.text for line in pile), board.text
    wins = t.t("{winner} wins!", winner="\0").split("\0")
    draw = t.t("Draw! First place shared by {players}.", players="").rstrip(".")
    assert all(part in result_line for part in wins) or result_line.startswith(draw), result_line
    assert result_line in result.text.splitlines(), (result_line, result.text)


async def test_the_installed_bot_plays_a_game_in_russian_and_an_opening_in_french(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    # a short group window: the AI's least pause is the group's message spacing (2 s / 20)
    emu = BotAPIEmulator(group_window=2.0)
    await emu.start()
    log_path = tmp_path / "bot.log"
    env = _installed_env(
        BOT_TOKEN=emu.token,
        TELEGRAM_BASE_URL=emu.base_url,
        HTTP_LISTEN=f"127.0.0.1:{free_port()}",
        RATE_GROUP_MAX=str(emu.group_rate),
        RATE_GROUP_PERIOD=str(emu.group_window),
        RATE_PRIVATE_MAX=str(emu.private_rate),
        RATE_PRIVATE_PERIOD=str(emu.private_window),
        AI_PAUSE_MIN="0",
        AI_PAUSE_MAX="0",
    )
    with open(log_path, "wb") as log:
        bot = subprocess.Popen([CHEAT_BOT], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        # the French group's players have Italian Telegram apps: their private texts follow the group's choice
        ru = [emu.add_user(700 + i, name, language_code="ru") for i, name in enumerate(["Аня", "Борис"])]
        fr = [emu.add_user(800 + i, name, language_code="it") for i, name in enumerate(["Amélie", "Bruno", "Chloé"])]
        ru_table = Table(emu, emu.add_group(-3001, "Клуб", members=ru, admins=ru[:1]), ru, random.Random(1))
        fr_table = Table(emu, emu.add_group(-3002, "Club", members=fr, admins=fr[:1]), fr, random.Random(2))
        tables = {"ru": ru_table, "fr": fr_table}
        for u in ru + fr:  # (the welcome is in their Telegram language: not checked)
            await u.start_bot(answered=True)
        ru_mark, fr_mark = await asyncio.gather(_open(ru_table, None, bots=2), _open(fr_table, "fr"))
        marks = {"ru": ru_mark, "fr": fr_mark}
        await asyncio.gather(_play(ru_table), _play(fr_table, 6))
        assert bot.poll() is None, log_path.read_text()[-3000:]
        await _check_the_end(ru_table, "ru")
        for lang, table in tables.items():
            assert table.unanswered == [], lang
            forbidden = foreign_fragments(lang)
            for chat in (table.group, *table.players):
                check_language(texts_to(emu, chat.id, marks[lang]), lang, forbidden, f"chat {chat.id}")
            for user, answer in table.answers:
                if answer.get("text"):
                    check_language([answer["text"]], lang, forbidden, f"answer to {user.first_name}")
            assert translator(lang).t("Join") in texts_to(emu, table.group.id, marks[lang]), lang  # the lobby's button
        assert emu.errors == [] and emu.violations == []
        log = log_path.read_text()
        assert "Traceback" not in log and "cheat-bot " in log, log[-3000:]  # the version in the "active" line
    finally:
        bot.terminate()
        try:
            bot.wait(10)
        except subprocess.TimeoutExpired:
            bot.kill()
        await emu.stop()
