"""``python -m tgbot``: start-up failures are one clear line; the in-memory store starts."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.botapi import BotAPIEmulator
from tests.redis_server import RedisServer, free_port

ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("BOT_TOKEN", "REDIS_URL", "TELEGRAM_BASE_URL", "WEBHOOK_URL")}
    env.update(extra)
    return env


def _run(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tgbot"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)


def test_no_token_exits_2_one_line():
    p = _run(_env())
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "BOT_TOKEN" in lines[0]
    assert "Traceback" not in p.stderr + p.stdout


def test_unreachable_redis_exits_2_one_line():
    port = free_port()
    p = _run(_env(BOT_TOKEN="1:x", REDIS_URL=f"redis://127.0.0.1:{port}/0"))
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Redis" in lines[0] and str(port) in lines[0], p.stderr
    assert "Traceback" not in p.stderr + p.stdout


def _one_line(p: subprocess.CompletedProcess, *words: str) -> None:
    assert p.returncode == 2, p.stderr[-2000:]
    lines = p.stderr.strip().splitlines()
    assert lines and all(w in lines[-1] for w in words), p.stderr[-2000:]
    assert [x for x in lines if not x.startswith(("20", "cheat-bot:"))] == [], p.stderr[-2000:]  # log lines and the one line
    assert "Traceback" not in p.stderr + p.stdout


def test_cluster_node_with_unserved_slots_exits_2_one_line():
    # a node in cluster mode that no cluster was formed with: no slot is served
    node = RedisServer(extra=["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port", str(free_port())])
    try:
        _one_line(_run(_env(BOT_TOKEN="1:x", REDIS_URL=node.url)), "cheat-bot:", "Redis", str(node.port))
    finally:
        node.stop()


def test_webhook_url_not_https_exits_2_one_line():
    p = _run(_env(BOT_TOKEN="1:x", WEBHOOK_URL="http://example.org/hook"))
    _one_line(p, "cheat-bot:", "WEBHOOK_URL", "https")
    assert len(p.stderr.strip().splitlines()) == 1  # before anything is tried


async def test_memory_store_warns_and_starts(tmp_path):
    emu = BotAPIEmulator(group_window=6.0)
    await emu.start()
    log = tmp_path / "bot.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tgbot"], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                env=_env(BOT_TOKEN=emu.token, TELEGRAM_BASE_URL=emu.base_url, PYTHONUNBUFFERED="1"))
    try:
        await emu.wait_call("getUpdates", timeout=20)
        await emu.wait_call("setMyCommands", timeout=10)
        assert proc.poll() is None
        text = log.read_text()
        assert "REDIS_URL is not set" in text and "WARNING" in text
        assert "ready" in text or await asyncio.sleep(0.5) is None
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        await emu.stop()
    assert emu.violations == []
