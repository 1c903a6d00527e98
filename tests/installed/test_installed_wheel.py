"""The package as users install it: ``.ci/run``'s installed-wheel stage builds the wheel, installs
it without extras into a fresh virtual environment outside the source tree and runs this file with
``CHEAT_BOT`` set to that environment's console script. The bot runs from an empty folder (no
source tree, no catalogs but the packaged ones) against the Bot API emulator; two groups play the
opening of a game, one in Russian (the default) and one in French (set with /language), and every
group and private text is checked to be in its chat's language."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess

import pytest

from tests.e2e.harness import Table
from tests.e2e.test_languages import check_language, foreign_fragments, texts_to
from tests.fakes.botapi import BotAPIEmulator, SimChat, SimUser
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


async def _open(emu: BotAPIEmulator, group: SimChat, users: list[SimUser], lang: str | None) -> int:
    """The group's admin sets ``lang`` (None: the default), a lobby opens, everyone joins, the
    game starts. Returns the number of the emulator's calls before the lobby."""
    if lang:
        await users[0].send(group, "/language")
        menu = await emu.wait_message(
            group.id, lambda m: any(b.get("callback_data", "").startswith("g:") for b in m.flat_buttons), timeout=30
        )
        assert await (await users[0].tap(menu, f"g:0:{lang}")).answer(15) is not None
    mark = len(emu.calls)
    await users[0].send(group, "/start_game")
    lobby = await emu.wait_message(
        group.id, lambda m: any(b.get("callback_data", "").startswith("j:") for b in m.flat_buttons), timeout=30
    )
    join = next(b for b in lobby.flat_buttons if b.get("callback_data", "").startswith("j:"))
    for u in users[1:]:
        assert await (await u.tap(lobby, join)).answer(15) is not None
    start = next(b for b in lobby.flat_buttons if b.get("callback_data", "").startswith("s:"))
    assert await (await users[0].tap(lobby, start)).answer(15) is not None
    return mark


async def _play(table: Table, taps: int) -> None:
    while table.taps < taps:
        assert await table.step(timeout=30), "nobody could play"


async def test_the_installed_bot_plays_in_russian_and_french(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    emu = BotAPIEmulator(group_window=6.0)
    await emu.start()
    log_path = tmp_path / "bot.log"
    env = _installed_env(
        BOT_TOKEN=emu.token,
        TELEGRAM_BASE_URL=emu.base_url,
        HTTP_LISTEN=f"127.0.0.1:{free_port()}",
        RATE_GROUP_MAX=str(emu.group_rate),
        RATE_GROUP_PERIOD=str(emu.group_window),
    )
    with open(log_path, "wb") as log:
        bot = subprocess.Popen([CHEAT_BOT], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        # the French group's players have Italian Telegram apps: their private texts follow the group's choice
        ru = [emu.add_user(700 + i, name, language_code="ru") for i, name in enumerate(["Аня", "Борис", "Вера"])]
        fr = [emu.add_user(800 + i, name, language_code="it") for i, name in enumerate(["Amélie", "Bruno", "Chloé"])]
        ru_group = emu.add_group(-3001, "Клуб", members=ru, admins=ru[:1])
        fr_group = emu.add_group(-3002, "Club", members=fr, admins=fr[:1])
        tables = {
            "ru": (Table(emu, ru_group, ru, random.Random(1)), ru_group, ru),
            "fr": (Table(emu, fr_group, fr, random.Random(2)), fr_group, fr),
        }
        for u in ru + fr:  # (the welcome is in their Telegram language: not checked)
            await u.start_bot(answered=True)
        marks = dict(
            zip(
                tables,
                await asyncio.gather(_open(emu, ru_group, ru, None), _open(emu, fr_group, fr, "fr")),
                strict=True,
            )
        )
        await asyncio.gather(*(_play(table, 6) for table, _, _ in tables.values()))
        assert bot.poll() is None, log_path.read_text()[-3000:]
        for lang, (table, group, users) in tables.items():
            forbidden = foreign_fragments(lang)
            for chat in (group, *users):
                check_language(texts_to(emu, chat.id, marks[lang]), lang, forbidden, f"chat {chat.id}")
            for user, answer in table.answers:
                if answer.get("text"):
                    check_language([answer["text"]], lang, forbidden, f"answer to {user.first_name}")
            assert translator(lang).t("Join") in texts_to(emu, group.id, marks[lang]), lang  # the lobby's button
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
