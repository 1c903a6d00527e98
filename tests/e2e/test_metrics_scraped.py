"""``GET /metrics`` scraped while a game is played (issue 27): the figures the dashboard reads
move with the game, and no label carries a chat, user or game id."""

from __future__ import annotations

import random

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.harness import Table, active_of, game_id, running
from tests.e2e.test_full_game import open_table
from tests.redis_server import RedisServer

pytestmark = pytest.mark.e2e


async def _scrape(port: int) -> dict[tuple[str, tuple], float]:
    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/metrics") as r:
        assert r.status == 200
        text = await r.text()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def test_metrics_follow_a_game(tmp_path):
    server = RedisServer()
    try:
        async with running(server, tmp_path, 0) as (emu, (bot,), _url):
            assert await active_of([bot]) is bot
            group, users = await open_table(emu, 3, "russian", chat_id=-1007)
            table = Table(emu, group, users, random.Random(7))
            for _ in range(3):
                assert await table.step(timeout=40)
            got = await _scrape(bot.http_port)
            ids = {str(group.id), game_id(emu, group.id), *(str(u.id) for u in users)}
    finally:
        server.stop()

    def value(name: str, **labels: str) -> float:
        return got.get((name, tuple(sorted(labels.items()))), 0.0)

    assert value("cheat_process_active") == 1 and value("cheat_take_overs_total") == 1
    assert value("cheat_games_started_total", variant="russian") == 1
    assert value("cheat_games_live", status="playing") == 1 and value("cheat_games_live", status="lobby") == 0
    assert value("cheat_update_duration_seconds_count", kind="callback_query") >= 5  # joins and plays
    assert value("cheat_update_duration_seconds_count", kind="message") >= 1
    assert value("cheat_bot_api_request_duration_seconds_count", method="sendMessage") >= 3
    assert value("cheat_bot_api_request_duration_seconds_count", method="answerCallbackQuery") >= 5
    assert value("cheat_redis_command_duration_seconds_count", command="EVALSHA") >= 5
    assert value("cheat_redis_up") == 1
    assert ("cheat_ingest_backlog", ()) in got
    assert not [key for key in got if any(v in ids for _, v in key[1])]
