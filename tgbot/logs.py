"""The process's logging, secrets masked in every record (URL passwords, the bot token, the webhook
secret; httpx's request lines at WARNING only); UTC times, ``LOG_FORMAT=json`` one JSON object a line.
Every line about a game goes through :func:`about_game`; lines that come in floods are rate-limited
(:class:`Throttled`, :class:`FloodFilter`)."""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Callable, Iterable, MutableMapping
from enum import StrEnum
from types import TracebackType
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = [
    "ASYNCIO_FLOODS",
    "MASK",
    "FloodFilter",
    "GameLogger",
    "JSONFormatter",
    "LogFormat",
    "SecretFilter",
    "Throttled",
    "about_game",
    "mask",
    "mask_url",
    "setup",
    "url_passwords",
]

MASK = "***"

#: The password of a URL's userinfo (``scheme://user:password@``, up to the last ``@`` of the netloc;
#: also ``user:password@host`` without a scheme, as a mistyped setting may be).
_URL_PASSWORD = re.compile(r"""((?:\b[A-Za-z][A-Za-z0-9+.-]*://|(?<![^\s'"(=]))[^/\s:@'"]*:)[^/\s'"]*@""")
#: Secrets given as parameters: ``sentinel_password=…`` in a URL, setWebhook's ``secret_token`` in
#: PTB's DEBUG lines (a webhook secret made by the bot is known to no setting).
_PARAMETER = re.compile(r"""(password=|secret_token['"]?\s*[=:]\s*['"]?)(?!\*\*\*)[^'"&\s,}]+""", re.IGNORECASE)
#: A bot token anywhere (``<bot id>:<35 characters>``, https://core.telegram.org/bots/api#authorizing-your-bot).
_TOKEN = re.compile(r"\b(\d{5,}:)[A-Za-z0-9_-]{30,}")


def mask_url(text: str) -> str:
    """``text`` with the password of every URL in it, and every ``…password=`` parameter, masked."""
    return _PARAMETER.sub(rf"\g<1>{MASK}", _URL_PASSWORD.sub(rf"\g<1>{MASK}@", text))


def url_passwords(url: str) -> list[str]:
    """The passwords in ``url``: its userinfo's and a ``sentinel_password`` parameter's, as written
    and percent-decoded."""
    try:
        parts = urlsplit(url)
        netloc, query = parts.netloc, parts.query
    except ValueError:  # not splittable (an unclosed "[", "Invalid IPv6 URL"): by hand, as written
        netloc = re.split(r"[/?#]", url.partition("://")[2], maxsplit=1)[0]
        query = url.partition("?")[2].partition("#")[0]
    userinfo, at, _ = netloc.rpartition("@")
    found = [userinfo.partition(":")[2]] if at else []
    found += [value for key, _, value in (p.partition("=") for p in query.split("&")) if "password" in key]
    return [form for secret in found if secret for form in {secret, unquote(secret)}]


