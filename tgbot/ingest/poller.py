"""Long polling for the active process: fetch, store durably with the next offset, repeat; the next
``getUpdates`` with that offset confirms the batch to Telegram (https://core.telegram.org/bots/api#getupdates)."""

from __future__ import annotations

import asyncio
import logging
import warnings
from typing import Any, Protocol

from telegram import Update
from telegram.error import BadRequest, Conflict, NetworkError
from telegram.warnings import PTBUserWarning

from tgbot.ingest.consumer import Consumer

__all__ = ["Poller"]

log = logging.getLogger(__name__)

#: Seconds a long poll may take beyond its ``timeout`` before the connection counts as lost.
_POLL_SLACK = 10
# PTB asks for Bot.get_updates, which builds an Update each: the raw JSON is stored and parsed once.
warnings.filterwarnings("ignore", message=r"Please use 'Bot\.getUpdates'", category=PTBUserWarning)


class Holder(Protocol):
    """The lease as the poller sees it (:class:`tgbot.process.lease.Lease`)."""

    @property
    def value(self) -> str: ...

    async def confirm(self) -> bool: ...


class Poller:
    """Polls ``getUpdates`` (``timeout`` seconds each) into the stream, for ``consumer`` to process,
    while ``lease`` is held."""

    def __init__(self, bot: Any, consumer: Consumer, lease: Holder, timeout: int = 10) -> None:
        self.bot = bot
        self.consumer = consumer
        self.lease = lease
        self.timeout = timeout

    async def run(self) -> None:
        """Poll until cancelled; return when the lease was found lost at a write."""
        offset = await self.consumer.ingest.offset()
        pause = 0.5
        while True:
            try:
                batch = await self._get_updates(offset)
            except BadRequest:
                raise  # (a NetworkError too) a call Telegram refuses: the runner logs it
            except (Conflict, NetworkError) as error:
                # 409: a former holder's long poll is still open; or Telegram is unreachable
                log.warning("getUpdates: %s; polling again in %.1f s", error, pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 5.0)
                continue
            pause = 0.5
            if not batch:
                continue
            offset = max(int(update["update_id"]) for update in batch) + 1
            while not await self.consumer.polled(batch, self.lease.value, offset):
                if not await self.lease.confirm():  # (a lease lapsed in a Redis stall may be ours again)
                    log.warning("lease lost: %d polled update(s) left to Telegram for the next holder", len(batch))
                    return

    async def _get_updates(self, offset: int) -> list[dict[str, Any]]:
        """One long poll, its updates as Telegram sent them. Raises what PTB raises (``Conflict``...)."""
        parameters = {"offset": offset or None, "timeout": self.timeout, "allowed_updates": Update.ALL_TYPES}
        result = await self.bot.do_api_request(
            "getUpdates",
            api_kwargs={name: value for name, value in parameters.items() if value is not None},
            read_timeout=self.timeout + _POLL_SLACK,
        )
        return result if isinstance(result, list) else []
