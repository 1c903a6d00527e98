"""Settings from the environment (pydantic-settings); each field's ``description`` is its meaning.
Everything checkable without a connection is checked here, before Redis or Telegram is contacted."""

from __future__ import annotations

import logging
import re
from typing import NamedTuple, Self
from urllib.parse import unquote, urlsplit

from pydantic import AliasGenerator, Field, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from tgbot.logs import LogFormat, mask_url

__all__ = ["DEFAULT_BASE_URL", "REDIS_SCHEMES", "Settings"]

DEFAULT_BASE_URL = "https://api.telegram.org/bot"
#: A bot token's shape: the bot's id, a colon, the secret part.
_TOKEN_SHAPE = re.compile(r"\d+:[A-Za-z0-9_-]+")
#: The schemes REDIS_URL may have.
REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "memory")


class Settings(BaseSettings):
    """The bot's settings, each read from the environment variable of its name in capitals."""

    model_config = SettingsConfigDict(
        env_file=None, extra="ignore", case_sensitive=False, alias_generator=AliasGenerator(validation_alias=str.upper)
    )

    bot_token: str = Field(default="", description="the bot's token from @BotFather (required)")
    redis_url: str = Field(
        default="memory://",
        description="redis://[[user]:password@]host:port/db (rediss:// with TLS, unix://); memory:// runs on an "
        "embedded in-process store (nothing survives a restart); for a Redis Cluster the URL of any one node "
        "(database 0); for Redis Sentinel redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/"
        "<service>[/<db>] (the data nodes' password; ?sentinel_password= for the sentinels'; port 26379 by default)",
    )
    telegram_base_url: str = Field(
        default=DEFAULT_BASE_URL,
        description="the Bot API's base URL, ending in /bot (added when missing): Telegram's, a local Bot API server's or an emulator's",
    )
    webhook_url: str = Field(default="", description="a public https:// URL: webhook mode instead of long polling")
    webhook_listen: str = Field(default="0.0.0.0:8443", description="host:port the webhook server listens on")
    # setWebhook's secret_token: 1-256 characters, only A-Z, a-z, 0-9, _ and - (Bot API)
    webhook_secret: str = Field(
        default="",
        pattern=r"^[A-Za-z0-9_-]{0,256}$",
        description="the secret Telegram sends in X-Telegram-Bot-Api-Secret-Token (1-256 of A-Za-z0-9_-; "
        "unset: one made once per bot and kept in Redis)",
    )
    log_level: str = Field(default="INFO", description="DEBUG, INFO, WARNING, ERROR or CRITICAL")
    log_format: LogFormat = Field(
        default=LogFormat.TEXT,
        description="text (lines of UTC time, level, logger, message) or json (one JSON object a line: time, level, "
        "logger, message; game and chat on a line about a game)",
    )
    lobby_timeout: float = Field(
        default=900.0,
        gt=0,
        description="seconds an untouched lobby stays open, and a group may refuse the bot's messages before "
        "its game is retired",
    )
    turn_timeout: float = Field(default=90.0, gt=0, description="default seconds for a turn")
    rate_group_max: int = Field(default=20, gt=0, description="messages to one group per RATE_GROUP_PERIOD")
    rate_group_period: float = Field(default=60.0, gt=0, description="seconds of the group limit's window")
    rate_global_max: int = Field(default=30, gt=0, description="messages in all per RATE_GLOBAL_PERIOD")
    rate_global_period: float = Field(default=1.0, gt=0, description="seconds of the overall limit's window")
    rate_private_max: int = Field(
        default=3, gt=0, description="messages to one private chat per RATE_PRIVATE_PERIOD (about one a second)"
    )
    rate_private_period: float = Field(default=3.0, gt=0, description="seconds of the private chat limit's window")
    ai_pause_min: float = Field(
        default=1.0,
        ge=0,
        description="least seconds an AI seat pauses before acting (never less than the group's message spacing)",
    )
    ai_pause_max: float = Field(default=3.0, ge=0, description="most seconds an AI seat pauses before acting")
    http_listen: str = Field(
        default="127.0.0.1:8080", description="host:port of the internal listener: GET /healthz, /readyz, /metrics"
    )

    @field_validator("telegram_base_url")
    @classmethod
    def _bot_api_base(cls, value: str) -> str:
        """An http(s) Bot API base as PTB wants it, the token appended to ``…/bot`` (a missing
        ``/bot`` or a trailing ``/`` is mended: ``http://host:8081`` is ``http://host:8081/bot``)."""
        base = value.strip().rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ValueError(f"not an http:// or https:// URL: {mask_url(value)}")
        try:
            urlsplit(base).port  # noqa: B018  (raises ValueError for a port out of range)
        except ValueError:
            raise ValueError(f"the port is a number from 1 to 65535 in {mask_url(value)}") from None
        return base if base.endswith("/bot") else base + "/bot"

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        """A URL :func:`tgbot.storage.redis.connect` can use (its scheme, port and, for Sentinel, its parts)."""
        if value in ("", "memory://") or value.startswith("memory:"):
            return value
        scheme = urlsplit(value).scheme
        if scheme not in REDIS_SCHEMES:
            raise ValueError(
                "not a Redis URL: it starts with redis://, rediss://, unix://, redis+sentinel:// or memory://, "
                f"not {scheme or value.partition(':')[0]!r}"
            )
        if scheme == "redis+sentinel":
            try:
                parse_sentinel_url(value)
            except ValueError as error:  # (its messages never show the password)
                raise ValueError(f"not a usable Redis Sentinel URL: {error}") from None
        else:
            try:
                urlsplit(value).port  # noqa: B018
            except ValueError:
                raise ValueError(f"a Redis URL's port is a number from 1 to 65535: {mask_url(value)}") from None
            if "sentinel_password=" in urlsplit(value).query:
                raise ValueError("sentinel_password= belongs in a redis+sentinel:// URL")
        return value

    @field_validator("bot_token")
    @classmethod
    def _token_shape(cls, value: str) -> str:
        # https://core.telegram.org/bots/api#authorizing-your-bot: "<bot id>:<letters, digits, _ and ->"
        if value and not _TOKEN_SHAPE.fullmatch(value.strip()):
            raise ValueError("not a token from @BotFather (the bot's id, a colon, then letters, digits, _ and -)")
        return value.strip()

    @field_validator("webhook_url")
    @classmethod
    def _https(cls, value: str) -> str:
        # https://core.telegram.org/bots/api#setwebhook: an HTTPS URL (Telegram refuses others)
        if value and not value.lower().startswith("https://"):
            raise ValueError(
                f"must be an https:// URL (Telegram delivers webhooks over HTTPS only), not {mask_url(value)}"
            )
        try:
            urlsplit(value).port  # noqa: B018
        except ValueError as error:
            raise ValueError(f"not a usable URL ({error}): {mask_url(value)}") from None
        return value

    @field_validator("webhook_listen", "http_listen")
    @classmethod
    def _listen(cls, value: str, info: ValidationInfo) -> str:
        """``host:port`` (either may be left out: the default's; the port from 0 to 65535, 0 any free one)."""
        host, _, port = value.strip().rpartition(":")
        if port and (not port.isdigit() or int(port) > 65535):
            raise ValueError(f"not host:port with a port from 0 to 65535: {value!r}")
        default_port = 8443 if info.field_name == "webhook_listen" else 8080
        return f"{host or '0.0.0.0'}:{port or default_port}"

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        """A level name :mod:`logging` knows (any case), upper-cased."""
        if not isinstance(logging.getLevelName(value.upper()), int):
            raise ValueError(f"not a logging level (DEBUG, INFO, WARNING, ERROR, CRITICAL): {value}")
        return value.upper()

    @model_validator(mode="after")
    def _pauses_in_order(self) -> Self:
        """AI_PAUSE_MIN ≤ AI_PAUSE_MAX."""
        if self.ai_pause_min > self.ai_pause_max:
            raise ValueError(f"AI_PAUSE_MIN ({self.ai_pause_min}) is above AI_PAUSE_MAX ({self.ai_pause_max})")
        return self

    @property
    def in_memory(self) -> bool:
        """True when running on the embedded in-process store (nothing survives a restart)."""
        return self.redis_url in ("", "memory://") or self.redis_url.startswith("memory:")

    @property
    def base_file_url(self) -> str:
        """The file-download base matching :attr:`telegram_base_url`."""
        return self.telegram_base_url.rstrip("/").removesuffix("/bot") + "/file/bot"

    @property
    def secrets(self) -> tuple[str, ...]:
        """What no output may show: the token, the webhook secret, every password in a URL."""
        from tgbot.logs import url_passwords

        found = [self.bot_token, self.bot_token.partition(":")[2], self.webhook_secret]
        for url in (self.redis_url, self.telegram_base_url, self.webhook_url):
            found += url_passwords(url)
        return tuple(secret for secret in found if secret)


