"""The bot's Prometheus metrics, served by :func:`handler` as ``GET /metrics`` on the internal
listener only (docs/OPERATING.md lists them). No label carries a chat, user or game id: each takes
its values from a small closed set; a standby exports them too (its role gauge says 0)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from enum import StrEnum
from importlib import metadata
from typing import Any, Protocol

from aiohttp.typedefs import Handler
from prometheus_client import Counter, Gauge, Histogram, Info
from prometheus_client.aiohttp import make_aiohttp_handler

#: Every metric's name starts with this.
PREFIX = "cheat"

#: The game variants (``core.rules.VARIANTS``' names) and how a game can end (the table's
#: ``Ending``); a value outside these sets is counted as ``other``.
VARIANTS = ("russian", "classic")
ENDINGS = ("finished", "stopped", "expired", "abandoned", "bot_removed", "chat_gone", "unwritable")
#: The update kinds the Bot API sends (an ``Update``'s optional fields); others count as ``other``.
UPDATE_KINDS = (
    "message",
    "edited_message",
    "callback_query",
    "my_chat_member",
    "chat_member",
    "chat_join_request",
    "inline_query",
    "chosen_inline_result",
    "channel_post",
    "edited_channel_post",
    "message_reaction",
    "message_reaction_count",
    "poll",
    "poll_answer",
    "other",
)

# -- games ------------------------------------------------------------------------------------

GAMES_LIVE = Gauge(
    f"{PREFIX}_games_live",
    "Live games this process owns (0 on a standby): lobbies open and games being played.",
    ["status"],
)
GAMES_STARTED = Counter(f"{PREFIX}_games_started_total", "Games started (a lobby became a game).", ["variant"])
GAMES_ENDED = Counter(
    f"{PREFIX}_games_ended_total",
    "Live tables that ended (lobbies too), by variant and how they ended "
    "(finished, stopped, expired, abandoned; bot_removed, chat_gone, unwritable: their group was lost).",
    ["variant", "ending"],
)

# -- updates and the ingest ---------------------------------------------------------------------

UPDATE_SECONDS = Histogram(
    f"{PREFIX}_update_duration_seconds",
    "Time to process one update, its tries after a Redis failure included (its count: updates processed).",
    ["kind"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
)
UPDATE_RETRIES = Counter(
    f"{PREFIX}_update_retries_total", "Tries of an update again after it met a Redis failure.", ["kind"]
)
UPDATES_SET_ASIDE = Counter(
    f"{PREFIX}_updates_set_aside_total",
    "Updates set aside (dead letters: acknowledged, not applied): PTB could not parse them, a handler "
    "failed, they were no valid Unicode, or Redis failed for the whole retry time.",
    ["kind"],
)
INGEST_BACKLOG = Gauge(
    f"{PREFIX}_ingest_backlog",
    "Updates stored in the ingest stream and not yet processed (read by the active process).",
)

# -- the Bot API --------------------------------------------------------------------------------

BOT_API_SECONDS = Histogram(
    f"{PREFIX}_bot_api_request_duration_seconds",
    "Bot API calls by method, failed ones included (its count: calls made).",
    ["method"],
    buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
BOT_API_ERRORS = Counter(
    f"{PREFIX}_bot_api_errors_total",
    "Bot API calls that failed, by method and code (400, 401, 403, 409; timeout; network: no answer "
    "or a 5xx; other); a 429 is counted apart.",
    ["method", "code"],
)
BOT_API_RATE_LIMITED = Counter(
    f"{PREFIX}_bot_api_rate_limited_total", "Bot API calls Telegram answered with 429 (Too Many Requests).", ["method"]
)

# -- Redis --------------------------------------------------------------------------------------

REDIS_SECONDS = Histogram(
    f"{PREFIX}_redis_command_duration_seconds",
    "Redis commands and pipelines (command PIPELINE) by command, blocking reads left out.",
    ["command"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
REDIS_ERRORS = Counter(
    f"{PREFIX}_redis_errors_total", "Redis commands that failed, by error (connection, timeout, other).", ["error"]
)
REDIS_UP = Gauge(
    f"{PREFIX}_redis_up",
    "1 while Redis answers, 0 once it has not answered for longer than the lease (what /readyz says).",
)

# -- webhook ----------------------------------------------------------------------------------


class Refusal(StrEnum):
    """What the webhook's listener refused or cut short (``tgbot.ingest.web``)."""

    FULL = "full"  # a connection refused: as many held as allowed, none of them idle
    IDLE_CLOSED = "idle_closed"  # an idle connection closed to make room for a new one
    SECRET = "secret"  # 403: the secret header missing or wrong
    MALFORMED = "malformed"  # 400: the body is no update
    SLOW = "slow"  # 408: the body did not arrive in time
    NOT_STORED = "not_stored"  # 500: the update could not be stored (Telegram delivers it again)


