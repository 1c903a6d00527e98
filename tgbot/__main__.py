"""``python -m tgbot`` / ``cheat-bot``: run the bot (long polling, or webhook with WEBHOOK_URL).

Exits with code 2 and one ``cheat-bot:`` line when ``BOT_TOKEN`` is missing, Redis is unreachable
or unusable (a cluster with unserved slots, a bad ``redis+sentinel://`` URL, no primary up...),
Telegram rejects the token or refuses a start-up call, or a listener's address is taken.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Coroutine
from typing import Any

from pydantic import ValidationError
from telegram import Bot
from telegram.error import BadRequest, InvalidToken, NetworkError

from tgbot.settings import Settings

log = logging.getLogger("tgbot")


class StartError(Exception):
    """The bot cannot start; the message says why in one line."""


def _run(work: Coroutine[Any, Any, None], settings: Settings, what: str) -> None:
    """``asyncio.run(work)``; raises :class:`StartError` for what Telegram or a listener refuses."""
    try:
        asyncio.run(work)
    except InvalidToken as error:
        raise StartError("Telegram rejected BOT_TOKEN (check the token @BotFather gave you)") from error
    except BadRequest as error:  # (a NetworkError too: first)
        raise StartError(f"the Bot API at {settings.telegram_base_url} refused {what}: {error.message}") from error
    except NetworkError as error:
        raise StartError(
            f"cannot reach the Bot API at {settings.telegram_base_url}: {error.message} "
            "(check the network, or TELEGRAM_BASE_URL for a local Bot API server)"
        ) from error
    except OSError as error:
        raise StartError(f"cannot listen: {error}") from error


async def _check_redis(url: str) -> None:
    """Get a working client for ``url`` (:func:`tgbot.storage.redis.connect`) within 10 seconds."""
    from tgbot.storage.redis import connect

    client = await asyncio.wait_for(connect(url), 10)
    await client.aclose()


async def _check_bot(settings: Settings) -> None:
    """Ask the Bot API's ``getMe`` (https://core.telegram.org/bots/api#getme)."""
    async with Bot(settings.bot_token, base_url=settings.telegram_base_url) as bot:
        await bot.get_me()


async def _serve(settings: Settings) -> None:
    """Run the process until SIGTERM or SIGINT (then give the lease up and stop cleanly)."""
    from tgbot.process.runner import Runner

    runner = Runner(settings)
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, runner.stop)
    await runner.run()


def _start(settings: Settings) -> None:
    """Check the settings, Redis and the token, then serve. Raises :class:`StartError`."""
    if not settings.bot_token:
        raise StartError("BOT_TOKEN is not set (get a token from @BotFather and export BOT_TOKEN=...)")
    if settings.webhook_url and not settings.webhook_url.lower().startswith("https://"):
        # https://core.telegram.org/bots/api#setwebhook: an HTTPS URL (Telegram refuses others)
        raise StartError(
            f"WEBHOOK_URL must be an https:// URL (Telegram delivers webhooks over HTTPS only), not {settings.webhook_url}"
        )
    if settings.in_memory:
        log.warning(
            "REDIS_URL is not set (or memory://): running on the embedded in-process store. Games will NOT survive a "
            "restart; set REDIS_URL=redis://host:6379/0 (docker compose does) to keep them."
        )
    else:
        try:
            asyncio.run(_check_redis(settings.redis_url))
        except Exception as error:  # any failure to use it is reported the same way
            raise StartError(f"cannot use Redis at {settings.redis_url}: {error or type(error).__name__}") from error
    _run(_check_bot(settings), settings, "getMe")
    _run(_serve(settings), settings, "a start-up call (check WEBHOOK_URL and the settings)")


def main() -> int:
    """Run the bot until interrupted; returns the process exit code."""
    try:
        settings = Settings()
    except ValidationError as error:  # one line per wrong setting, named as in the environment
        wrong = "; ".join(
            f"{'.'.join(map(str, item['loc'])).upper() or 'settings'}: {item['msg'].removeprefix('Value error, ')}"
            for item in error.errors()
        )
        print(f"cheat-bot: a setting is wrong: {wrong}", file=sys.stderr)
        return 2
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        _start(settings)
    except StartError as error:
        print(f"cheat-bot: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
