"""``python -m tgbot`` / ``cheat-bot``: check every setting, then run the bot (docs/DESIGN.md, tgbot/)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import socket
import sys
import textwrap
from collections.abc import Coroutine, Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticUndefined
from telegram import Bot
from telegram.error import BadRequest, InvalidToken, NetworkError

from tgbot import __version__
from tgbot.i18n import LOCALES_DIR, CatalogError, check_catalogs
from tgbot.logs import mask, mask_url, setup, url_passwords
from tgbot.settings import Settings
from tgbot.storage.migrate import SchemaError, check_schema

log = logging.getLogger("tgbot")


class StartError(Exception):
    """The bot cannot start; the message says why in one line."""


def _run(work: Coroutine[Any, Any, None], settings: Settings, what: str) -> None:
    """``asyncio.run(work)``; raises :class:`StartError` for what Telegram or a listener refuses."""
    base = mask_url(settings.telegram_base_url)
    try:
        asyncio.run(work)
    except InvalidToken as error:
        raise StartError("Telegram rejected BOT_TOKEN (check the token @BotFather gave you)") from error
    except BadRequest as error:  # (a NetworkError too: first)
        raise StartError(f"the Bot API at {base} refused {what}: {error.message}") from error
    except NetworkError as error:
        raise StartError(
            f"cannot reach the Bot API at {base}: {error.message} "
            "(check the network, or TELEGRAM_BASE_URL for a local Bot API server)"
        ) from error
    except OSError as error:
        raise StartError(f"cannot listen: {error}") from error
    except SchemaError as error:  # met at a take-over: the runner stepped down and said so
        raise StartError(str(error)) from error


async def _check_redis(url: str, bot_id: str) -> None:
    """Get a working client for ``url`` (:func:`tgbot.storage.redis.connect`) within 10 seconds,
    and check that the stored schema is not newer than this version's (raises ``SchemaError``)."""
    from tgbot.storage.redis import connect

    client = await asyncio.wait_for(connect(url), 10)
    try:
        await check_schema(client, bot_id)
    finally:
        await client.aclose()


def _redis_error(url: str, error: BaseException) -> StartError:
    """The one line for a Redis at ``url`` that cannot be used."""
    from redis.exceptions import AuthenticationError, AuthenticationWrongNumberOfArgsError

    where = mask_url(url)
    said = str(error)
    if isinstance(error, AuthenticationError | AuthenticationWrongNumberOfArgsError) or "NOAUTH" in said:
        if url_passwords(url):
            return StartError(f"Redis at {where} refused the user or password in REDIS_URL ({said})")
        return StartError(
            f"Redis at {where} wants a password: put it in REDIS_URL (redis://:<password>@host:port/db, "
            "or redis://<user>:<password>@… for an ACL user)"
        )
    return StartError(f"cannot use Redis at {where} (REDIS_URL): {said or type(error).__name__}")


async def _check_bot(settings: Settings) -> None:
    """Ask the Bot API's ``getMe`` (https://core.telegram.org/bots/api#getme), first raw: an answer
    that is no Bot API reply (``{"ok": …}``) means TELEGRAM_BASE_URL is wrong, not the token."""
    bot = Bot(settings.bot_token, base_url=settings.telegram_base_url)
    try:
        await bot.request.initialize()
        code, payload = await bot.request.do_request(f"{bot.base_url}/getMe", "POST")
        try:
            answer = json.loads(payload)
        except ValueError:
            answer = None
        if not (isinstance(answer, dict) and isinstance(answer.get("ok"), bool)):
            raise StartError(
                f"TELEGRAM_BASE_URL ({mask_url(settings.telegram_base_url)}) is not a Bot API: getMe got HTTP "
                f"{code} and no Bot API answer (a local Bot API server's URL ends in /bot)"
            )
        await bot.initialize()  # (getMe again, the answer read by PTB)
    finally:
        await bot.shutdown()
        await bot.request.shutdown()


