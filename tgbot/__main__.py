"""``python -m tgbot`` / ``cheat-bot``: run the bot (long polling, or webhook with WEBHOOK_URL).

Exits with code 2 and one clear line when ``BOT_TOKEN`` is missing, Redis is unreachable or
unusable (a cluster with unserved slots, a database a cluster does not have, a malformed
``redis+sentinel://`` URL, sentinels that cannot be reached or name no primary that is up for
the service), Telegram rejects the token or refuses a start-up call (``WEBHOOK_URL`` not https).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys

from telegram.error import BadRequest, InvalidToken, NetworkError

from tgbot.settings import Settings

log = logging.getLogger("tgbot")


def _check_redis(url: str) -> str | None:
    """None when :func:`tgbot.storage.redis.connect` gets a working client for ``url`` (one Redis, a
    Redis Cluster whose slots are all served, or the primary that Redis Sentinel names), else
    the reason, within 10 seconds."""
    from tgbot.storage.redis import connect

    async def probe() -> None:
        client = await asyncio.wait_for(connect(url), 10)
        await client.aclose()

    try:
        asyncio.run(probe())
    except Exception as e:  # any failure to use it is reported the same way
        return str(e) or type(e).__name__
    return None


def _check_bot(settings: Settings) -> str | None:
    """None when the Bot API accepts the token (getMe), else one line saying why not."""
    import asyncio

    from telegram import Bot

    async def probe() -> None:
        async with Bot(settings.bot_token, base_url=settings.telegram_base_url) as bot:
            await bot.get_me()

    try:
        asyncio.run(probe())
    except InvalidToken:
        return "Telegram rejected BOT_TOKEN (check the token @BotFather gave you)"
    except BadRequest as e:  # (a NetworkError too: first)
        return f"the Bot API at {settings.telegram_base_url} refused getMe: {e.message}"
    except NetworkError as e:
        return f"cannot reach the Bot API at {settings.telegram_base_url}: {e.message}"
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the bot until interrupted; returns the process exit code."""
    settings = Settings()
    logging.basicConfig(
        level=getattr(logging, settings.log_level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    if not settings.bot_token:
        print("cheat-bot: BOT_TOKEN is not set (get a token from @BotFather and export BOT_TOKEN=...)", file=sys.stderr)
        return 2
    if settings.webhook_url and not settings.webhook_url.lower().startswith("https://"):
        # Bot API, setWebhook: "an HTTPS URL"; Telegram refuses any other (400 "Bad webhook")
        print(f"cheat-bot: WEBHOOK_URL must be an https:// URL (Telegram delivers webhooks over HTTPS only), not {settings.webhook_url}", file=sys.stderr)
        return 2
    if settings.in_memory:
        log.warning(
            "REDIS_URL is not set (or memory://): running on the embedded in-process store. Games will NOT survive a restart; "
            "set REDIS_URL=redis://host:6379/0 (docker compose does) to keep them."
        )
    else:
        reason = _check_redis(settings.redis_url)
        if reason is not None:
            print(f"cheat-bot: cannot use Redis at {settings.redis_url}: {reason}", file=sys.stderr)
            return 2

    problem = _check_bot(settings)
    if problem is not None:
        print(f"cheat-bot: {problem}", file=sys.stderr)
        return 2

    from tgbot.handlers.app import build_application
    from tgbot.process.runner import Runner

    runner = Runner(build_application(settings), settings)
    try:
        asyncio.run(_serve(runner))
    except InvalidToken:
        print("cheat-bot: Telegram rejected BOT_TOKEN (check the token @BotFather gave you)", file=sys.stderr)
        return 2
    except BadRequest as e:  # (a NetworkError too: first) e.g. setWebhook refusing WEBHOOK_URL
        print(f"cheat-bot: the Bot API refused a start-up call: {e.message} (check WEBHOOK_URL and the settings)", file=sys.stderr)
        return 2
    except NetworkError as e:
        print(f"cheat-bot: cannot reach the Bot API at {settings.telegram_base_url}: {e.message}", file=sys.stderr)
        return 2
    except OSError as e:  # a listener's address in use
        print(f"cheat-bot: cannot listen: {e}", file=sys.stderr)
        return 2
    return 0


async def _serve(runner: "Runner") -> None:  # noqa: F821
    """Run the process until SIGTERM or SIGINT (then give the lease up and stop cleanly)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, runner.stop)
    await runner.run()


if __name__ == "__main__":
    sys.exit(main())
