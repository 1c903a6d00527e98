"""tgbot/metrics.py: ``GET /metrics`` in Prometheus' format, no label carrying an id, the game
accounting, and the closed label sets matching what the bot knows."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from redis.exceptions import ConnectionError as RedisConnectionError
from telegram import error as tg
from telegram.constants import UpdateType

import core
from tgbot import metrics
from tgbot.game.table import Ending

#: What Prometheus 2.42 (Debian's) asks for; Prometheus 3 asks in the same order and refuses a
#: Content-Type it does not know.
PROMETHEUS_ACCEPT = (
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
)

#: Every label the bot's metrics may carry, and what it holds (never an id).
LABELS = {"status", "variant", "ending", "kind", "method", "code", "command", "error", "reason", "le"}
INFO_LABELS = {"version", "mode", "store"}


@dataclass
class Game:
    status: str
    variant: str = "russian"
    ended: str | None = None


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def media_type(content_type: str) -> tuple[str, dict[str, str]]:
    kind, *params = (part.strip() for part in content_type.split(";"))
    return kind, dict(param.split("=", 1) for param in params)


async def scrape(accept: str | None = None) -> tuple[str, str]:
    """(Content-Type, body) of ``GET /metrics`` served by :func:`metrics.handler`."""
    app = web.Application()
    app.router.add_get("/metrics", metrics.handler())
    async with TestClient(TestServer(app)) as client:
        response = await client.get("/metrics", headers={"Accept": accept} if accept else {})
        assert response.status == 200
        return response.headers["Content-Type"], await response.text()


def exercise() -> None:
    """Touch every metric as the bot would, with ids that must not show."""
    for before, after in [
        (None, Game("lobby")),
        (Game("lobby"), Game("playing")),
        (Game("playing"), Game("over", ended="finished")),
        (None, Game("lobby", "classic")),
        (Game("lobby", "classic"), Game("cancelled", "classic", ended="expired")),
    ]:
        metrics.game_committed(before, after)
    update = {"update_id": 912345678, "callback_query": {"from": {"id": 7123456789}, "data": "p:AbCdEfGh:3"}}
    kind = metrics.update_kind(update)
    processed = sample("cheat_update_duration_seconds_count", kind="callback_query")
    with metrics.update_processing(update):
        pass
    assert sample("cheat_update_duration_seconds_count", kind="callback_query") == processed + 1
    metrics.UPDATE_RETRIES.labels(kind=kind).inc()
    metrics.UPDATES_SET_ASIDE.labels(kind=kind).inc()
    metrics.INGEST_BACKLOG.set(3)
    with metrics.bot_api_call("sendMessage"):
        pass
    for error in (tg.RetryAfter(3), tg.Forbidden("bot was blocked by the user"), tg.BadRequest("chat not found")):
        with pytest.raises(type(error)), metrics.bot_api_call("sendMessage"):
            raise error
    with metrics.redis_command("evalsha"):
        pass
    with pytest.raises(RedisConnectionError), metrics.redis_command("hget"):
        raise RedisConnectionError("Connection refused")
    metrics.became_active(1764670000123)
    metrics.stepped_down(metrics.StepDown.RENEWAL_LATE)
    metrics.set_info("polling", "redis")


async def test_metrics_are_served_in_prometheus_text_format():
    exercise()
    content_type, body = await scrape()
    kind, params = media_type(content_type)
    assert (kind, params["charset"]) == ("text/plain", "utf-8")
    assert params["version"] in ("0.0.4", "1.0.0")  # Prometheus' text format
    families = {family.name: family for family in text_string_to_metric_families(body)}
    for name in [
        "cheat_games_live",
        "cheat_games_started",
        "cheat_games_ended",
        "cheat_update_duration_seconds",
        "cheat_update_retries",
        "cheat_updates_set_aside",
        "cheat_ingest_backlog",
        "cheat_bot_api_request_duration_seconds",
        "cheat_bot_api_errors",
        "cheat_bot_api_rate_limited",
        "cheat_redis_command_duration_seconds",
        "cheat_redis_errors",
        "cheat_redis_up",
        "cheat_process_active",
        "cheat_lease_epoch",
        "cheat_take_overs",
        "cheat_step_downs",
        "cheat_bot_info",
    ]:
        assert name in families, name
    assert families["cheat_update_duration_seconds"].type == "histogram"
    assert families["cheat_games_started"].type == "counter"


async def test_openmetrics_when_prometheus_asks_for_it():
    content_type, body = await scrape(PROMETHEUS_ACCEPT)
    kind, params = media_type(content_type)
    assert (kind, params["version"], params["charset"]) == ("application/openmetrics-text", "1.0.0", "utf-8")
    assert body.rstrip().endswith("# EOF")
    assert "cheat_process_active " in body


async def test_no_label_carries_an_id():
    exercise()
    _, body = await scrape()
    seen = set()
    for family in text_string_to_metric_families(body):
        if not family.name.startswith("cheat_"):
            continue
        for s in family.samples:
            allowed = INFO_LABELS if family.name == "cheat_bot_info" else LABELS
            assert set(s.labels) <= allowed, (s.name, s.labels)
            for label, value in s.labels.items():
                seen.add(label)
                if label not in ("le", "version"):
                    assert re.fullmatch(r"[A-Za-z_0-9]*", value) and not re.search(r"\d{4,}", value), (s.name, value)
                assert value not in ("7123456789", "912345678", "AbCdEfGh"), (s.name, label)
    assert {"kind", "method", "code", "variant", "ending", "command", "error", "reason"} <= seen


def test_labels_of_unknown_values_are_bounded():
    assert metrics.update_kind({"update_id": 1, "callback_query": {}}) == "callback_query"
    assert metrics.update_kind({"update_id": 1, "something_new_8123456": {}}) == "other"
    before = sample("cheat_games_started_total", variant="other")
    metrics.game_committed(Game("lobby", "v123456789"), Game("playing", "v123456789"))
    assert sample("cheat_games_started_total", variant="other") == before + 1
    before = sample("cheat_games_ended_total", variant="russian", ending="other")
    metrics.game_committed(Game("playing"), Game("over", ended="g8123456"))
    assert sample("cheat_games_ended_total", variant="russian", ending="other") == before + 1


def test_games_are_counted_as_they_open_start_and_end():
    metrics.games_resumed([Game("lobby"), Game("playing"), Game("playing"), Game("over")])
    assert sample("cheat_games_live", status="lobby") == 1
    assert sample("cheat_games_live", status="playing") == 2
    started = sample("cheat_games_started_total", variant="classic")
    stopped = sample("cheat_games_ended_total", variant="classic", ending="stopped")
    metrics.game_committed(Game("lobby", "classic"), Game("playing", "classic"))
    metrics.game_committed(Game("playing", "classic"), Game("playing", "classic"))  # a play: no change
    assert sample("cheat_games_live", status="lobby") == 0
    assert sample("cheat_games_live", status="playing") == 3
    assert sample("cheat_games_started_total", variant="classic") == started + 1
    metrics.game_committed(Game("playing", "classic"), Game("cancelled", "classic", ended="stopped"))
    assert sample("cheat_games_live", status="playing") == 2
    assert sample("cheat_games_ended_total", variant="classic", ending="stopped") == stopped + 1
    metrics.INGEST_BACKLOG.set(12)
    metrics.stepped_down(metrics.StepDown.LEASE_LOST)
    assert sample("cheat_games_live", status="playing") == 0
    assert sample("cheat_process_active") == sample("cheat_ingest_backlog") == 0


def test_role_and_take_overs():
    take_overs = sample("cheat_take_overs_total")
    metrics.became_active(42)
    assert (sample("cheat_process_active"), sample("cheat_lease_epoch")) == (1, 42)
    assert sample("cheat_take_overs_total") == take_overs + 1
    fenced = sample("cheat_step_downs_total", reason="fenced")
    metrics.stepped_down(metrics.StepDown.FENCED)
    assert (sample("cheat_process_active"), sample("cheat_lease_epoch")) == (0, 0)
    assert sample("cheat_step_downs_total", reason="fenced") == fenced + 1


def test_bot_api_errors_by_code_and_429_apart():
    assert [
        metrics.error_code(e)
        for e in (
            tg.RetryAfter(5),
            tg.BadRequest("message is not modified"),
            tg.ChatMigrated(-1001),
            tg.InvalidToken("Unauthorized"),
            tg.Forbidden("bot was kicked"),
            tg.Conflict("terminated by other getUpdates request"),
            tg.TimedOut(),
            tg.NetworkError("Bad Gateway"),
            ValueError("x"),
        )
    ] == ["429", "400", "400", "401", "403", "409", "timeout", "network", "other"]
    limited = sample("cheat_bot_api_rate_limited_total", method="editMessageText")
    calls = sample("cheat_bot_api_request_duration_seconds_count", method="editMessageText")
    with pytest.raises(tg.RetryAfter), metrics.bot_api_call("editMessageText"):
        raise tg.RetryAfter(2)
    assert sample("cheat_bot_api_rate_limited_total", method="editMessageText") == limited + 1
    assert sample("cheat_bot_api_errors_total", method="editMessageText", code="429") == 0
    assert sample("cheat_bot_api_request_duration_seconds_count", method="editMessageText") == calls + 1


def test_closed_label_sets_match_the_bot():
    assert set(metrics.VARIANTS) == set(core.VARIANTS)
    assert set(metrics.ENDINGS) == {e.value for e in Ending}
    assert set(metrics.UPDATE_KINDS) - {"other"} <= {u.value for u in UpdateType}


async def timed_commands(client) -> tuple[float, float, float]:
    """How many SET, PIPELINE and XREADGROUP ``client`` timed while it ran one of each (the
    last with BLOCK)."""

    def counts() -> tuple[float, float, float]:
        return tuple(  # type: ignore[return-value]
            REGISTRY.get_sample_value("cheat_redis_command_duration_seconds_count", {"command": command}) or 0
            for command in ("SET", "PIPELINE", "XREADGROUP")
        )

    before = counts()
    await client.set("k", "v")
    pipe = client.pipeline(transaction=False)
    pipe.get("k")
    pipe.get("k")
    assert await pipe.execute() == ["v", "v"]
    await client.xgroup_create("s", "g", id="0", mkstream=True)
    await client.xreadgroup("g", "c", {"s": ">"}, count=1, block=10)
    return tuple(after - was for after, was in zip(counts(), before))  # type: ignore[return-value]


async def test_redis_commands_and_pipelines_are_timed_but_not_blocking_reads():
    from tests.redis_server import RedisServer
    from tgbot.storage.redis import connect

    server = RedisServer()
    try:
        client = await connect(server.url)
        assert await timed_commands(client) == (1, 1, 0)
        await client.aclose()
    finally:
        server.stop()
