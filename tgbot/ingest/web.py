"""The HTTP listeners (aiohttp): the internal one (``GET /healthz`` with the role, epoch and whether
Redis answers; ``/readyz``, 503 while it does not; ``/metrics``) and, in webhook mode, ``POST`` of the
webhook's path: the update stored before the answer (403 for a wrong secret, 400 for no update, 500
when it cannot be stored: Telegram delivers it again)."""

from __future__ import annotations

import hmac
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from tgbot import metrics

__all__ = ["SECRET_HEADER", "start_internal", "start_webhook", "webhook_secret"]

log = logging.getLogger(__name__)

#: The header Telegram sends the webhook's secret in (https://core.telegram.org/bots/api#setwebhook).
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


def _host_port(listen: str, default_port: int) -> tuple[str, int]:
    """``host:port`` (either may be left out). Raises ``OSError`` for a port that is no number
    (the start-up reports it in one line)."""
    host, _, port = listen.rpartition(":")
    if port and not port.isdigit():
        raise OSError(f"{listen!r} is no host:port")
    return host or "0.0.0.0", int(port or default_port)


async def _start(app: web.Application, listen: str, default_port: int) -> web.AppRunner:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    host, port = _host_port(listen, default_port)
    await web.TCPSite(runner, host, port).start()
    bound = runner.addresses[0] if runner.addresses else (host, port)
    log.info(
        "listening on %s:%s (%s)",
        bound[0],
        bound[1],
        ", ".join(str(route.canonical) for route in app.router.resources()),
    )
    return runner


async def start_internal(listen: str, health: Callable[[], dict[str, Any]], ready: Callable[[], bool]) -> web.AppRunner:
    """Serve ``GET /healthz``, ``/readyz`` and ``/metrics`` on ``listen`` (``host:port``):
    ``health()`` gives /healthz's JSON body, ``ready()`` whether /readyz says 200 (else 503)."""
    app = web.Application()

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response(health())

    async def readyz(request: web.Request) -> web.Response:
        ok = ready()
        return web.json_response({"ready": ok}, status=200 if ok else 503)

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics.handler())
    return await _start(app, listen, 8080)


async def start_webhook(
    listen: str, path: str, secret: str, ingest: Callable[[dict[str, Any]], Awaitable[None]]
) -> web.AppRunner:
    """Serve the webhook on ``listen`` at ``path``: each update is checked against ``secret``,
    passed to ``await ingest(update)``, and only then answered 200."""
    app = web.Application(client_max_size=1 << 20)

    async def receive(request: web.Request) -> web.Response:
        if not hmac.compare_digest(request.headers.get(SECRET_HEADER, "").encode(), secret.encode()):
            return web.Response(status=403)
        try:
            update = json.loads(await request.read())
            if not isinstance(update, dict) or not isinstance(update.get("update_id"), int):
                raise ValueError("not an update")
        except ValueError:
            return web.Response(status=400)
        try:
            await ingest(update)
        except Exception:
            log.exception("update %s not stored; Telegram will deliver it again", update.get("update_id"))
            return web.Response(status=500)
        return web.Response(status=200)

    app.router.add_post("/" + path.lstrip("/"), receive)
    return await _start(app, listen, 8443)


async def webhook_secret(redis: Any, key: str, configured: str = "") -> str:
    """The webhook's secret: ``configured`` (``WEBHOOK_SECRET``), else one made once per bot and
    kept in Redis under ``key``, the same for every process."""
    if configured:
        return configured
    await redis.set(key, secrets.token_urlsafe(32), nx=True)
    return str(await redis.get(key))
