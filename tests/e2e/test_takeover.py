"""One active process per bot token, standbys, a fencing lease (issue 14, "What must be true" 2).

Several real bot processes share one token and one Redis database; the Bot API emulator plays
Telegram and simulated players play a four-player game through it (:class:`harness.Table`):

- long polling, two processes: the active one is ``kill -9``ed at random moments (seeded), and
  restarted once the other took over (it stands by);
- webhook, three processes behind a plain round-robin balancer (the emulator delivers to each
  in turn and, when one is dead, retries on the next): the same, plus the webhook's secret
  (one per bot, kept in Redis) and a forged update refused;
- a paused (SIGSTOP) leader, past its lease: the other takes over and plays on; when the paused
  one resumes it steps down and applies nothing.

What each asserts (:func:`check_game`): never two processes active at once (every /healthz
sweep); exactly one active after every take-over; the game finishes with 52 cards on the board;
every tap answered, except where Telegram refused the answer (a tap re-processed after a
take-over, already answered or too old); the game's stored action log replays to its stored
state, each of its actions explained by one tap of that turn or by one deadline, and as many
actions as taps answered "played" plus deadline moves (short of at most one per take-over: an
answer or a log line the killed process never got out); no deadline fired twice; the group saw
each showdown and belief once, in order; no Bot API error but those a take-over explains (a late
answer refused, the killed poller's 409, one repeated call per message) and, for now, 429s.

Take-over times (kill -> another process says active on /healthz) are printed, not asserted:
``python -m pytest tests/e2e/test_takeover.py -n 0 -q -s``.
"""

from __future__ import annotations

import asyncio
import collections
import random
import re
import statistics
import time
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest
from redis.asyncio import Redis

import core
from core.record import action_from_dict, action_to_dict
from tests.e2e.harness import BotProcess, Table, active_of, redis_key, running
from tests.e2e.test_full_game import open_table
from tests.e2e.test_restart import board_cards
from tests.fakes.botapi import QUERY_TOO_OLD, BotAPIEmulator
from tests.redis_server import free_port
from tgbot.codec import CallbackDataError, decode
from tgbot.game.table import AnnouncementKind
from tgbot.i18n import LANGUAGES
from tgbot.owner.store import Store
from tgbot.process.lease import LEASE_SECONDS, MARGIN
from tgbot.render.announcements import announcement
from tgbot.render.answers import answer

pytestmark = pytest.mark.e2e

#: The Redis database of these tests on the private redis-server (every e2e file has its own;
#: the tests of this file run one after another and each empties it first).
DB = 0
#: Seconds of a turn: short enough that a take-over (about the lease's 5 s) lets reminders and
#: automatic moves fall due, so deadlines are fired by the process that takes over.
TURN = "6"
ENV = {"TURN_TIMEOUT": TURN, "AI_PAUSE_MIN": "0.3", "AI_PAUSE_MAX": "0.6"}
_FIRED = re.compile(r"game=(\S+) chat=\S+ deadline fired: (\S+) \((\S+) due ([\d.]+), turn (\d+)\)")
#: A tap's answer when its move was applied (any language).
APPLIED = {answer(code, lang) for code in ("played", "challenged", "believed") for lang in LANGUAGES}
#: Lines a process logs when it stops being the active one.
STEPPED_DOWN = ("no longer active", "lease lost", "lease not renewed", "fenced")


#: What the test did when (wall clock, as the emulator's records): failure messages show it.
TIMELINE: list[tuple[float, str]] = []


def mark(what: str) -> None:
    TIMELINE.append((time.time(), what))


def takeover_starts() -> list[float]:
    """When each take-over of the test began: a kill or a pause of the active process."""
    return [t for t, what in TIMELINE if what.startswith(("killed", "paused"))]


def timeline(since: float = 0.0) -> str:
    return "\n".join(f"{t:.3f} {what}" for t, what in TIMELINE if t >= since)