#: A sentinel's port when the URL gives none.
SENTINEL_PORT = 26379


class SentinelURL(NamedTuple):
    """A ``redis+sentinel://`` URL's parts: the sentinels, the service (the name they monitor the
    primary under), the database, the data nodes' user and password, the sentinels' password."""

    sentinels: list[tuple[str, int]]
    service: str
    db: int
    username: str | None
    password: str | None
    sentinel_password: str | None


def parse_sentinel_url(url: str) -> SentinelURL:
    """The parts of ``redis+sentinel://[[user]:password@]host[:port][,…]/service[/db][?sentinel_password=…]``
    (percent-decoded; port 26379 and database 0 by default). Raises ``ValueError`` saying what is
    wrong, never showing a password.

    >>> parse_sentinel_url("redis+sentinel://:s%40cret@10.0.0.1:26380,[::1]/cheat/2?sentinel_password=x")
    SentinelURL(sentinels=[('10.0.0.1', 26380), ('::1', 26379)], service='cheat', db=2, username=None, password='s@cret', sentinel_password='x')
    """
    parts = urlsplit(url)
    if parts.scheme != "redis+sentinel":
        raise ValueError(f"not a redis+sentinel:// URL (scheme {parts.scheme!r})")
    userinfo, _, hosts = parts.netloc.rpartition("@")
    username, _, password = userinfo.partition(":")
    sentinels = [_sentinel(host) for host in hosts.split(",")]
    path = parts.path.strip("/").split("/")
    if not path[0] or len(path) > 2:
        raise ValueError(
            "a redis+sentinel:// URL names the service after its hosts: redis+sentinel://host:26379/<service>[/<db>]"
        )
    if len(path) == 2 and not path[1].isdigit():
        raise ValueError(f"a redis+sentinel:// URL's database is a number, not {path[1]!r}")
    query = dict(pair.partition("=")[::2] for pair in parts.query.split("&") if pair)  # (a "+" stays a "+")
    if other := sorted(set(query) - {"sentinel_password"}):
        raise ValueError(f"a redis+sentinel:// URL takes one query parameter, sentinel_password, not {other}")
    return SentinelURL(
        sentinels,
        unquote(path[0]),
        int(path[1]) if len(path) == 2 else 0,
        unquote(username) or None,
        unquote(password) if ":" in userinfo else None,
        unquote(query["sentinel_password"]) if query else None,
    )


def _sentinel(host: str) -> tuple[str, int]:
    """One ``host[:port]`` of a ``redis+sentinel://`` URL (urllib reads brackets around IPv6)."""
    node = urlsplit("//" + host)
    try:
        port = node.port or SENTINEL_PORT
    except ValueError:
        raise ValueError(f"a redis+sentinel:// URL's port is a number from 1 to 65535, not in {host!r}") from None
    if not node.hostname:
        raise ValueError("a redis+sentinel:// URL names each sentinel as host[:port], separated by commas")
    return node.hostname, port
