"""The HTTP listeners (aiohttp): the internal one (``GET /healthz`` with the role, epoch and whether
Redis answers; ``/readyz``, 503 while it does not; ``/metrics``) and, in webhook mode, ``POST`` of the
webhook's path, the update stored before the answer. Each listener holds a bounded number of
connections, none idle for long; refusals are logged once a minute per kind (docs/DESIGN.md)."""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler
from redis.exceptions import RedisError

from tgbot import metrics
from tgbot.logs import Throttled
from tgbot.metrics import Refusal

__all__ = [
    "BODY_SECONDS",
    "IDLE_SECONDS",
    "INTERNAL_CONNECTIONS",
    "SECRET_HEADER",
    "WEBHOOK_CONNECTIONS",
    "start_internal",
    "start_webhook",
    "webhook_secret",
]

log = logging.getLogger(__name__)

#: The header Telegram sends the webhook's secret in (https://core.telegram.org/bots/api#setwebhook).
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"

#: Connections the webhook's listener holds at once: Telegram opens at most setWebhook's
#: ``max_connections`` (40, its default, which the bot keeps; 100 at most), so this leaves room for
#: all of them and is far below the 1,024 files a process is commonly allowed.
WEBHOOK_CONNECTIONS = 100
#: Connections the internal listener (health checks, Prometheus) holds at once.
INTERNAL_CONNECTIONS = 32
#: Seconds a connection may go without a whole request, from its opening or its last answer:
#: an idle connection, or one whose headers come too slowly, is closed (aiohttp's keep-alive
#: timeout, which runs from the connection's opening).
IDLE_SECONDS = 30.0
#: Seconds an update's body may take once its headers are in (Telegram sends it at once).
BODY_SECONDS = 10.0


class _Refused(asyncio.Protocol):
    """A connection refused: closed at once, nothing read."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


class _CappedSite(web.BaseSite):
    """A TCP listener, as aiohttp's ``TCPSite``, that holds at most ``cap`` connections. A new
    connection beyond it closes the longest-held idle one (no request being handled: between
    requests, or its headers not all in), as Apache's event MPM does; with none idle, the new one
    is refused. ``busy``: the connections whose request is being handled."""

    __slots__ = ("_busy", "_cap", "_host", "_port", "_refusals")

    def __init__(
        self, runner: web.BaseRunner, host: str, port: int, cap: int, busy: set[Any], refusals: _Refusals
    ) -> None:
        super().__init__(runner)
        self._host, self._port, self._cap, self._busy, self._refusals = host, port, cap, busy, refusals

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        self._server = await asyncio.get_running_loop().create_server(
            self._connection, self._host, self._port, backlog=self._backlog
        )

    def _connection(self) -> asyncio.BaseProtocol:
        """The protocol of a new connection: aiohttp's, or :class:`_Refused`."""
        server = self._runner.server
        assert server is not None
        held = [handler for handler in server.connections if handler.transport is not None]
        if len(held) >= self._cap:
            idle = next((handler for handler in held if handler not in self._busy), None)
            if idle is None:
                self._refusals(Refusal.FULL, "connection refused: %d held, none idle", self._cap)
                return _Refused()
            idle.force_close()
            self._refusals(Refusal.IDLE_CLOSED, "%d connections held: the longest idle closed", self._cap)
        return server()


class _Refusals:
    """What a listener refuses or cuts short: logged once a minute per reason, each line naming
    the listener (``listener``); the webhook's also counted (``cheat_webhook_refusals_total``)."""

    def __init__(self, listener: str, counted: bool) -> None:
        self.listener = listener
        self.counted = counted
        self._lines = Throttled(log)

    def __call__(self, reason: Refusal, message: str, *args: object) -> None:
        if self.counted:
            metrics.WEBHOOK_REFUSALS.labels(reason=reason.value).inc()
        self._lines.warning(reason.value, "%s: " + message, self.listener, *args)


def _host_port(listen: str, default_port: int) -> tuple[str, int]:
    """``host:port`` (either may be left out). Raises ``OSError`` for a port that is no number
    (the start-up reports it in one line)."""
    host, _, port = listen.rpartition(":")
    if port and not port.isdigit():
        raise OSError(f"{listen!r} is no host:port")
    return host or "0.0.0.0", int(port or default_port)


