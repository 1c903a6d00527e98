"""No secret is ever printed: the bot runs at DEBUG against the emulator in webhook mode, with a
password in every URL, and then with each setting broken in turn; all its output is searched for
the token, the webhook secret and each password. ``CHEAT_BOT`` (an installed console script) is
run instead of ``python -m tgbot`` when set."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.fakes.botapi import BotAPIEmulator
from tests.redis_server import RedisServer, free_port
from tgbot.settings import Settings

pytestmark = pytest.mark.e2e

BOT = [os.environ["CHEAT_BOT"]] if os.environ.get("CHEAT_BOT") else [sys.executable, "-m", "tgbot"]
TOKEN = "7012345678:AAHk3xQ9_vLw2mZp8RtY6uNc4bDf1gJsE0o"
WRONG_TOKEN = "7012345678:AAwrongWRONGwrongWRONGwrongWRONGwro"
REDIS_PASSWORD = "r3dis-Pa55word"
WRONG_PASSWORD = "wr0ng-Pa55word"
SENTINEL_PASSWORD = "s3ntinel-Pa55"
BASE_PASSWORD = "b4se-Pa55word"
HOOK_PASSWORD = "h00k-Pa55word"
WEBHOOK_SECRET = "whsec_Q2w3e4r5t6y7u8i9o0"
SECRETS = (
    TOKEN,
    TOKEN.partition(":")[2],
    WRONG_TOKEN.partition(":")[2],
    REDIS_PASSWORD,
    WRONG_PASSWORD,
    SENTINEL_PASSWORD,
    BASE_PASSWORD,
    HOOK_PASSWORD,
    WEBHOOK_SECRET,
)


def _leaks(output: str, secrets: tuple[str, ...] = SECRETS) -> list[str]:
    return [secret for secret in secrets if secret in output]


async def _run(env: dict[str, str], cwd: Path, timeout: float = 40) -> tuple[int, str]:
    """Run the bot to its end; its exit code and all it printed."""
    proc = await asyncio.create_subprocess_exec(
        *BOT, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode or 0, out.decode(errors="replace")


@pytest.fixture(scope="module")
def locked_redis():
    """A private redis-server that wants a password."""
    server = RedisServer(extra=["--requirepass", REDIS_PASSWORD])
    yield server
    server.stop()


def _good_env(emu: BotAPIEmulator, redis: RedisServer, hook_port: int, db: int = 0) -> dict[str, str]:
    """Every setting right, a secret or password in each that can hold one, logging at DEBUG;
    database ``db`` (one per emulator: its update ids start at 1 again)."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR", "PYTHONPATH")}
    return env | {
        "BOT_TOKEN": TOKEN,
        "REDIS_URL": f"redis://:{REDIS_PASSWORD}@127.0.0.1:{redis.port}/{db}",
        "TELEGRAM_BASE_URL": emu.base_url.replace("http://", f"http://bot:{BASE_PASSWORD}@"),
        "WEBHOOK_URL": f"https://hook:{HOOK_PASSWORD}@bot.example/hook",
        "WEBHOOK_LISTEN": f"127.0.0.1:{hook_port}",
        "WEBHOOK_SECRET": WEBHOOK_SECRET,
        "LOG_LEVEL": "DEBUG",
        "HTTP_LISTEN": f"127.0.0.1:{free_port()}",
        "PYTHONUNBUFFERED": "1",
    }


async def _serve_a_little(emu: BotAPIEmulator, env: dict[str, str], cwd: Path) -> str:
    """Start the bot, have a player /start it and open a lobby through the webhook, stop it."""
    out = cwd / "bot.log"
    with open(out, "wb") as log:
        proc = await asyncio.create_subprocess_exec(
            *BOT, cwd=cwd, env=env, stdout=log, stderr=asyncio.subprocess.STDOUT
        )
    try:
        await emu.wait_call("setWebhook", timeout=30)
        user = emu.add_user(901, "Аня")
        group = emu.add_group(-4001, "Клуб", members=[user], admins=[user])
        await user.start_bot(answered=True)
        await user.send(group, "/start_game")
        await emu.wait_message(group.id, lambda m: m.from_bot and bool(m.buttons), timeout=30)
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 20)
    return out.read_text(errors="replace")


