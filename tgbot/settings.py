"""Settings from the environment (pydantic-settings), DESIGN.md: tgbot/.

| variable            | meaning                                                                  |
|---------------------|--------------------------------------------------------------------------|
| BOT_TOKEN           | the bot's token from @BotFather (required)                               |
| REDIS_URL           | ``redis://…``; unset or ``memory://`` runs on an embedded in-process store; |
|                     | for a Redis Cluster, the URL of any one node (database 0): the bot finds  |
|                     | the cluster by itself (``INFO cluster``) and learns the other nodes; for  |
|                     | Redis Sentinel, ``redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/<service>[/<db>]`` |
|                     | (the data nodes' password; ``?sentinel_password=`` for the sentinels'; port 26379 by default) |
| TELEGRAM_BASE_URL   | Bot API base ending in ``/bot`` (added when missing), default Telegram's  |
| WEBHOOK_URL         | public HTTPS URL: webhook mode instead of long polling                   |
| WEBHOOK_LISTEN      | ``host:port`` the webhook server listens on (default 0.0.0.0:8443)        |
| WEBHOOK_SECRET      | secret checked in ``X-Telegram-Bot-Api-Secret-Token`` (1–256 of A-Za-z0-9_-) |
| LOG_LEVEL           | logging level name (default INFO)                                        |
| LOBBY_TIMEOUT       | seconds an untouched lobby stays open (default 900: 15 minutes), and a   |
|                     | group may refuse the bot's messages before its game is retired           |
| TURN_TIMEOUT        | default seconds for a turn (default 90)                                  |
| RATE_GROUP_MAX / RATE_GROUP_PERIOD   | group limit: messages per period (20 per 60 s, Bot FAQ) |
| RATE_GLOBAL_MAX / RATE_GLOBAL_PERIOD | overall limit (30 per 1 s, Bot FAQ)                     |
| AI_PAUSE_MIN / AI_PAUSE_MAX | seconds an AI seat pauses before acting (1 to 3; never less than the group's message spacing) |
| HTTP_LISTEN         | ``host:port`` of the internal listener: ``GET /healthz`` (default 127.0.0.1:8080) |
"""

from __future__ import annotations

import logging
from typing import Self

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["DEFAULT_BASE_URL", "Settings"]

DEFAULT_BASE_URL = "https://api.telegram.org/bot"


class Settings(BaseSettings):
    """The bot's settings; see the module docstring for the variables."""

    model_config = SettingsConfigDict(env_file=None, extra="ignore", case_sensitive=False)

    bot_token: str = Field(default="", validation_alias="BOT_TOKEN")
    redis_url: str = Field(default="memory://", validation_alias="REDIS_URL")
    telegram_base_url: str = Field(default=DEFAULT_BASE_URL, validation_alias="TELEGRAM_BASE_URL")
    webhook_url: str = Field(default="", validation_alias="WEBHOOK_URL")
    webhook_listen: str = Field(default="0.0.0.0:8443", validation_alias="WEBHOOK_LISTEN")
    # setWebhook's secret_token: 1-256 characters, only A-Z, a-z, 0-9, _ and - (Bot API)
    webhook_secret: str = Field(default="", validation_alias="WEBHOOK_SECRET", pattern=r"^[A-Za-z0-9_-]{0,256}$")
    log_level: str = Field(default="INFO", validation_alias="LOG_LEVEL")
    lobby_timeout: float = Field(default=900.0, validation_alias="LOBBY_TIMEOUT", gt=0)
    turn_timeout: float = Field(default=90.0, validation_alias="TURN_TIMEOUT", gt=0)
    rate_group_max: int = Field(default=20, validation_alias="RATE_GROUP_MAX", gt=0)
    rate_group_period: float = Field(default=60.0, validation_alias="RATE_GROUP_PERIOD", gt=0)
    rate_global_max: int = Field(default=30, validation_alias="RATE_GLOBAL_MAX", gt=0)
    rate_global_period: float = Field(default=1.0, validation_alias="RATE_GLOBAL_PERIOD", gt=0)
    ai_pause_min: float = Field(default=1.0, validation_alias="AI_PAUSE_MIN", ge=0)
    ai_pause_max: float = Field(default=3.0, validation_alias="AI_PAUSE_MAX", ge=0)
    http_listen: str = Field(default="127.0.0.1:8080", validation_alias="HTTP_LISTEN")

    @field_validator("telegram_base_url")
    @classmethod
    def _bot_api_base(cls, value: str) -> str:
        """An http(s) Bot API base as PTB wants it, the token appended to ``…/bot`` (a missing
        ``/bot`` or a trailing ``/`` is mended: ``http://host:8081`` is ``http://host:8081/bot``)."""
        base = value.strip().rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ValueError(f"not an http:// or https:// URL: {value}")
        return base if base.endswith("/bot") else base + "/bot"

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
