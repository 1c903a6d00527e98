"""Engine benchmarks (pytest-benchmark): actions applied per second over a fixed set of
pre-recorded random games, with and without the JSON round trip of the state after each action,
and the serialized state size (max and mean bytes).

Run with ``python -m pytest tests/bench --benchmark-enable -s`` for the figures; in the normal run
(``--benchmark-disable`` in addopts) each benchmark body runs once and the test passes quickly.
"""

from __future__ import annotations

import time

import pytest

from core import GameState, apply

from tests.core.engine_helpers import play_game

GAMES = 40  # per variant; fixed seeds, so every run replays the same ~5,000 actions


@pytest.fixture(scope="module")
def recorded():
    """(initial state, [(seat, action), ...]) for a fixed set of seeded random games."""
    games = []
    for variant, base in (("russian", 0), ("classic", 500_000)):
        for seed in range(base, base + GAMES):
            g = play_game(seed, variant)
            games.append((g.initial, g.actions))
    return games


def _count(games) -> int:
    return sum(len(actions) for _, actions in games)


def replay_all(games) -> GameState:
    last = None
    for state, actions in games:
        for seat, action in actions:
            state, _ = apply(state, seat, action)
        last = state
    return last


def replay_all_json(games) -> GameState:
    last = None
    for state, actions in games:
        for seat, action in actions:
            state, _ = apply(GameState.from_json(state.to_json()), seat, action)
        last = state
    return last


def _rate(benchmark, fn, games) -> float:
    """Actions per second: from the benchmark's stats when enabled, else one timed run."""
    n = _count(games)
    t = time.perf_counter()
    result = benchmark(fn, games)
    elapsed = time.perf_counter() - t
    assert result is not None and result.result is not None
    stats = getattr(benchmark, "stats", None)
    if stats is not None:
        elapsed = stats.stats.mean
    rate = n / elapsed
    benchmark.extra_info["actions"] = n
    benchmark.extra_info["actions_per_second"] = round(rate)
    return rate


def test_bench_apply(benchmark, recorded):
    rate = _rate(benchmark, replay_all, recorded)
    print(f"\napply: {_count(recorded)} actions, {rate:,.0f} actions/s")
    assert rate > 0


def test_bench_apply_json_round_trip(benchmark, recorded):
    rate = _rate(benchmark, replay_all_json, recorded)
    print(f"\napply + JSON round trip: {_count(recorded)} actions, {rate:,.0f} actions/s")
    assert rate > 0


def test_bench_serialized_size(benchmark, recorded):
    states = []
    for state, actions in recorded:
        states.append(state)
        for seat, action in actions:
            state, _ = apply(state, seat, action)
            states.append(state)

    def encode_all():
        return [len(s.to_json().encode()) for s in states]

    sizes = benchmark(encode_all)
    mx, mean = max(sizes), sum(sizes) / len(sizes)
    benchmark.extra_info.update(states=len(sizes), max_bytes=mx, mean_bytes=round(mean, 1))
    print(f"\nserialized state: {len(sizes)} states, max {mx} B, mean {mean:.1f} B")
    assert mx < 2048