WEBHOOK_REFUSALS = Counter(
    f"{PREFIX}_webhook_refusals_total",
    "Connections and requests the webhook's listener refused or cut short, by reason.",
    ["reason"],
)

# -- role -------------------------------------------------------------------------------------


class StepDown(StrEnum):
    """Why an active process stopped being active."""

    LEASE_LOST = "lease_lost"  # another process holds the lease
    RENEWAL_LATE = "renewal_late"  # not renewed in time (Redis slow or down)
    FENCED = "fenced"  # a commit met a newer epoch
    REDIS = "redis"  # Redis failed under the work (refused, reset or timed out)
    SCHEMA = "schema"  # the stored data is of a newer schema than this build knows
    STOP = "stop"  # SIGTERM or SIGINT
    ERROR = "error"  # the work failed otherwise


PROCESS_ACTIVE = Gauge(f"{PREFIX}_process_active", "1 while this process holds the lease (the active one), else 0.")
LEASE_EPOCH = Gauge(f"{PREFIX}_lease_epoch", "The fencing epoch of the lease this process holds (0 on a standby).")
TAKE_OVERS = Counter(f"{PREFIX}_take_overs_total", "Times this process became the active one.")
STEP_DOWNS = Counter(
    f"{PREFIX}_step_downs_total", "Times this process stopped being the active one, by why.", ["reason"]
)

INFO = Info(f"{PREFIX}_bot", "The bot build and how it runs: version, mode (polling or webhook), store.")


def _version() -> str:
    try:
        return metadata.version("cheat-bot")
    except metadata.PackageNotFoundError:  # run from a tree that is not installed
        return "unknown"


# Every series of a closed label set exists from the start at 0, so rate() and increase() see
# the first event (Prometheus cannot tell a new series' first sample from its start).
for _variant in VARIANTS:
    GAMES_STARTED.labels(variant=_variant)
    for _ending in ENDINGS:
        GAMES_ENDED.labels(variant=_variant, ending=_ending)
for _status in ("lobby", "playing"):
    GAMES_LIVE.labels(status=_status)
for _reason in StepDown:
    STEP_DOWNS.labels(reason=_reason.value)
for _kind in UPDATE_KINDS:
    UPDATES_SET_ASIDE.labels(kind=_kind)
for _refusal in Refusal:
    WEBHOOK_REFUSALS.labels(reason=_refusal.value)
REDIS_UP.set(1)
INFO.info({"version": _version(), "mode": "", "store": ""})


def set_info(mode: str, store: str) -> None:
    """Say how this process runs: ``mode`` polling or webhook, ``store`` redis, cluster, sentinel or memory."""
    INFO.info({"version": _version(), "mode": mode, "store": store})


# -- games ------------------------------------------------------------------------------------


class GameLike(Protocol):
    """What :func:`game_committed` reads of a table (``tgbot.game.table.Table``)."""

    @property
    def status(self) -> str: ...

    @property
    def variant(self) -> str: ...

    @property
    def ended(self) -> str | None: ...


_LIVE = ("lobby", "playing")


def _one_of(value: str | None, known: tuple[str, ...]) -> str:
    return value if value is not None and value in known else "other"


def game_committed(before: GameLike | None, after: GameLike) -> None:
    """Count a committed change to a game: a lobby opened or closed, a game started or ended."""
    was = str(before.status) if before is not None else None
    now = str(after.status)
    if was == now:
        return
    if was in _LIVE:
        GAMES_LIVE.labels(status=was).dec()
    if now in _LIVE:
        GAMES_LIVE.labels(status=now).inc()
    variant = _one_of(str(after.variant), VARIANTS)
    if now == "playing":
        GAMES_STARTED.labels(variant=variant).inc()
    elif now not in _LIVE and was in _LIVE:
        GAMES_ENDED.labels(variant=variant, ending=_one_of(after.ended, ENDINGS)).inc()


def games_resumed(tables: Iterable[GameLike]) -> None:
    """Set the live games to those a take-over resumed."""
    counts = dict.fromkeys(_LIVE, 0)
    for table in tables:
        if str(table.status) in counts:
            counts[str(table.status)] += 1
    for status, count in counts.items():
        GAMES_LIVE.labels(status=status).set(count)


def games_dropped() -> None:
    """A step-down: this process owns no game any more."""
    for status in _LIVE:
        GAMES_LIVE.labels(status=status).set(0)


# -- updates ----------------------------------------------------------------------------------