def mask(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with URL passwords, bot tokens and each of ``secrets`` masked."""
    text = _TOKEN.sub(rf"\g<1>{MASK}", mask_url(text))
    for secret in sorted(secrets, key=len, reverse=True):  # a longer one first: one may contain another
        if len(secret) >= 3:
            text = text.replace(secret, MASK)
    return text


class SecretFilter(logging.Filter):
    """Masks (:func:`mask`) a record's message, traceback and stack before a handler writes it."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = tuple(secrets)
        self._formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = mask(record.getMessage(), self.secrets), None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask(record.exc_text, self.secrets)
        if record.stack_info:
            record.stack_info = mask(record.stack_info, self.secrets)
        return True


class LogFormat(StrEnum):
    """``LOG_FORMAT``: plain text lines, or one JSON object a line."""

    TEXT = "text"
    JSON = "json"


#: The keys a line about a game carries (``extra=``), also in JSON.
CONTEXT_KEYS = ("game", "chat")


class GameLogger(logging.LoggerAdapter[logging.Logger]):
    """A logger for lines about one game: each starts ``game=<id> chat=<id>`` (the chat where it
    is known), for ``grep``, and carries both as ``extra``, JSON's ``game`` and ``chat`` keys."""

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        where = dict(self.extra or {})
        prefix = " ".join(f"{key}={value}" for key, value in where.items()).replace("%", "%%")
        kwargs["extra"] = {**where, **kwargs.get("extra", {})}
        return f"{prefix} {msg}", kwargs


def about_game(logger: logging.Logger, game: str, chat: int | None = None) -> GameLogger:
    """``logger`` for lines about game ``game`` in chat ``chat`` (:class:`GameLogger`): every
    line about a game goes through it."""
    return GameLogger(logger, {"game": game} if chat is None else {"game": game, "chat": chat})


def _utc_time(record: logging.LogRecord) -> str:
    """The record's time, UTC, ISO 8601 to the millisecond (``2026-12-02T10:24:50.123Z``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"


class TextFormatter(logging.Formatter):
    """``<UTC time> LEVEL logger: message`` (and the traceback)."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return _utc_time(record)


class JSONFormatter(logging.Formatter):
    """One JSON object a line (the message as :class:`SecretFilter` left it)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": _utc_time(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in CONTEXT_KEYS:
            if hasattr(record, key):
                line[key] = getattr(record, key)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["error"] = record.exc_text
        return json.dumps(line, ensure_ascii=False, default=str)


class Throttled:
    """Rate-limited WARNING lines for things that can come in floods (refused connections, bad
    requests): one line per kind a ``period``, the first at once; the others of that period are
    counted and their number told by the kind's next line."""

    def __init__(self, logger: logging.Logger, period: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.logger = logger
        self.period = period
        self._clock = clock
        self._next: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def due(self, kind: str) -> int | None:
        """Whether a line of ``kind`` is due now: None when one was logged within the period (this
        one is counted), else how many were held back since the last one."""
        now = self._clock()
        if now < self._next.get(kind, now):
            self._held[kind] = self._held.get(kind, 0) + 1
            return None
        self._next[kind] = now + self.period
        return self._held.pop(kind, 0)

    def warning(self, kind: str, message: str, *args: object) -> bool:
        """Log ``message % args`` unless a line of ``kind`` was logged within the period (then
        count it); whether it was logged."""
        held = self.due(kind)
        if held is None:
            return False
        self.logger.warning(message + _more(held), *args)
        return True


def _more(held: int) -> str:
    return f" (and {held} more since the last such line)" if held else ""


#: What asyncio logs, with a traceback, at every failed ``accept()`` of a listener once the process
#: is out of files (thousands of lines a second): let through once a minute.
ASYNCIO_FLOODS = ("socket.accept() out of system resource",)


class FloodFilter(logging.Filter):
    """Lets a record whose message starts with one of ``floods`` through once a minute (the next
    one says how many were dropped); every other record passes."""

    def __init__(
        self, floods: Iterable[str] = ASYNCIO_FLOODS, period: float = 60.0, clock: Callable[[], float] = time.monotonic
    ):
        super().__init__()
        self.floods = tuple(floods)
        self._throttle = Throttled(logging.getLogger(__name__), period, clock)

    def filter(self, record: logging.LogRecord) -> bool:
        kind = next((flood for flood in self.floods if str(record.msg).startswith(flood)), None)
        if kind is None:
            return True
        held = self._throttle.due(kind)
        if held:
            record.msg = str(record.msg).replace(kind, kind + _more(held), 1)
        return held is not None


def setup(level: str, secrets: Iterable[str], form: LogFormat = LogFormat.TEXT) -> None:
    """Log at ``level`` to standard error in ``form`` through a :class:`SecretFilter` of ``secrets``."""
    logging.basicConfig(level=level, force=True)
    secret_filter = SecretFilter(secrets)
    formatter = (
        JSONFormatter() if form is LogFormat.JSON else TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    for handler in logging.getLogger().handlers:
        handler.addFilter(secret_filter)
        handler.setFormatter(formatter)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    floods = logging.getLogger("asyncio")
    for earlier in [f for f in floods.filters if isinstance(f, FloodFilter)]:
        floods.removeFilter(earlier)
    floods.addFilter(FloodFilter())
    logging.captureWarnings(True)

    def uncaught(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
        logging.getLogger("tgbot").critical("uncaught exception", exc_info=(kind, error, trace))

    sys.excepthook = uncaught
