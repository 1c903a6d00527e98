"""The whole-bot benchmark (``python -m tests.bench.bot``) kept working on the single-writer
design: a small run in its own process (it patches redis-py and the store to count round trips)
that drives a :class:`tgbot.process.runner.Runner`, every tap through ``getUpdates`` and the durable
ingest (the bot's Redis Stream). Its counted figures — not its timings — are held to what holds
today: the game's own transaction is one compare-and-set (plus index writes when an index
moves; the table is kept in memory), at most 3 messages sent or edited per play, the state under
2 KB. Issue 15 sets the targets for the rest (at most 2 Redis round trips per tap on average):
the figures are printed, not asserted."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_small_run_reports_every_figure_and_meets_the_counted_targets():
    out = subprocess.run(
        [sys.executable, "-m", "tests.bench.bot", "--games", "2", "--serial", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    print(out)  # (pytest -s shows the figures)
    for figure in (
        "taps per second",
        "CPU µs per tap",
        "ratio bot/skeleton",
        "Redis round trips per tap",
        "Bot API calls per play",
        "Redis bytes per live game",
        "per action",
        "ingest's recent update ids",
        "peak RSS",
    ):
        assert figure in out, out
    trips = dict(
        (k, float(v))
        for k, v in re.findall(r"(\w+) ([\d.]+)", re.search(r"Redis round trips per tap: (.*)", out).group(1))
    )
    # every tap went through the durable ingest (stored, read back, acknowledged)
    assert trips["ingest"] > 0, out
    # the game's own transaction: one compare-and-set, no read (the table is kept in memory),
    # plus index writes when an index moves (a player seated, a game ended)
    per_tx = float(re.search(r"per transaction .*?: ([\d.]+) over", out).group(1))
    assert 1.0 <= per_tx < 1.5, out
    plays = re.search(r"play mean ([\d.]+) max (\d+)", out)
    assert plays and int(plays.group(2)) <= 3, out
    assert int(re.search(r"table JSON \(state\) bytes at the end of a game: (\d+)", out).group(1)) < 2048, out