def update_kind(update: dict[str, object]) -> str:
    """The kind of a Bot API update (``message``, ``callback_query``…; ``other`` for the rest)."""
    for key in update:
        if key != "update_id":
            return _one_of(key, UPDATE_KINDS)
    return "other"


class _Timed:
    """Observes the time its block takes in ``histogram`` and tells ``failed`` what it raised (a
    class and cached label children: a few µs per call, paid on every Redis command)."""

    __slots__ = ("failed", "histogram", "start")

    def __init__(self, histogram: Any, failed: Callable[[Exception], None]) -> None:
        self.histogram, self.failed, self.start = histogram, failed, 0.0

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: Any) -> None:
        self.histogram.observe(time.perf_counter() - self.start)
        if isinstance(error, Exception):
            self.failed(error)


def _no_failure(error: Exception) -> None:
    """A failed update is tried again by the consumer: counted by :data:`UPDATE_RETRIES`."""


@functools.cache
def _update_seconds(kind: str) -> Any:
    return UPDATE_SECONDS.labels(kind=kind)


def update_processing(update: dict[str, object]) -> AbstractContextManager[None]:
    """Time the processing of one update, all its tries (its kind from :func:`update_kind`)."""
    return _Timed(_update_seconds(update_kind(update)), _no_failure)


def dead_letters() -> int:
    """The updates this process set aside since it started (``/healthz``'s ``dead_letters``)."""
    return int(
        sum(
            sample.value
            for family in UPDATES_SET_ASIDE.collect()
            for sample in family.samples
            if sample.name.endswith("_total")
        )
    )


# -- the Bot API ------------------------------------------------------------------------------


def error_code(error: BaseException) -> str:
    """The ``code`` label of a failed Bot API call, from PTB's error: ``429``, ``400`` (a migrated
    chat too), ``401`` (a rejected token: 401 or 404), ``403``, ``409``, ``timeout``, ``network``
    (no answer, or a 5xx) or ``other``."""
    from telegram import error as tg

    match error:
        case tg.RetryAfter():
            return "429"
        case tg.BadRequest() | tg.ChatMigrated():
            return "400"
        case tg.InvalidToken():
            return "401"
        case tg.Forbidden():
            return "403"
        case tg.Conflict():
            return "409"
        case tg.TimedOut():
            return "timeout"
        case tg.NetworkError():
            return "network"
    return "other"


@functools.cache
def _bot_api(method: str) -> tuple[Any, Callable[[Exception], None]]:
    """``method``'s histogram child and what counts its failures."""

    def failed(error: Exception) -> None:
        code = error_code(error)
        if code == "429":
            BOT_API_RATE_LIMITED.labels(method=method).inc()
        else:
            BOT_API_ERRORS.labels(method=method, code=code).inc()

    return BOT_API_SECONDS.labels(method=method), failed


def bot_api_call(method: str) -> AbstractContextManager[None]:
    """Time one Bot API call ``method`` (e.g. ``sendMessage``) and count it by how it failed."""
    return _Timed(*_bot_api(method))


# -- Redis ------------------------------------------------------------------------------------


def _redis_error(error: BaseException) -> str:
    from redis import exceptions

    if isinstance(error, exceptions.TimeoutError | TimeoutError):
        return "timeout"
    if isinstance(error, exceptions.ConnectionError | ConnectionError):
        return "connection"
    return "other"


def _redis_failed(error: Exception) -> None:
    REDIS_ERRORS.labels(error=_redis_error(error)).inc()


@functools.cache
def _redis_seconds(command: str) -> Any:
    return REDIS_SECONDS.labels(command=command.upper())


def redis_command(command: str) -> AbstractContextManager[None]:
    """Time one Redis command (``EVALSHA``, ``HGET``…; ``PIPELINE`` for a pipeline); count its failure."""
    return _Timed(_redis_seconds(command), _redis_failed)


# -- role -------------------------------------------------------------------------------------


def became_active(epoch: int) -> None:
    """This process took the lease with ``epoch``."""
    TAKE_OVERS.inc()
    PROCESS_ACTIVE.set(1)
    LEASE_EPOCH.set(epoch)


def stepped_down(reason: StepDown) -> None:
    """This process stopped being the active one; its games are dropped from memory."""
    STEP_DOWNS.labels(reason=reason.value).inc()
    PROCESS_ACTIVE.set(0)
    LEASE_EPOCH.set(0)
    INGEST_BACKLOG.set(0)
    games_dropped()


# -- GET /metrics -------------------------------------------------------------------------------


def handler() -> Handler:
    """The aiohttp handler of ``GET /metrics``: the default registry in Prometheus' text format
    (or OpenMetrics when the scraper asks for it), with the matching Content-Type."""
    return make_aiohttp_handler()