class Watch:
    """Sweeps every process's /healthz at once, again and again: records the active one of each
    sweep and every sweep in which two processes said active (a sweep shorter than the lease's
    margin: longer ones cannot tell two holders from a hand-over between their answers)."""

    def __init__(self, bots: list[BotProcess]) -> None:
        self.bots = bots
        self.sweeps = 0
        self.doubles: list[tuple[list, float]] = []
        self.epochs: list[int] = []
        self._task: asyncio.Task | None = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            start = loop.time()
            roles = await asyncio.gather(*(b.health() for b in self.bots))
            span = loop.time() - start
            active = [r for r in roles if r is not None and r.get("role") == "active"]
            self.sweeps += 1
            if len(active) > 1 and span < MARGIN:
                self.doubles.append((roles, span))
            for r in active:
                if not self.epochs or self.epochs[-1] != r["epoch"]:
                    self.epochs.append(r["epoch"])
            await asyncio.sleep(0.2)

    def __enter__(self) -> Watch:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def wait_active(bots: list[BotProcess], timeout: float = 30.0) -> BotProcess:
    """The first of ``bots`` to say active on /healthz (polled every 50 ms)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        roles = await asyncio.gather(*(b.health() for b in bots))
        for b, r in zip(bots, roles):
            if r is not None and r.get("role") == "active":
                return b
        await asyncio.sleep(0.05)
    raise AssertionError(f"none of {len(bots)} process(es) became active in {timeout} s")


async def wait_standby(bot: BotProcess, timeout: float = 30.0) -> dict:
    """/healthz of ``bot`` once it answers; it must say standby."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        r = await bot.health()
        if r is not None:
            assert r["role"] == "standby", r
            return r
        await asyncio.sleep(0.1)
    raise AssertionError(f"the restarted process did not answer /healthz in {timeout} s")


async def kill_active(
    bots: list[BotProcess], rng: random.Random, taken_over: Callable[[], None] = lambda: None
) -> float:
    """``kill -9`` the active process; once another says active (``taken_over()`` is called
    then), restart the killed one (it must stand by) and check exactly one is active. Returns
    the take-over time (s)."""
    loop = asyncio.get_running_loop()
    victim = await active_of(bots)
    before = (await victim.health() or {}).get("epoch", 0)
    start = loop.time()
    victim.kill9()
    mark(f"killed bot{bots.index(victim)}")
    successor = await wait_active([b for b in bots if b is not victim])
    took = loop.time() - start
    mark(f"bot{bots.index(successor)} active")
    taken_over()
    after = (await successor.health() or {}).get("epoch", 0)
    assert after > before, (before, after)
    await asyncio.sleep(rng.uniform(0, 1.0))
    victim.start()
    await wait_standby(victim)
    mark(f"bot{bots.index(victim)} restarted, standing by")
    assert await active_of(bots) is successor
    return took


async def play(
    emu: BotAPIEmulator, table: Table, bots: list[BotProcess], rng: random.Random, kills: int
) -> list[float]:
    """Play ``table`` to its end while ``kills`` times, at random taps, the active process is
    killed and restarted (:func:`kill_active`). Returns the take-over times."""
    times: list[float] = []
    first, last = 5, 50  # taps (picks included): the four-player games here take 90 to 300
    marks = sorted(rng.sample(range(first, last), kills))
    # With two processes the next kill needs the killed one back: the players wait while it
    # restarts (a game may otherwise end first: polling play is quick), not during the take-over.
    may_play = asyncio.Event()
    may_play.set()

    async def killer() -> None:
        loop = asyncio.get_running_loop()
        for at_tap in marks:
            await emu.wait_for(lambda: table.taps >= at_tap or table.finished(), timeout=300)
            await asyncio.sleep(rng.uniform(0, 0.6))  # the tap just sent is on its way or in work
            if table.finished():
                return
            t0, at = loop.time(), table.taps
            try:
                times.append(await kill_active(bots, rng, may_play.clear if len(bots) == 2 else lambda: None))
            finally:
                may_play.set()
            print(
                f"take-over {len(times)}: {times[-1]:.2f} s (kill at tap {at}; the killed one restarted and standing by after {loop.time() - t0:.1f} s)"
            )

    killing = asyncio.create_task(killer())
    try:
        while table.taps < 3000 and not killing.done():
            await may_play.wait()
            if not await table.step(timeout=40):
                break
        if killing.done():
            killing.result()  # (raises what the killer met)
            while table.taps < 3000:
                if not await table.step(timeout=40):
                    break
        await emu.wait_for(table.finished, timeout=60)
        await asyncio.wait_for(killing, 60)
    finally:
        killing.cancel()
    return times


