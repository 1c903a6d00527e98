"""``python -m tgbot``: start-up failures are one clear line; the in-memory store starts."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from tests.fakes.botapi import BotAPIEmulator
from tests.redis_server import RedisSentinelServers, RedisServer, free_port

ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("BOT_TOKEN", "REDIS_URL", "TELEGRAM_BASE_URL", "WEBHOOK_URL", "HTTP_LISTEN")
    }
    env["HTTP_LISTEN"] = "127.0.0.1:0"  # /healthz on a free port (never the default 8080)
    env.update(extra)
    return env


def _run(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tgbot"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=30
    )


def _one_line(p: subprocess.CompletedProcess, *words: str) -> None:
    """Exit code 2 and one ``cheat-bot:`` line holding ``words``, after log lines at most."""
    assert p.returncode == 2, p.stderr[-2000:]
    lines = p.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("cheat-bot:") and all(w in lines[-1] for w in words), p.stderr[-2000:]
    assert [x for x in lines[:-1] if not x.startswith("20")] == [], p.stderr[-2000:]  # log lines (timestamped)
    assert "Traceback" not in p.stderr + p.stdout


def test_no_token_exits_2_one_line():
    p = _run(_env())
    _one_line(p, "BOT_TOKEN")
    assert len(p.stderr.strip().splitlines()) == 1


def test_a_wrong_setting_exits_2_one_line():
    p = _run(_env(BOT_TOKEN="1:x", LOBBY_TIMEOUT="abc"))
    _one_line(p, "LOBBY_TIMEOUT")
    assert len(p.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("setting", "word"),
    [
        ({"LOG_LEVEL": "chatty"}, "LOG_LEVEL"),
        ({"WEBHOOK_SECRET": "not/a secret"}, "WEBHOOK_SECRET"),
        ({"AI_PAUSE_MIN": "5", "AI_PAUSE_MAX": "2"}, "AI_PAUSE_MIN"),
    ],
)
def test_settings_out_of_range_exit_2_one_line(setting, word):
    p = _run(_env(BOT_TOKEN="1:x", **setting))
    _one_line(p, word)
    assert len(p.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("setting", "word"),
    [
        ({"REDIS_URL": "redis://:Hunter2Secret@[::1"}, "REDIS_URL"),  # an unclosed "[": no URL to split
        ({"REDIS_URL": "redis+sentinel://:Hunter2Secret@[::1/svc"}, "REDIS_URL"),
        ({"TELEGRAM_BASE_URL": "http://u:Hunter2Secret@[::1/bot"}, "TELEGRAM_BASE_URL"),
        ({"WEBHOOK_URL": "https://u:Hunter2Secret@[::1/hook"}, "WEBHOOK_URL"),
        ({"REDIS_URL": "redis://127.0.0.1:1/0?sentinel_password=Hunter2Secret"}, "sentinel"),
        ({"BOT_TOKEN": "Hunter2Secret notatoken"}, "BOT_TOKEN"),
    ],
)
def test_a_malformed_url_or_token_exits_2_one_line_and_shows_no_secret(setting, word):
    p = _run(_env(**{"BOT_TOKEN": "1:x", **setting}))
    _one_line(p, word)
    assert len(p.stderr.strip().splitlines()) == 1
    assert "Hunter2Secret" not in p.stderr + p.stdout


def test_unreachable_redis_exits_2_one_line():
    port = free_port()
    p = _run(_env(BOT_TOKEN="1:x", REDIS_URL=f"redis://127.0.0.1:{port}/0"))
    _one_line(p, "Redis", str(port))
    assert len(p.stderr.strip().splitlines()) == 1


def test_cluster_node_with_unserved_slots_exits_2_one_line():
    # a node in cluster mode that no cluster was formed with: no slot is served
    node = RedisServer(
        extra=["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port", str(free_port())]
    )
    try:
        _one_line(_run(_env(BOT_TOKEN="1:x", REDIS_URL=node.url)), "Redis", str(node.port))
    finally:
        node.stop()


def test_unreachable_sentinels_exit_2_one_line():
    ports = [free_port(), free_port()]
    p = _run(_env(BOT_TOKEN="1:x", REDIS_URL=f"redis+sentinel://127.0.0.1:{ports[0]},127.0.0.1:{ports[1]}/cheat"))
    _one_line(p, "Redis", "cannot reach any sentinel", str(ports[0]), str(ports[1]))
    assert len(p.stderr.strip().splitlines()) == 1


def test_sentinels_without_the_service_exit_2_one_line():
    servers = RedisSentinelServers(sentinels=1)
    try:
        p = _run(_env(BOT_TOKEN="1:x", REDIS_URL=servers.url.replace(f"/{servers.service}/", "/other/")))
        _one_line(p, "Redis", "no sentinel", "'other'")
    finally:
        servers.stop()


def test_a_sentinel_or_replica_given_the_wrong_way_exits_2_one_line():
    # an operator's likely mistakes: a sentinel as redis://, a replica (every write would fail),
    # a data node as a sentinel, a misspelt scheme
    servers = RedisSentinelServers(sentinels=1)
    try:
        sentinel, replica, primary = servers.sentinel_ports[0], servers.replicas[0].port, servers.primary.port
        _one_line(
            _run(_env(BOT_TOKEN="1:x", REDIS_URL=f"redis://127.0.0.1:{sentinel}/0")),
            "Redis",
            "Sentinel",
            "redis+sentinel://",
        )
        _one_line(
            _run(_env(BOT_TOKEN="1:x", REDIS_URL=f"redis://127.0.0.1:{replica}/0")), "Redis", "replica", str(primary)
        )
        _one_line(
            _run(_env(BOT_TOKEN="1:x", REDIS_URL=f"redis+sentinel://127.0.0.1:{primary}/cheat")),
            "Redis",
            "not a Redis Sentinel",
        )
        _one_line(
            _run(_env(BOT_TOKEN="1:x", REDIS_URL=f"redis-sentinel://127.0.0.1:{sentinel}/cheat")),
            "Redis",
            "redis+sentinel://",
            "'redis-sentinel'",
        )
    finally:
        servers.stop()


def test_malformed_sentinel_url_exits_2_one_line():
    p = _run(_env(BOT_TOKEN="1:x", REDIS_URL="redis+sentinel://127.0.0.1:26379/"))
    _one_line(p, "Redis", "service")


def test_webhook_url_not_https_exits_2_one_line():
    p = _run(_env(BOT_TOKEN="1:x", WEBHOOK_URL="http://example.org/hook"))
    _one_line(p, "WEBHOOK_URL", "https")
    assert len(p.stderr.strip().splitlines()) == 1  # before anything is tried


async def test_memory_store_warns_and_starts(tmp_path):
    emu = BotAPIEmulator(group_window=6.0)
    await emu.start()
    log = tmp_path / "bot.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tgbot"],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=_env(BOT_TOKEN=emu.token, TELEGRAM_BASE_URL=emu.base_url, PYTHONUNBUFFERED="1"),
        )
    try:
        # it took the lease of the embedded store: the take-over registers the commands (the
        # emulator records a getUpdates only when its long poll of 10 s ends: not waited for)
        await emu.wait_call("setMyCommands", timeout=30)
        assert proc.poll() is None
        text = log.read_text()
        assert "REDIS_URL is not set" in text and "WARNING" in text
        port = re.search(r"listening on 127\.0\.0\.1:(\d+) \(/healthz, /readyz, /metrics\)", text)
        assert port, text
        base = f"http://127.0.0.1:{port.group(1)}"
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/healthz") as r:
                health = await r.json()
            async with http.get(f"{base}/readyz") as ready:
                assert ready.status == 200
            for _ in range(300):  # the take-over goes on after setMyCommands
                async with http.get(f"{base}/metrics") as scraped:
                    exported = await scraped.text()
                if "cheat_process_active 1.0" in exported:
                    break
                await asyncio.sleep(0.1)
        assert r.status == 200 and health["role"] == "active" and health["epoch"] > 0, health
        assert health["bot"] == "@cheat_test_bot" and health["redis"] == "ok" and health["version"], health
        assert "cheat_process_active 1.0" in exported and "cheat_take_overs_total 1.0" in exported
        assert 'mode="polling"' in exported and 'store="memory"' in exported
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        await emu.stop()
    assert emu.violations == []


@pytest.mark.parametrize(
    "given",
    ["http://127.0.0.1:8081", "http://127.0.0.1:8081/", "http://127.0.0.1:8081/bot", "http://127.0.0.1:8081/bot/"],
)
def test_the_bot_api_base_ends_in_bot(given):
    from tgbot.settings import Settings

    settings = Settings(BOT_TOKEN="1:x", TELEGRAM_BASE_URL=given)
    assert settings.telegram_base_url == "http://127.0.0.1:8081/bot"
    assert settings.base_file_url == "http://127.0.0.1:8081/file/bot"


def test_a_bot_api_base_that_is_no_url_exits_2_one_line():
    p = _run(_env(BOT_TOKEN="1:x", TELEGRAM_BASE_URL="127.0.0.1:8081"))
    _one_line(p, "TELEGRAM_BASE_URL")
    assert "1:x" not in p.stderr


async def test_help_lists_every_setting_and_touches_nothing():
    from tgbot.settings import Settings

    emu = BotAPIEmulator()
    await emu.start()
    try:
        # a production environment loaded: --help must not start a second bot
        for env in (_env(BOT_TOKEN=emu.token, TELEGRAM_BASE_URL=emu.base_url), _env()):
            p = subprocess.run(
                [sys.executable, "-m", "tgbot", "--help"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=30
            )
            assert p.returncode == 0 and p.stderr == "", p.stderr
            for field in Settings.model_fields.values():
                assert f"  {field.validation_alias}  " in p.stdout and field.description
                default = str(field.default) if field.default != "" else "unset"
                assert default in p.stdout, field.validation_alias
        version = subprocess.run(
            [sys.executable, "-m", "tgbot", "--version"], cwd=ROOT, env=_env(), capture_output=True, text=True
        )
        assert version.returncode == 0 and re.fullmatch(r"cheat-bot \S+\n", version.stdout), version
        assert emu.calls == []
    finally:
        await emu.stop()


async def test_listen_addresses_are_checked_before_any_connection():
    emu = BotAPIEmulator()
    await emu.start()
    taken = socket.create_server(("127.0.0.1", 0))
    try:
        port = free_port()
        base = {"BOT_TOKEN": emu.token, "TELEGRAM_BASE_URL": emu.base_url, "REDIS_URL": f"redis://127.0.0.1:{port}/0"}
        p = _run(_env(**base, HTTP_LISTEN="127.0.0.1:99999"))
        _one_line(p, "HTTP_LISTEN", "99999")
        p = _run(_env(**base, HTTP_LISTEN=f"127.0.0.1:{taken.getsockname()[1]}"))
        _one_line(p, "HTTP_LISTEN", str(taken.getsockname()[1]))
        p = _run(_env(**base, WEBHOOK_URL="https://bot.example/hook", WEBHOOK_LISTEN="0.0.0.0:65536"))
        _one_line(p, "WEBHOOK_LISTEN", "65536")
        assert emu.calls == []
    finally:
        taken.close()
        await emu.stop()


async def test_a_base_url_that_is_no_bot_api_is_not_called_a_wrong_token():
    emu = BotAPIEmulator()
    await emu.start()
    try:
        # (in a thread: the emulator answers on this loop)
        p = await asyncio.to_thread(
            _run, _env(BOT_TOKEN=emu.token, TELEGRAM_BASE_URL=emu.base_url.removesuffix("/bot") + "/api/")
        )
        _one_line(p, "TELEGRAM_BASE_URL", "not a Bot API", "404")
        assert "rejected" not in p.stderr
        p = await asyncio.to_thread(_run, _env(BOT_TOKEN=emu.token + "x", TELEGRAM_BASE_URL=emu.base_url))
        _one_line(p, "rejected BOT_TOKEN")
    finally:
        await emu.stop()


def test_a_redis_that_wants_a_password_says_so():
    server = RedisServer(extra=["--requirepass", "pa55word"])
    try:
        p = _run(_env(BOT_TOKEN="1:x", REDIS_URL=server.url))
        _one_line(p, "REDIS_URL", "wants a password")
        p = _run(_env(BOT_TOKEN="1:x", REDIS_URL=server.url.replace("redis://", "redis://:wrong@")))
        _one_line(p, "REDIS_URL", "refused")
        assert "wrong" not in p.stderr
    finally:
        server.stop()


def test_a_missing_or_empty_catalog_ends_the_start(tmp_path):
    # a copy of the package whose locales/ lacks French and has an empty Russian catalog
    shutil.copytree(ROOT / "tgbot", tmp_path / "tgbot")
    shutil.copytree(ROOT / "core", tmp_path / "core")
    shutil.copytree(ROOT / "locales", tmp_path / "locales")
    shutil.rmtree(tmp_path / "locales" / "fr")
    p = _run_in(tmp_path, _env(BOT_TOKEN="1:x"))
    _one_line(p, "'fr' catalog", "reinstall")
    assert len(p.stderr.strip().splitlines()) == 1
    shutil.copytree(ROOT / "locales" / "fr", tmp_path / "locales" / "fr")
    (tmp_path / "locales" / "ru" / "LC_MESSAGES" / "cheat.po").write_text('msgid ""\nmsgstr ""\n')
    _one_line(_run_in(tmp_path, _env(BOT_TOKEN="1:x")), "'ru' catalog", "no translated message")


def _run_in(folder: Path, env: dict) -> subprocess.CompletedProcess:
    """``python -m tgbot`` of the copy in ``folder`` (before the installed one on the path)."""
    env = env | {"PYTHONPATH": str(folder)}
    return subprocess.run(
        [sys.executable, "-m", "tgbot"], cwd=folder, env=env, capture_output=True, text=True, timeout=30
    )
