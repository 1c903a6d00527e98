"""The webhook's listener (tgbot.ingest.web) in this process, over raw sockets: idle and slow
connections are closed, at most so many are held (an idle one makes room for a new one), a
secret header of other bytes than ASCII is a 403, and refusals are logged once a minute per kind."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from prometheus_client import REGISTRY

from tests.redis_server import free_port
from tgbot.ingest.web import start_webhook
from tgbot.logs import Throttled

SECRET = "s3cret"


class Hook:
    """A webhook listener on a free port and the updates it stored."""

    def __init__(self) -> None:
        self.port = free_port()
        self.stored: list[dict[str, Any]] = []
        self.release = asyncio.Event()
        self.release.set()
        self.storing = 0  # updates handed to ingest
        self.changed = asyncio.Event()

    async def until_storing(self, count: int, timeout: float = 10) -> None:
        """Wait until ``count`` updates have been handed to ingest."""
        async with asyncio.timeout(timeout):
            while self.storing < count:
                self.changed.clear()
                await self.changed.wait()

    async def ingest(self, update: dict[str, Any]) -> None:
        self.storing += 1
        self.changed.set()
        await self.release.wait()
        self.stored.append(update)

    async def connect(self, first: bytes = b"") -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        if first:
            writer.write(first)
        return reader, writer

    async def post(self, update_id: int = 1, secret: bytes = SECRET.encode(), timeout: float = 10) -> int | None:
        """The status of a POST of an update on a new connection (None: closed unanswered)."""
        reader, writer = await self.connect()
        body = json.dumps({"update_id": update_id}).encode()
        writer.write(
            b"POST /hook HTTP/1.1\r\nHost: x\r\nX-Telegram-Bot-Api-Secret-Token: " + secret + b"\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        try:
            line = await asyncio.wait_for(reader.readline(), timeout)
        except ConnectionError:
            return None
        finally:
            writer.close()
        return int(line.split()[1]) if line else None


@pytest.fixture
async def serve() -> AsyncIterator[Callable[..., Awaitable[Hook]]]:
    """``await serve(**settings)``: a listener with ``start_webhook``'s keyword arguments."""
    runners = []

    async def started(**settings: Any) -> Hook:
        hook = Hook()
        runners.append((hook, await start_webhook(f"127.0.0.1:{hook.port}", "/hook", SECRET, hook.ingest, **settings)))
        return hook

    yield started
    for hook, runner in runners:
        hook.release.set()
        await runner.cleanup()


async def closed(reader: asyncio.StreamReader, timeout: float = 10) -> bytes:
    """What the listener sent until it closed the connection (TimeoutError while it stays open)."""
    with contextlib.suppress(ConnectionError):
        return await asyncio.wait_for(reader.read(), timeout)
    return b""


@pytest.mark.parametrize("first", [b"", b"POST /hook HTTP/1.1\r\nHost: x\r\n"], ids=["silent", "headers never end"])
async def test_a_connection_without_a_whole_request_is_closed(serve, first):
    served = await serve(idle=0.3)
    reader, writer = await served.connect(first)
    assert await closed(reader) == b""
    writer.close()
    assert await served.post() == 200  # (one that sends its request is served)


async def test_a_body_that_does_not_come_is_a_408(serve):
    served = await serve(body=0.3)
    reader, writer = await served.connect(
        b"POST /hook HTTP/1.1\r\nHost: x\r\nX-Telegram-Bot-Api-Secret-Token: s3cret\r\nContent-Length: 50\r\n\r\n{"
    )
    assert (await asyncio.wait_for(reader.readline(), 10)).startswith(b"HTTP/1.1 408")
    writer.close()


def refusals(reason: str) -> float:
    return REGISTRY.get_sample_value("cheat_webhook_refusals_total", {"reason": reason}) or 0


async def test_a_new_connection_closes_an_idle_one_when_all_are_held(serve):
    served = await serve(connections=5)
    before = refusals("idle_closed")
    idle = [await served.connect(b"POST /hook HTTP/1.1\r\n" if i % 2 else b"") for i in range(5)]
    assert await served.post(7) == 200  # the update goes through, the longest idle was closed
    assert served.stored == [{"update_id": 7}]
    assert await closed(idle[0][0]) == b""
    assert refusals("idle_closed") == before + 1
    for _, writer in idle:
        writer.close()


async def test_a_connection_is_refused_when_every_held_one_is_busy(serve):
    served = await serve(connections=3)
    before = refusals("full")
    served.release.clear()  # the three updates wait to be stored: their connections are busy
    busy = [asyncio.create_task(served.post(i)) for i in range(3)]
    await served.until_storing(3)
    assert await served.post(9) is None  # closed unanswered
    assert refusals("full") == before + 1
    served.release.set()
    assert await asyncio.gather(*busy) == [200, 200, 200]
    assert served.storing == 3


@pytest.mark.parametrize(
    "secret", ["sécret".encode(), b"s\xe9cret", b"", b"wrong"], ids=["utf-8", "latin-1", "none", "wrong"]
)
async def test_a_wrong_secret_is_a_403_never_a_500(serve, secret, caplog):
    served = await serve()
    with caplog.at_level(logging.WARNING):
        assert [await served.post(i, secret) for i in range(20)] == [403] * 20
    assert served.stored == []
    assert "Traceback" not in caplog.text and not any(r.exc_info for r in caplog.records)
    assert len([r for r in caplog.records if "403" in r.getMessage()]) == 1  # one line, not twenty


def test_throttled_logs_one_line_per_kind_a_period_and_counts_the_rest(caplog):
    now = [0.0]
    throttled = Throttled(logging.getLogger("test.throttled"), 60, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING):
        said = [throttled.warning("a", "refused %s", "a") for _ in range(5)] + [throttled.warning("b", "refused b")]
        now[0] = 59.9
        said.append(throttled.warning("a", "refused %s", "a"))
        now[0] = 60.0
        said.append(throttled.warning("a", "refused %s", "a"))
    assert said == [True, False, False, False, False, True, False, True]
    assert [r.getMessage() for r in caplog.records] == [
        "refused a",
        "refused b",
        "refused a (and 5 more since the last such line)",
    ]
