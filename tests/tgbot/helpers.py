"""Shared helpers for tests/tgbot: tables in every phase, driven by core.ai players."""

from __future__ import annotations

import random
from dataclasses import replace

import core
import core.ai
from tgbot.game import play
from tgbot.game.lobby import join, open_lobby, set_variant, start
from tgbot.game.table import Change, Seat, Status, Table

NAMES = ["Аня", "Борис", "Вера", "Глеб", "Даша", "Егор"]


def lobby(
    n: int = 0,
    gid: str = "G1",
    creator: int = 1,
    now: float = 1000.0,
    timeout: float = 900.0,
    thread: int | None = None,
) -> Table:
    t = open_lobby(gid, -100, thread, creator, "Клуб", now, timeout)
    for i in range(n):
        t = join(t, Seat(creator + i, NAMES[i % 6]), now, timeout).table
    return t


def started(n: int = 4, gid: str = "G1", seed: int = 5, variant: str = "russian") -> tuple[Table, list[str]]:
    t = lobby(n, gid)
    if variant != "russian":
        t = set_variant(t, 1, variant, False, 1000.0, 900.0).table
    ch = start(t, 1, False, seed)
    return ch.table, ch.deal  # type: ignore[return-value]


def ai_step(table: Table, players: list) -> Change:
    """One action by the current player's AI, through play.act."""
    assert table.state is not None
    seat = table.state.current
    action = players[seat].act(core.view(table.state, seat))
    ch = play.act(table, table.seats[seat].user_id, table.action_count, action)
    return ch


def ai_players(n: int, seed: int, strategy: str = "counting") -> list:
    rng = random.Random(seed)
    return [core.ai.make_player(strategy, i, rng) for i in range(n)]


def play_through(table: Table, players: list, max_steps: int = 5000):
    """Yield (table, change) after each action until the game ends."""
    for _ in range(max_steps):
        if table.status is not Status.PLAYING:
            return
        before = table
        ch = ai_step(table, players)
        table = ch.table
        # observers: feed every AI its view (the AIs track the game)
        assert table.state is not None
        yield before, ch
    raise AssertionError("game did not end")


def at_cap(table: Table) -> Table:
    """The table with the engine state moved to 299 plays in PLAYING phase (the next play
    triggers the cap check)."""
    assert table.state is not None
    d = table.state.to_dict()
    d["plays"] = core.PLAY_CAP - 1
    return replace(table, state=core.GameState.from_dict(d))


async def play_on(store, gid: str, steps: int | None = None) -> None:
    """Play game ``gid`` on through ``store`` (AI choices for every seat, the transaction path
    a second bot process would take), ``steps`` actions or to the end."""
    t = await store.load(gid)
    players = ai_players(len(t.seats), 7)
    done = 0
    while t.status is Status.PLAYING and (steps is None or done < steps):
        seat = t.state.current
        action = players[seat].act(core.view(t.state, seat))
        await store.transact(gid, lambda cur: play.act(cur, cur.seats[seat].user_id, cur.action_count, action))
        t = await store.load(gid)
        done += 1


class as_update:  # noqa: N801 (reads as a function: ``as_update(store, mark).transact(...)``)
    """``store``'s transactions as one delivery of an update (``mark``, as a handler's context)."""

    def __init__(self, store, mark) -> None:
        self.store, self.mark = store, mark

    async def transact(self, game_id, fn):
        return await self.store.transact(game_id, fn, self.mark)

    async def create(self, table):
        return await self.store.create(table, self.mark)


class Fenced:
    """A store's fence at a fixed ``epoch`` (another active process's commits)."""

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch

    async def active(self) -> bool:
        return True