def repeated_calls(emu: BotAPIEmulator, takeovers: list[float]) -> list[dict]:
    """Telegram's refusals of a call the bot repeated (an edit to what the message already shows,
    a delete of a message already gone) beyond what take-overs allow: a process that takes over
    repeats at most one call per message, the one its predecessor made without recording it
    (DESIGN.md; the bot takes either answer as success). ``takeovers``: when each began (wall
    clock): a repeat counts against the last take-over begun before it."""
    out, seen = [], set()
    for e in emu.errors:
        if not (
            (
                e["method"] in ("editMessageText", "editMessageReplyMarkup")
                and "message is not modified" in e["description"]
            )
            or (e["method"] == "deleteMessage" and "message to delete not found" in e["description"])
        ):
            continue
        era = sum(1 for t in takeovers if t <= e["time"])
        key = (era, e["params"].get("chat_id"), e["params"].get("message_id"))
        if era == 0 or key in seen:
            out.append(e)
        seen.add(key)
    return out


def announcements(
    emu: BotAPIEmulator, table: Table, stored_table: Any, deal: list[str], log: list[dict]
) -> tuple[list[str], list[str]]:
    """The showdowns and beliefs the group should see, in order (from the stored record), and
    those of them it was sent, in the order sent."""
    from tgbot.game.play import event_to_dict

    state = core.from_deal(stored_table.variant, [core.Hand.from_str(h) for h in deal])
    expected = []
    for i, raw in enumerate(log):
        seat, action = action_from_dict(raw, state.players, i)
        state, events = core.apply(state, seat, action)
        for ev in events:
            if isinstance(ev, (core.ChallengeResolved, core.Believed)):
                kind = (
                    AnnouncementKind.BELIEVED if isinstance(ev, core.Believed) else AnnouncementKind.CHALLENGE_RESOLVED
                )
                expected.append(announcement(stored_table, {"kind": kind, **event_to_dict(ev)}))
    wanted = set(expected)
    sent = []
    for call in emu.calls:
        if call["method"] == "sendMessage" and call["ok"] and call["chat_id"] == table.group.id:
            # announcements that waited for the group go out as one message, a paragraph each
            shown = [part for part in call["params"].get("text", "").split("\n\n") if part in wanted]
            if shown:
                sent.append(shown)
    return expected, sent


def in_order_once(expected: list[str], sent: list[list[str]]) -> int:
    """Check the announcements of the messages ``sent`` are ``expected`` in order, each sent
    once, except that a message may begin with all of the one before it (a take-over sends
    the message in flight again, with what waited since); returns the number of repeated messages."""
    i = repeats = 0
    before: list[str] = []
    for j, message in enumerate(sent):
        if before and message[: len(before)] == before:
            repeats += 1
            message = message[len(before) :]
        for text in message:
            if i < len(expected) and text == expected[i]:
                i += 1
            else:
                raise AssertionError(
                    f"announcement in message {j} out of order or unknown: {text!r}; expected {expected[i] if i < len(expected) else None!r}"
                )
        before = sent[j]
    assert i == len(expected), f"{len(expected) - i} announcement(s) never sent, the first: {expected[i]!r}"
    return repeats