def _check_listen(settings: Settings) -> None:
    """Each listen address can be bound now (it is bound for good once the process is active)."""
    listen = {"HTTP_LISTEN": settings.http_listen}
    if settings.webhook_url:
        listen["WEBHOOK_LISTEN"] = settings.webhook_listen
    for name, address in listen.items():
        host, _, port = address.rpartition(":")
        try:
            socket.create_server(
                (host.strip("[]"), int(port)), family=socket.AF_INET6 if ":" in host else socket.AF_INET
            ).close()
        except OSError as error:
            raise StartError(f"cannot listen on {name}={address}: {error.strerror or error}") from error


async def _serve(settings: Settings) -> None:
    """Run the process until SIGTERM or SIGINT (then give the lease up and stop cleanly)."""
    from tgbot.process.runner import Runner

    runner = Runner(settings)
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, runner.stop)
    await runner.run()


def _start(settings: Settings) -> None:
    """Check what can be checked (docs/DESIGN.md, tgbot/), then serve; raises :class:`StartError`."""
    if not settings.bot_token:
        raise StartError("BOT_TOKEN is not set (get a token from @BotFather and export BOT_TOKEN=...)")
    try:
        check_catalogs()
    except CatalogError as error:
        raise StartError(f"{error} (the package is incomplete: reinstall it)") from error
    _check_listen(settings)
    if settings.in_memory:
        log.warning(
            "REDIS_URL is not set (or memory://): running on the embedded in-process store. Games will NOT survive a "
            "restart; set REDIS_URL=redis://host:6379/0 (docker compose does) to keep them."
        )
    else:
        try:
            asyncio.run(_check_redis(settings.redis_url, settings.bot_token.partition(":")[0]))
        except SchemaError as error:
            raise StartError(str(error)) from error
        except Exception as error:  # any failure to use it is reported the same way
            raise _redis_error(settings.redis_url, error) from error
    _run(_check_bot(settings), settings, "getMe")
    _run(_serve(settings), settings, "a start-up call (check WEBHOOK_URL and the settings)")


def _settings_help() -> str:
    """Each setting: its variable, default and meaning (from :class:`Settings`)."""
    lines = ["settings (environment variables):"]
    for field in Settings.model_fields.values():
        default = field.default if field.default is not PydanticUndefined else ""
        shown = f"(default {default})" if default != "" else "(default: unset)"
        lines.append(f"  {field.validation_alias}  {shown}")
        lines += textwrap.wrap(field.description or "", 96, initial_indent=" " * 6, subsequent_indent=" " * 6)
    lines.append(f"\ncatalogs: {LOCALES_DIR}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cheat-bot",
        description="The Telegram bot of the bluffing card game Cheat (I Doubt It). It is configured by the "
        "environment variables below; it runs until SIGTERM or SIGINT.",
        epilog=_settings_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bot until interrupted; returns the process exit code."""
    _parser().parse_args(argv)
    try:
        settings = Settings()
    except ValidationError as error:  # one line per wrong setting, named as in the environment
        wrong = "; ".join(
            f"{'.'.join(map(str, item['loc'])).upper() or 'settings'}: {item['msg'].removeprefix('Value error, ')}"
            for item in error.errors()
        )
        secrets = [os.environ.get(name, "") for name in ("BOT_TOKEN", "WEBHOOK_SECRET")]
        for name in ("REDIS_URL", "TELEGRAM_BASE_URL", "WEBHOOK_URL"):
            secrets += url_passwords(os.environ.get(name, ""))
        print(f"cheat-bot: a setting is wrong: {mask(wrong, secrets)}", file=sys.stderr)
        return 2
    setup(settings.log_level, settings.secrets, settings.log_format)
    try:
        _start(settings)
    except StartError as error:
        print(f"cheat-bot: {mask(str(error), settings.secrets)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