@pytest.mark.parametrize("made", [False, True], ids=["configured secret", "secret the bot makes"])
async def test_a_run_at_debug_prints_no_secret(locked_redis, tmp_path, made):
    emu = BotAPIEmulator(token=TOKEN, group_window=6.0)
    await emu.start()
    hook_port = free_port()
    emu.webhook_targets = [f"http://127.0.0.1:{hook_port}/hook"]
    try:
        env = _good_env(emu, locked_redis, hook_port, db=int(made))
        if made:
            del env["WEBHOOK_SECRET"]  # made once per bot and kept in Redis
            env["LOG_FORMAT"] = "json"  # (the masking holds in either format)
        output = await _serve_a_little(emu, env, tmp_path)
        if made:
            assert all(json.loads(line)["time"].endswith("Z") for line in output.splitlines()), output[-3000:]
        secret = emu.webhook.get("secret_token")
        assert "DEBUG" in output and "active (epoch" in output, output[-3000:]
        assert secret and (made or secret == WEBHOOK_SECRET)
        assert _leaks(output, (*SECRETS, secret)) == [], output
    finally:
        await emu.stop()


async def test_each_broken_setting_ends_in_one_line_without_a_secret(locked_redis, tmp_path):
    emu = BotAPIEmulator(token=TOKEN, group_window=6.0)
    await emu.start()
    here = f"127.0.0.1:{locked_redis.port}"
    base = emu.base_url.replace("http://", f"http://bot:{BASE_PASSWORD}@")
    broken: dict[str, list[str]] = {
        "BOT_TOKEN": [WRONG_TOKEN],
        "REDIS_URL": [
            f"redis://{here}/0",  # no password
            f"redis://:{WRONG_PASSWORD}@{here}/0",
            f"redis://user:{REDIS_PASSWORD}@{here}/0",  # no such user
            f"redis://:{REDIS_PASSWORD}@127.0.0.1:{free_port()}/0",  # nothing there
            f"redis://:{REDIS_PASSWORD}@127.0.0.1:99999/0",
            f"rediss+x://:{REDIS_PASSWORD}@{here}/0",
            f"redis+sentinel://:{REDIS_PASSWORD}@127.0.0.1:{free_port()}/cheat?sentinel_password={SENTINEL_PASSWORD}",
            f"redis+sentinel://:{REDIS_PASSWORD}@{here}/cheat?sentinel_password={SENTINEL_PASSWORD}",
            f"redis+sentinel://:{REDIS_PASSWORD}@{here}/?sentinel_password={SENTINEL_PASSWORD}",
        ],
        "TELEGRAM_BASE_URL": [
            base.removesuffix("/bot") + "/nothing/",  # answers 404: no Bot API
            f"http://bot:{BASE_PASSWORD}@127.0.0.1:{free_port()}/bot",  # nothing there
            f"http://bot:{BASE_PASSWORD}@127.0.0.1:99999/bot",
            f"bot:{BASE_PASSWORD}@127.0.0.1/bot",
        ],
        "WEBHOOK_URL": [f"http://hook:{HOOK_PASSWORD}@bot.example/hook"],
        "WEBHOOK_LISTEN": ["127.0.0.1:99999", "127.0.0.1:http"],
        "WEBHOOK_SECRET": [f"{WEBHOOK_SECRET}/no"],
        "LOG_LEVEL": ["chatty"],
        "LOG_FORMAT": ["yaml"],
        "LOBBY_TIMEOUT": ["0"],
        "TURN_TIMEOUT": ["soon"],
        "RATE_GROUP_MAX": ["-1"],
        "RATE_GROUP_PERIOD": ["0"],
        "RATE_GLOBAL_MAX": ["1.5"],
        "RATE_GLOBAL_PERIOD": ["-1"],
        "RATE_PRIVATE_MAX": ["0"],
        "RATE_PRIVATE_PERIOD": ["never"],
        "AI_PAUSE_MIN": ["-1"],
        "AI_PAUSE_MAX": ["x"],
        "HTTP_LISTEN": ["127.0.0.1:99999", "256.0.0.1:8080"],
    }
    assert set(broken) == {field.validation_alias for field in Settings.model_fields.values()}
    limit = asyncio.Semaphore(4)

    async def one(name: str, value: str) -> tuple[str, str, int, str]:
        env = _good_env(emu, locked_redis, free_port()) | {name: value}
        async with limit:
            code, output = await _run(env, tmp_path)
        return name, value, code, output

    try:
        runs = await asyncio.gather(*(one(name, value) for name, values in broken.items() for value in values))
    finally:
        await emu.stop()
    for name, value, code, output in runs:
        lines = output.strip().splitlines()
        assert code == 2 and lines and lines[-1].startswith("cheat-bot:"), (name, value, output[-2000:])
        assert name in lines[-1], (name, value, lines[-1])  # the line names what to fix
        assert "Traceback" not in output, (name, value, output[-2000:])
        assert _leaks(output) == [], (name, value, output)
