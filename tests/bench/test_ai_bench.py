"""Decision time of the AI players (issue 30: ``search`` at most 20 ms mean, 50 ms p99 on one
core, including rebuilding its beliefs from the public history).

The decision points come from fixed seeded games (``search`` against three ``counting``, both
variants); each decision is timed alone, from the view and the events so far to the action.
``python -m pytest tests/bench/test_ai_bench.py --benchmark-enable -s -n 0`` prints the figures
over every decision point; in the normal run a few points are timed and nothing is asserted on
time (timed tests would be flaky).
"""

from __future__ import annotations

import random
import statistics
import time

import pytest

from core import apply, deal, from_deal, view
from core.ai import decision_rng, make_player
from core.events import Event

GAMES = 12  # per variant
SEATS = ("search", "counting", "counting", "counting")  # rotated by one seat each game


def decision_points(variant: str, games: int) -> list[tuple]:
    """``(seed, seat, action number, view, history)`` of every ``search`` decision."""
    points = []
    for g in range(games):
        seed = 40_000 + g
        state = from_deal(variant, deal(4, random.Random(seed)))
        names = [SEATS[(i - g) % 4] for i in range(4)]
        history: list[Event] = []
        n = 0
        while (seat := state.current) is not None:
            v = view(state, seat)
            if names[seat] == "search":
                points.append((seed, seat, n, v, tuple(history)))
            action = make_player(names[seat], seat, decision_rng(seed, seat, n)).act(v, history)
            state, events = apply(state, seat, action)
            history += events
            n += 1
    return points


def time_decisions(name: str, points: list[tuple]) -> list[float]:
    """Seconds each decision of ``name`` takes at ``points``."""
    out = []
    for seed, seat, n, v, history in points:
        t = time.perf_counter()
        make_player(name, seat, decision_rng(seed, seat, n)).act(v, history)
        out.append(time.perf_counter() - t)
    return out


@pytest.mark.parametrize("name", ["counting", "search"])
def test_bench_decision_time(benchmark, request, name):
    enabled = not request.config.getoption("benchmark_disable")
    points = [p for variant in ("russian", "classic") for p in decision_points(variant, GAMES if enabled else 1)]
    times = benchmark.pedantic(time_decisions, args=(name, points), rounds=1, iterations=1)
    ms = sorted(t * 1000 for t in times)
    mean, p99 = statistics.fmean(ms), ms[min(len(ms) - 1, int(0.99 * len(ms)))]
    benchmark.extra_info.update(
        decisions=len(ms), mean_ms=round(mean, 2), p99_ms=round(p99, 2), max_ms=round(ms[-1], 2)
    )
    print(f"\n{name}: {len(ms)} decisions, mean {mean:.2f} ms, p99 {p99:.2f} ms, max {ms[-1]:.2f} ms")
    assert len(ms) > 0
