"""The playground killed outright (SIGKILL: no chance to stop its bot) leaves no bot polling on."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


@pytest.mark.skipif(sys.platform != "linux", reason="the bot's end is tied to the playground's by Linux's prctl")
async def test_the_bot_ends_when_the_playground_is_killed(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    for name in ("REDIS_URL", "HTTP_LISTEN", "BOT_TOKEN", "TELEGRAM_BASE_URL"):
        env.pop(name, None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "playground", cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    try:
        while not re.search(r"open http://\S+ in your browser", line := (await proc.stdout.readline()).decode()):
            assert line, "the playground ended before it was ready"
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        assert len(children) == 1  # the bot
        bot = os.pidfd_open(int(children[0]))
    finally:
        proc.kill()
        await proc.wait()
    ended = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(bot, ended.set)  # a pidfd turns readable when its process ends
    try:
        await asyncio.wait_for(ended.wait(), 60)
    finally:
        loop.remove_reader(bot)
        if not ended.is_set():
            signal.pidfd_send_signal(bot, signal.SIGKILL)
        os.close(bot)