async def check_game(
    emu: BotAPIEmulator, table: Table, bots: list[BotProcess], url: str, takeovers: list[float]
) -> None:
    """The checks of the module docstring, on a finished game. ``takeovers``: when each take-over
    began (a kill or a pause; wall clock): each may cost an answer or a log line, and repeat a
    call per message."""
    lost = len(takeovers)
    group = table.group
    assert table.finished()
    assert board_cards(emu, group.id) == 52
    assert len([m for m in emu.chat_messages(group.id) if m.text and "Игра окончена" in m.text]) == 1

    # every tap was answered, or Telegram refused the answer (re-processed after a take-over)
    taps = {
        u["callback_query"]["id"]: (uid, u["callback_query"]) for uid, u in emu.updates.items() if "callback_query" in u
    }

    def tried() -> set[str]:
        return {c["params"].get("callback_query_id") for c in emu.calls if c["method"] == "answerCallbackQuery"}

    await emu.wait_for(lambda: taps.keys() <= tried(), timeout=30)
    for qid in taps:
        if qid in emu.answers:
            continue
        refused = [
            e
            for e in emu.errors
            if e["method"] == "answerCallbackQuery" and e["params"].get("callback_query_id") == qid
        ]
        assert refused and all(e["description"] == QUERY_TOO_OLD for e in refused), (qid, refused)

    # Bot API errors: none but those a take-over brings
    errors = [
        e
        for e in emu.errors
        # a tap re-processed after a take-over: Telegram refuses a second (or late) answer
        if not (e["method"] == "answerCallbackQuery" and e["description"] == QUERY_TOO_OLD)
        # a killed process's long poll is still open: the next one's first getUpdates may meet 409
        and not (e["method"] == "getUpdates" and e["error_code"] == 409)
        # a call repeated by a take-over, at most one per message (see repeated_calls)
        and not ("message is not modified" in e["description"] or "message to delete not found" in e["description"])
    ]
    errors += repeated_calls(emu, takeovers)
    errors.sort(key=lambda e: e["time"])
    assert errors == [], (
        "\n".join(f"{e['time']:.3f} {e['method']} {e['params'].get('chat_id')}: {e['description']}" for e in errors)
        + "\n"
        + timeline()
        + "\n"
        + "\n\n".join(calls_before(emu, e) for e in errors)
    )
    assert emu.violations == []

    # the stored game: its log replays to its state, every action explained once
    bot_id = emu.token.partition(":")[0]
    redis = Redis.from_url(url, decode_responses=True)
    try:
        store = Store(redis, prefix=f"cheat:{bot_id}")
        gids = {decode(q["data"]).game_id for _, q in taps.values() if q["data"][0] in "pcb"}
        assert len(gids) == 1, gids
        gid = gids.pop()
        stored = await store.load(gid)
        assert stored is not None and stored.state is not None and stored.state.result is not None
        deal, log = await store.records.record(gid)
        applied_marks = await redis.zrange(store.keys.applied(gid), 0, -1)
    finally:
        await redis.aclose()
    assert deal is not None and len(log) == stored.action_count
    state = core.from_deal(stored.variant, [core.Hand.from_str(h) for h in deal])

    fired = [m.groups() for b in bots for m in _FIRED.finditer(b.log()) if m.group(1) == gid]
    repeated = [k for k, n in collections.Counter((kind, int(turn)) for _, _, kind, _, turn in fired).items() if n > 1]
    assert repeated == [], repeated  # no deadline fired twice
    deadline_moves = {int(turn): reply for _, reply, _, _, turn in fired if reply in ("auto", "ai")}

    def norm(d: dict) -> dict:
        return {**d, "play": sorted(d["play"])} if "play" in d else d

    by_turn: dict[int, list[tuple[str, dict, dict]]] = collections.defaultdict(
        list
    )  # turn -> (qid, tap's action, answer)
    for qid, (uid, q) in taps.items():
        try:
            tap = decode(q["data"])
        except CallbackDataError:
            continue
        if tap.game_id != gid or tap.op not in ("play", "challenge", "believe"):
            continue
        seat = stored.seat_of(q["from"]["id"])
        assert seat is not None
        if tap.op == "play":
            action: core.Action = core.Play(core.Hand.from_str(tap.cards).ranks(), core.Rank.from_str(tap.claim))
        else:
            action = core.Challenge() if tap.op == "challenge" else core.Believe()
        by_turn[tap.action_count].append((qid, norm(action_to_dict(seat, action)), emu.answers.get(qid) or {}))

    answered_applied = 0
    for i, raw in enumerate(log):
        seat, action = action_from_dict(raw, state.players, i)
        entry = norm(raw)
        from_taps = [t for t in by_turn.get(i, []) if t[1] == entry]
        sources = (["tap"] if from_taps else []) + (["deadline"] if i in deadline_moves else [])
        if not sources:
            # a deadline's move committed by a process killed before it logged the line
            v = core.view(state, seat)
            strategy = stored.seats[seat].strategy
            candidates = [
                core.auto.automatic_move(v),
                core.ai.make_player(strategy, seat, random.Random(f"{stored.seed}:{i}")).act(v),
            ]
            if entry in [norm(action_to_dict(seat, c)) for c in candidates]:
                sources.append("deadline, not logged")
        assert sources, (i, raw, by_turn.get(i))
        # every tap answered "played" at this turn is this action, and no deadline moved instead
        said_applied = [t for t in by_turn.get(i, []) if t[2].get("text") in APPLIED]
        assert all(t[1] == entry for t in said_applied), (i, raw, said_applied)
        assert len(said_applied) <= 1, (i, said_applied)
        assert not (said_applied and i in deadline_moves), (i, said_applied, deadline_moves[i])
        answered_applied += len(said_applied)
        state, _ = core.apply(state, seat, action)
    assert state == stored.state
    # a tap answered "played" for a turn the log does not reach: applied nowhere
    beyond = [t for turn, ts in by_turn.items() if turn >= len(log) for t in ts if t[2].get("text") in APPLIED]
    assert beyond == []
    counted = answered_applied + len(deadline_moves)
    print(
        f"actions logged {len(log)}: taps answered as applied {answered_applied} + deadline moves {len(deadline_moves)}"
        f" (+ {len(log) - counted} whose answer or log line a take-over cost); deadlines fired {len(fired)}"
    )
    assert 0 <= len(log) - counted <= lost, (len(log), answered_applied, len(deadline_moves))

    # the group saw every showdown and belief once, in order (a take-over may repeat the one in flight)
    expected, sent = announcements(emu, table, stored, deal, log)
    repeats = in_order_once(expected, sent)
    assert repeats <= lost, (repeats, lost)

    # each commit records the update it applied, once: no update id twice among a game move's marks
    ids = collections.Counter(m.partition(".")[0] for m in applied_marks)
    move_updates = {str(uid) for uid, q in taps.values() if q["data"][0] in "pcb"}
    assert [u for u, n in ids.items() if n > 1 and u in move_updates] == []