async def _start(
    app: web.Application, listen: str, default_port: int, cap: int, refusals: _Refusals, idle: float = IDLE_SECONDS
) -> web.AppRunner:
    busy: set[Any] = set()

    @web.middleware
    async def handling(request: web.Request, handler: Handler) -> web.StreamResponse:
        busy.add(request.protocol)  # (not closed to make room while its request is handled)
        try:
            return await handler(request)
        finally:
            busy.discard(request.protocol)

    app.middlewares.append(handling)
    runner = web.AppRunner(app, access_log=None, keepalive_timeout=idle)
    await runner.setup()
    host, port = _host_port(listen, default_port)
    await _CappedSite(runner, host, port, cap, busy, refusals).start()
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
    return await _start(app, listen, 8080, INTERNAL_CONNECTIONS, _Refusals("internal listener", counted=False))


class _Webhook:
    """The webhook's ``POST``: the secret checked, the body read in time, the update stored."""

    def __init__(
        self, secret: str, ingest: Callable[[dict[str, Any]], Awaitable[None]], body: float, refusals: _Refusals
    ) -> None:
        self.expected = secret.encode()
        self.ingest = ingest
        self.body = body
        self.refusals = refusals

    async def receive(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "")
        # (a header of other bytes than ASCII is no secret Telegram sends: refused as wrong)
        if not given.isascii() or not hmac.compare_digest(given.encode(), self.expected):
            self.refusals(Refusal.SECRET, "POST refused (403): no or a wrong %s", SECRET_HEADER)
            return web.Response(status=403)
        update = await self._update(request)
        if isinstance(update, web.Response):
            return update
        try:
            await self.ingest(update)
        except (RedisError, OSError, TimeoutError) as error:  # (Redis trouble: its own lines tell it)
            self.refusals(Refusal.NOT_STORED, "update not stored (500; Telegram delivers it again): %r", error)
            return web.Response(status=500)
        except Exception:
            metrics.WEBHOOK_REFUSALS.labels(reason=Refusal.NOT_STORED.value).inc()
            log.exception("update %s not stored; Telegram will deliver it again", update.get("update_id"))
            return web.Response(status=500)
        return web.Response(status=200)

    async def _update(self, request: web.Request) -> dict[str, Any] | web.Response:
        """The update in the request's body, or the refusal: 408 (the body did not come in
        time, the connection closed), 400 (no update)."""
        try:
            async with asyncio.timeout(self.body):
                data = await request.read()
        except TimeoutError:
            self.refusals(Refusal.SLOW, "POST refused (408): its body took over %g s", self.body)
            response = web.Response(status=408)
            response.force_close()
            return response
        try:
            update = json.loads(data)
            if not isinstance(update, dict) or not isinstance(update.get("update_id"), int):
                raise ValueError("not an update")
        except ValueError:
            self.refusals(Refusal.MALFORMED, "POST refused (400): no update in its body")
            return web.Response(status=400)
        return update


async def start_webhook(
    listen: str,
    path: str,
    secret: str,
    ingest: Callable[[dict[str, Any]], Awaitable[None]],
    *,
    connections: int = WEBHOOK_CONNECTIONS,
    idle: float = IDLE_SECONDS,
    body: float = BODY_SECONDS,
) -> web.AppRunner:
    """Serve the webhook on ``listen`` at ``path``: each update is checked against ``secret``,
    passed to ``await ingest(update)``, and only then answered 200. At most ``connections`` held,
    each closed after ``idle`` seconds without a request, a body given ``body`` seconds;
    refusals logged once a minute per kind."""
    app = web.Application(client_max_size=1 << 20)
    refusals = _Refusals("webhook", counted=True)
    app.router.add_post("/" + path.lstrip("/"), _Webhook(secret, ingest, body, refusals).receive)
    return await _start(app, listen, 8443, connections, refusals, idle)


async def webhook_secret(redis: Any, key: str, configured: str = "") -> str:
    """The webhook's secret: ``configured`` (``WEBHOOK_SECRET``), else one made once per bot and
    kept in Redis under ``key``, the same for every process."""
    if configured:
        return configured
    await redis.set(key, secrets.token_urlsafe(32), nx=True)
    return str(await redis.get(key))