async def post_when_listening(target: str, body: dict, headers: dict, timeout: float = 30.0) -> int:
    """POST ``body`` to ``target`` once it accepts connections (a process still starting does
    not listen yet); the HTTP status."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    async with aiohttp.ClientSession() as http:
        while True:
            try:
                async with http.post(target, json=body, headers=headers) as r:
                    return r.status
            except aiohttp.ClientConnectorError:
                if loop.time() > end:
                    raise
                await asyncio.sleep(0.1)


def calls_before(emu: BotAPIEmulator, error: dict, n: int = 8) -> str:
    """The last ``n`` calls to the chat of ``error`` up to it (a failure message's context)."""
    chat = error["params"].get("chat_id")
    calls = [c for c in emu.calls if c["chat_id"] == chat and c["time"] <= error["time"]][-n:]
    return "\n".join(
        f"{c['time']:.3f} {c['method']} {c['params'].get('message_id', '')} ok={c['ok']} "
        f"{str(c['params'].get('text', ''))[:60]!r} {[b.get('callback_data') for row in (c['params'].get('reply_markup') or {}).get('inline_keyboard', []) for b in row][:6]}"
        for c in calls
    )


def report(name: str, times: list[float]) -> None:
    if times:
        print(
            f"{name}: take-over times (s) {[round(t, 2) for t in times]}; min {min(times):.2f}, "
            f"median {statistics.median(times):.2f}, max {max(times):.2f}"
        )


@pytest.fixture(autouse=True)
def _timeline() -> None:
    TIMELINE.clear()


async def test_kill_nine_of_the_active_one_of_two_polling_processes(redis_server, tmp_path):
    seed = 21
    rng = random.Random(seed)
    async with running(redis_server, tmp_path, DB, processes=2, **ENV) as (emu, bots, url):
        with Watch(bots) as watch:
            await active_of(bots)
            group, users = await open_table(emu, 4, "russian", chat_id=-1021)
            table = Table(emu, group, users, random.Random(seed))
            times = await play(emu, table, bots, rng, kills=3)
            report("polling, 2 processes", times)
            assert len(times) == 3
            await check_game(emu, table, bots, url, takeover_starts())
            assert await active_of(bots) is not None
        assert watch.doubles == [], watch.doubles[:3]
        assert watch.epochs == sorted(watch.epochs) and len(watch.epochs) == len(times) + 1, watch.epochs


async def test_kill_nine_of_the_active_one_of_three_webhook_processes(redis_server, tmp_path):
    seed = 22
    rng = random.Random(seed)
    ports = [free_port() for _ in range(3)]
    each = [{"WEBHOOK_URL": "https://bot.example/hook", "WEBHOOK_LISTEN": f"127.0.0.1:{port}"} for port in ports]
    async with running(redis_server, tmp_path, DB, processes=3, each=each, **ENV) as (emu, bots, url):
        emu.webhook_targets = [f"http://127.0.0.1:{port}/hook" for port in ports]  # a plain round-robin balancer
        with Watch(bots) as watch:
            await active_of(bots)
            await emu.wait_for(lambda: emu.webhook.get("url"), timeout=30)
            secret = emu.webhook.get("secret_token")
            assert secret
            redis = Redis.from_url(url, decode_responses=True)
            bot_id = emu.token.partition(":")[0]
            try:
                assert await redis.get(redis_key(emu.token, f"{{b{bot_id}}}", "webhook_secret")) == secret
            finally:
                await redis.aclose()
            # a forged update (no secret, or a wrong one) is refused by every process
            forged = {
                "update_id": 999_999,
                "message": {"message_id": 1, "date": 0, "chat": {"id": 1, "type": "private"}, "text": "/start"},
            }
            for target in emu.webhook_targets:
                for headers in ({}, {"X-Telegram-Bot-Api-Secret-Token": secret + "x"}):
                    status = await post_when_listening(target, forged, headers)
                    assert status == 403, (target, headers, status)

            group, users = await open_table(emu, 4, "russian", chat_id=-1022)
            table = Table(emu, group, users, random.Random(seed))
            times = await play(emu, table, bots, rng, kills=3)
            report("webhook, 3 processes", times)
            assert len(times) == 3
            await check_game(emu, table, bots, url, takeover_starts())
            redis = Redis.from_url(url, decode_responses=True)
            try:  # the forged update was not stored (the updates received were)
                recent = await redis.zrange(redis_key(emu.token, f"{{b{bot_id}}}", "recent"), 0, -1)
                assert len(recent) == len(emu.updates) and "999999" not in recent
            finally:
                await redis.aclose()
        assert watch.doubles == [], watch.doubles[:3]
        assert watch.epochs == sorted(watch.epochs) and len(watch.epochs) == len(times) + 1, watch.epochs
        # every take-over set the webhook again, always with the one secret kept in Redis
        hooks = [c for c in emu.calls if c["method"] == "setWebhook" and c["ok"]]
        assert len(hooks) == len(times) + 1 and {c["params"].get("secret_token") for c in hooks} == {secret}
        # (a delivery to a dead process is tried again on the next one: counted, not asserted,
        # as the one tap in flight at a kill need not be sent to the killed process)
        failed = [d for d in emu.deliveries if not (isinstance(d[2], int) and 200 <= d[2] < 300)]
        print(
            f"webhook deliveries: {len(emu.deliveries)}, {len(failed)} of them failed and were tried again on the next process"
        )


async def test_a_paused_leader_is_fenced_and_steps_down(redis_server, tmp_path):
    seed = 23
    rng = random.Random(seed)
    async with running(redis_server, tmp_path, DB, processes=2, **ENV) as (emu, bots, url):
        with Watch(bots) as watch:
            await active_of(bots)
            group, users = await open_table(emu, 4, "russian", chat_id=-1023)
            table = Table(emu, group, users, random.Random(seed))
            for _ in range(rng.randrange(8, 25)):
                assert await table.step(timeout=40)
            loop = asyncio.get_running_loop()
            leader = await active_of(bots)
            other = next(b for b in bots if b is not leader)
            seen = len(leader.log())
            leader.pause()
            mark(f"paused bot{bots.index(leader)}")
            paused = loop.time()
            try:
                # the tap in flight waits for the take-over; then play on
                stepping = asyncio.create_task(table.step(timeout=40))
                assert await wait_active([other]) is other
                took = loop.time() - paused
                mark(f"bot{bots.index(other)} active")
                assert await stepping
                taps = table.taps
                while table.taps < taps + 8 or loop.time() < paused + LEASE_SECONDS + 2:
                    if not await table.step(timeout=40):
                        break  # (the game is over)
            finally:
                leader.resume()
                mark(f"resumed bot{bots.index(leader)}")
            print(f"paused leader: take-over after {took:.2f} s, resumed after {loop.time() - paused:.1f} s")
            # it steps down at once (its lease is gone) and says so
            await emu.wait_for(lambda: any(s in leader.log()[seen:] for s in STEPPED_DOWN), timeout=15)
            assert (await leader.health() or {}).get("role") == "standby"
            assert not _FIRED.search(leader.log()[seen:])  # its timers due meanwhile were fenced, not applied
            assert await active_of(bots) is other
            await play(emu, table, bots, rng, kills=0)
            await check_game(emu, table, bots, url, takeover_starts())
            assert (await leader.health() or {}).get("role") == "standby"
            assert not _FIRED.search(leader.log()[seen:])
        assert watch.doubles == [], watch.doubles[:3]
        assert watch.epochs == sorted(watch.epochs) and len(watch.epochs) == 2, watch.epochs
        print("the resumed leader's log after the pause:\n" + "\n".join(leader.log()[seen:].splitlines()[:15]))
