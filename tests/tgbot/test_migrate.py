"""Storage schemas 2 to 4 (tgbot/storage/migrate.py, the ``schema`` of Table.to_json): keys that
b5f3182 stored (tests/tgbot/data/b5f3182_keys.json, written by that code: see
make_b5f3182_fixture.py) move to the bot's prefix with type and TTL intact and their hash fields
renamed (schema 3), the statistics in one slot (schema 4), on fakeredis, a private redis-server and a private 3-primary Redis Cluster;
the store then loads the game as it was stored."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import fakeredis
import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from core.state import GameState
from tests.tgbot.data.keydump import dump_keys, load_keys, read_key
from tgbot.game.table import TABLE_SCHEMA, Status, Table
from tgbot.owner.store import Store
from tgbot.storage import migrate as mig, stats
from tgbot.storage.keys import Keys, bot_prefix

DB = 15  # a database of its own on the private redis-server
BOT = "123456"


def _marker(bot_id: str) -> str:
    """The key holding the bot's storage schema: ``cheat:<bot_id>:schema``."""
    return Keys(bot_prefix(bot_id)).schema()


OTHER = "999"  # another bot already on schema 2: its keys stay as they are
FIXTURE: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "b5f3182_keys.json").read_text(encoding="utf-8"))
OLD: dict[str, dict[str, Any]] = FIXTURE["keys"]
LIVE, DONE = FIXTURE["games"]["live"], FIXTURE["games"]["finished"]
FOREIGN: dict[str, dict[str, Any]] = {
    f"cheat:{OTHER}:{{gZz9_-Zz9}}:game": {"type": "hash", "pttl": -1, "value": {"v": "3", "t": "{}"}},
    f"cheat:{OTHER}:live": {"type": "set", "pttl": -1, "value": ["Zz9_-Zz9"]},
    f"cheat:{OTHER}:schema": {"type": "string", "pttl": -1, "value": "2"},
    "other:app:key": {"type": "string", "pttl": 90_000, "value": "not ours"},
}

Client = Redis | RedisCluster


@pytest.fixture(params=["fake", "real", "cluster"])
async def client(request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    """An empty ``decode_responses`` client: fakeredis, the private redis-server (database
    :data:`DB`), or the private Redis Cluster (every primary emptied) as the bot connects."""
    redis: Client
    if request.param == "fake":
        redis = fakeredis.FakeAsyncRedis(decode_responses=True)
    elif request.param == "real":
        url = request.getfixturevalue("redis_server").url.replace("/0", f"/{DB}")
        redis = Redis.from_url(url, decode_responses=True)
    else:
        redis = RedisCluster.from_url(request.getfixturevalue("redis_cluster").url, decode_responses=True)
    await redis.flushdb()
    await load_keys(redis, {**OLD, **FOREIGN})
    yield redis
    await redis.flushdb()
    await redis.aclose()


def renamed(key: str, value: Any) -> Any:
    """A b5f3182 key's value with schema 3's field names (game hashes, leaderboards)."""
    for kind, renames in (
        (":game", mig.GAME_FIELDS),
        (":chatcfg:", mig.CHAT_SETTINGS_FIELDS),
        (":user:", mig.USER_FIELDS),
    ):
        if kind in key and isinstance(value, dict):
            return {renames.get(field, field): v for field, v in value.items()}
    if ":top:" in key and isinstance(value, dict):
        out = {}
        for field, v in value.items():
            user, _, name = field.rpartition(":")
            out[f"{user}:{mig.BOARD_FIELDS[name]}"] = v
        return out
    return value


def new_name(key: str, bot: str = BOT) -> str:
    """``cheat:<rest>`` → ``cheat:<bot>:<rest>``."""
    return f"cheat:{bot}:{key.removeprefix('cheat:')}"


def final_name(key: str) -> str | None:
    """A b5f3182 key's name after schema 4 (the statistics in the slot ``{s<bot>}``; their counted
    sets gone: ``None``)."""
    keys, rest = Keys(bot_prefix(BOT)), key.removeprefix("cheat:")
    if found := re.fullmatch(r"stats:\{u(\d+)\}(|:chats|:counted)", rest):
        user, part = found.groups()
        return {"": keys.totals(user), ":chats": keys.boards_of(user)}.get(part)
    if found := re.fullmatch(r"top:\{c(-?\d+)\}(|:counted)", rest):
        return None if found[2] else keys.board(found[1])
    return new_name(key)


#: The outbox kinds b5f3182 wrote, as tgbot.views.announcements.AnnouncementKind spells them.
NOTE_KINDS = {"ChallengeResolved": "challenge_resolved", "GameEnded": "game_ended"}
#: The statistics keys schema 4 moves or drops.
STATISTICS = sum(1 for key in OLD if final_name(key) != new_name(key))
#: The tables (both games) and outbox notes (every one) schema 4 rewrites.
REWRITTEN = 2 + sum(len(entry["value"]) for key, entry in OLD.items() if key.endswith(":outbox"))


def record_commands(redis: Client, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the commands ``redis`` sends from now on (outside pipelines)."""
    sent: list[str] = []
    real: Callable[..., Any] = redis.execute_command

    async def execute_command(*args: Any, **kwargs: Any) -> Any:
        sent.append(str(args[0]).upper())
        return await real(*args, **kwargs)

    monkeypatch.setattr(redis, "execute_command", execute_command)
    return sent


async def assert_migrated(redis: Client) -> None:
    """Every b5f3182 key is under the bot's name with its type and value (its TTL kept: none
    stays none, one runs on from what it was), the other bot's and foreign keys untouched,
    the marker set, and the bot's store and statistics read the data as they were written."""
    got = await dump_keys(redis, "cheat:*")
    assert not [k for k in got if mig._is_old(k)]
    for key, old in OLD.items():
        if final_name(key) is None:
            continue
        new, want = got.pop(final_name(key)), renamed(key, old["value"])
        if key.endswith(":game"):  # the table's JSON in today's format, the same table
            table, old_table = new["value"].pop("table"), want.pop("table")
            assert json.loads(table)["schema"] == TABLE_SCHEMA and Table.from_json(table) == as_today(old_table)
        if key.endswith(":outbox"):  # the notes' kinds as AnnouncementKind spells them
            new["value"] = [json.loads(note) for note in new["value"]]
            want = [json.loads(note) | {"kind": NOTE_KINDS[json.loads(note)["kind"]]} for note in want]
        assert (new["type"], new["value"]) == (old["type"], want), key
        assert new["pttl"] == -1 if old["pttl"] == -1 else 0 < new["pttl"] <= old["pttl"], key
    assert got.pop(_marker(BOT))["value"] == str(mig.SCHEMA)
    for key, entry in FOREIGN.items():
        now = await read_key(redis, key)
        assert now is not None and (now["type"], now["value"]) == (entry["type"], entry["value"])
        got.pop(key, None)
    assert got == {}

    store = Store(redis, prefix=f"cheat:{BOT}")
    for gid in (LIVE, DONE):
        stored = as_today(FIXTURE["tables"][gid])
        assert await store.load(gid) == stored
        # the new format: the old fields under their spelled-out names, seats as dicts, and the version
        assert json.loads(stored.to_json()) == spelled_out(json.loads(FIXTURE["tables"][gid]))
        assert Table.from_json(stored.to_json()) == stored
    live = await store.load(LIVE)
    assert live is not None and live.status is Status.PLAYING and live.action_count == 4
    assert [s.user_id for s in live.seats] == [101, 102, 103]
    chat_game = await store.chat_game(-100, None)
    assert chat_game is not None and chat_game.id == LIVE
    assert set(await store.records.live_games()) == {LIVE, DONE}
    assert [t.id for t in await store.user_games(102)] == [LIVE]
    assert (await store.records.chat_settings(-100)).shuffle and await store.records.chat_turn_timeout(
        -100, 90.0
    ) == 60.0
    assert (
        await store.records.user_lang(101) == "en"
        and await store.records.can_dm(101)
        and not await store.records.can_dm(103)
    )
    assert (await stats.totals(store.records, 201))[0].games == 1
    assert [uid for uid, *_ in await stats.top(store.records, -200, 10)] == []  # one game: below MIN_TOP_GAMES
    done = await store.load(DONE)
    assert done is not None and not await stats.count_game(store.records, done)  # counted once, by b5f3182
    assert await store.records.take_notify(-100) == [104]


async def test_b5f3182_keys_move_to_the_bot_and_load_as_stored(
    client: Client, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO, logger="tgbot.storage.migrate")
    # keys moved, then 7 hashes renamed (2 games, 1 board, 1 chat, 3 users), then the statistics
    assert await mig.migrate(client, BOT) == len(OLD) + 7 + STATISTICS + REWRITTEN
    want = [
        f"storage schema 2: {len(OLD)} keys moved from cheat:* to cheat:{BOT}:*",
        "storage schema 3: fields renamed in 7 hashes",
        f"storage schema 4: {STATISTICS} statistics keys into one slot",
        f"storage schema 4: {REWRITTEN} tables and notes rewritten",
    ]
    assert [r.getMessage() for r in caplog.records] == want
    sent = record_commands(client, monkeypatch)
    assert await mig.migrate(client, BOT) == 0
    assert sent == ["GET"]  # the marker only: no SCAN
    monkeypatch.undo()
    await assert_migrated(client)


async def test_a_crash_midway_and_a_rerun_finish_the_job(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    # Pages of 4 keys; the process dies right after the second page's RESTOREs (its old keys
    # not yet deleted), then again right after the third page's DUMPs: the reruns finish.
    monkeypatch.setattr(mig, "BATCH", 4)
    for dying in (5, 7):
        real = client.pipeline
        runs = [0]

        def pipeline(
            *args: Any, dying: int = dying, real: Callable[..., Any] = real, runs: list[int] = runs, **kwargs: Any
        ) -> Any:
            pipe = real(*args, **kwargs)
            run = pipe.execute

            async def execute(*a: Any, **kw: Any) -> Any:
                got = await run(*a, **kw)
                runs[0] += 1
                if runs[0] == dying:
                    raise ConnectionError("the process died here")
                return got

            pipe.execute = execute
            return pipe

        monkeypatch.setattr(client, "pipeline", pipeline)
        with pytest.raises(ConnectionError):
            await mig.migrate(client, BOT)
        monkeypatch.undo()
        monkeypatch.setattr(mig, "BATCH", 4)
        assert await client.get(_marker(BOT)) is None
    # some keys moved before the crashes, some not (how many depends on SCAN's pages, which
    # Redis's incremental rehashing may change): the rerun finishes the job
    left = [key for key in await dump_keys(client, "cheat:*") if mig._is_old(key)]
    assert 0 < len(left) < len(OLD)
    await mig.migrate(client, BOT)
    await assert_migrated(client)


async def test_a_second_bot_finds_no_old_keys_and_leaves_the_first_ones_alone(client: Client) -> None:
    assert await mig.migrate(client, BOT) == len(OLD) + 7 + STATISTICS + REWRITTEN
    before = await dump_keys(client, f"cheat:{BOT}:*")
    assert await mig.migrate(client, "777") == 0
    assert await client.get(_marker("777")) == str(mig.SCHEMA)
    after = await dump_keys(client, f"cheat:{BOT}:*")
    assert {k: v["value"] for k, v in after.items()} == {k: v["value"] for k, v in before.items()}
    assert await mig.migrate(client, OTHER) == 1  # at schema 2: no key moved, its game hash renamed
    assert await client.hgetall(f"cheat:{OTHER}:{{gZz9_-Zz9}}:game") == {"version": "3", "table": "{}"}
    assert await mig.migrate(client, OTHER) == 0


async def test_schema_2_data_gets_its_fields_renamed(client: Client) -> None:
    # keys of schema 2 (the bot's prefix) with b5f3182's field names; a crash midway (some hashes
    # renamed, the marker not set) and a rerun
    await client.flushdb()
    await load_keys(client, {**{new_name(key): entry for key, entry in OLD.items()}, **FOREIGN})
    await client.set(_marker(BOT), "2")
    game = new_name(f"cheat:{{g{LIVE}}}:game")
    await client.eval(mig._RENAME_FIELDS, 1, game, "v", "version", "t", "table")
    assert (
        await mig.migrate(client, BOT) == 6 + STATISTICS + REWRITTEN
    )  # all but the live game, renamed before the crash
    assert await mig.migrate(client, BOT) == 0
    await assert_migrated(client)


async def test_an_empty_redis_gets_the_marker() -> None:
    redis = fakeredis.FakeAsyncRedis(decode_responses=True)
    assert await mig.migrate(redis, BOT) == 0
    assert await redis.keys("*") == [_marker(BOT)]


@pytest.mark.parametrize("bad", ["", "12a", "-5", "١٢٣"])
async def test_a_bot_id_is_decimal_digits(bad: str) -> None:
    with pytest.raises(ValueError):
        await mig.migrate(fakeredis.FakeAsyncRedis(decode_responses=True), bad)


@pytest.mark.parametrize("schema", [None, 2, TABLE_SCHEMA + 1])
def test_a_table_of_another_schema_is_refused(schema: int | None) -> None:
    # older tables are the migration's to convert (schema 4), never read by Table.from_json
    raw = json.loads(FIXTURE["tables"][LIVE]) | ({} if schema is None else {"schema": schema})
    with pytest.raises(ValueError, match=f"schema {schema}"):
        Table.from_json(json.dumps(raw))


def spelled_out(old: dict[str, Any]) -> dict[str, Any]:
    """A schema 1 or 2 table's dict as schema 3 stores it."""
    seats = [{"user_id": seat[0], "name": seat[1]} for seat in old["seats"]]  # (the fixture's seats are plain)
    new = {mig.TABLE_KEYS.get(key, key): value for key, value in old.items()} | {"schema": TABLE_SCHEMA, "seats": seats}
    if (old.get("state") or {}).get("result"):  # a result's ending, which older records leave to be inferred
        new["state"] = json.loads(GameState.from_json(json.dumps(old["state"])).to_json())
    return new


def as_today(raw: str) -> Table:
    """A schema 1 or 2 table (plain seats) as the table it is today."""
    return Table.from_json(json.dumps(spelled_out(json.loads(raw))))


async def test_a_schema_2_table_migrates_with_every_field() -> None:
    """Every field a schema-2 table could hold (its seats' set fields, a link offer, a group that
    refuses messages) comes back under its own name once the migration has rewritten it."""
    raw = json.loads(FIXTURE["tables"][LIVE]) | {
        "schema": 2,
        "link_offers": [104],
        "access": "unwritable",
        "unwritable_since": 1760000010.0,
        "retire_at": 1760000910.0,
        "seats": [
            [101, "Аня", {"lang": "en", "auto": 1}],
            [102, "Борис", {"ai": True, "left": True}],
            [-1, "Bot A", {"bot": "counting"}],
        ],
    }
    redis = fakeredis.FakeAsyncRedis(decode_responses=True)
    keys = Keys(bot_prefix(BOT))
    await redis.set(keys.schema(), "3")  # schema 3 still read old tables lazily
    await redis.hset(keys.game(raw["id"]), mapping={"version": "9", "table": json.dumps(raw)})
    assert await mig.migrate(redis, BOT) == 1
    table = Table.from_json(await redis.hget(keys.game(raw["id"]), "table"))
    assert (table.id, table.chat_id, table.thread_id, table.creator, table.title, table.lang) == (
        "AbC123xy",
        -100,
        None,
        101,
        "Group -100",
        "ru",
    )
    assert (table.status, table.variant, table.action_count, table.version, table.seed) == (
        Status.PLAYING,
        "russian",
        4,
        9,
        11,
    )
    assert (table.deadline, table.created, table.outbox_seq, table.ended) == (1760000060.0, 1760000000.0, 0, None)
    assert (table.deadline_kind, table.turn_end, table.turn_timeout, table.ai_delay, table.ai_pause) == (
        "remind",
        1760000075.0,
        60.0,
        3.0,
        (1.0, 3.0),
    )
    assert (table.link_offers, table.group_access, table.unwritable_since, table.retire_at) == (
        (104,),
        "unwritable",
        1760000010.0,
        1760000910.0,
    )
    assert table.state is not None and table.state.to_dict() == raw["state"]
    assert [
        (seat.user_id, seat.name, seat.lang, seat.player, seat.strategy, seat.auto_moves) for seat in table.seats
    ] == [
        (101, "Аня", "en", "person", "counting", 1),
        (102, "Борис", None, "left", "counting", 0),
        (-1, "Bot A", None, "bot", "counting", 0),
    ]
    assert json.loads(table.to_json())["seats"] == [
        {"user_id": 101, "name": "Аня", "lang": "en", "auto_moves": 1},
        {"user_id": 102, "name": "Борис", "player": "left"},
        {"user_id": -1, "name": "Bot A", "player": "bot"},
    ]
    assert {**json.loads(table.to_json()), "seats": None} == {**spelled_out(raw), "seats": None}
    assert Table.from_json(table.to_json()) == table


async def test_schema_3_data_gets_todays_telegram_names_and_note_kinds() -> None:
    # what views/bookkeeping.py and views/announcements.py read lazily before schema 4
    redis = fakeredis.FakeAsyncRedis(decode_responses=True)
    keys = Keys(bot_prefix(BOT))
    await redis.set(keys.schema(), "3")
    names = {"p0": "11", "pk1": "x", "nr2": "1", "b": "5", "bh": "d", "panel_message:1": "12", "p1": "99"}
    await redis.hset(keys.telegram("G1"), mapping=names)
    notes = [{"seq": 1, "kind": "remind", "to": 5}, {"seq": 2, "kind": "left"}, {"seq": 3, "kind": "auto", "seat": 1}]
    await redis.rpush(keys.outbox("G1"), *(json.dumps(note) for note in notes))
    assert await mig.migrate(redis, BOT) == 1 + 2  # one hash renamed, two notes rewritten
    assert await redis.hgetall(keys.telegram("G1")) == {
        "panel_message:0": "11",
        "panel_state:1": "x",
        "unreachable:2": "1",
        "board_message": "5",
        "board_digest": "d",
        "panel_message:1": "12",  # today's name wins
    }
    kinds = [json.loads(note)["kind"] for note in await redis.lrange(keys.outbox("G1"), 0, -1)]
    assert kinds == ["reminder", "left", "automatic_move"]
    assert await mig.migrate(redis, BOT) == 0


async def test_a_board_hand_off_left_by_a_crash_is_added_once() -> None:
    # schema 3's group upgrade moved a board in three scripts; a crash could leave its hand-off
    redis = fakeredis.FakeAsyncRedis(decode_responses=True)
    keys = Keys(bot_prefix(BOT))
    top = f"{keys.prefix}:top"
    await redis.set(keys.schema(), "3")
    await redis.hset(f"{top}:{{c-200}}", mapping={"5:games": "1", "5:wins": "0", "5:name": "Anya", "6:games": "3"})
    # crashed before the addition
    await redis.set(keys.chat_moved(-100), "-200")
    await redis.hset(
        f"{top}:{{c-100}}:handoff", mapping={"~batch": "b1", "5:games": "2", "5:wins": "1", "5:name": "Аня"}
    )
    await redis.zadd(f"{top}:{{c-100}}:handoff:counted", {"G1": 1})
    # crashed after the addition, before the drop
    await redis.set(keys.chat_moved(-300), "-200")
    await redis.hset(f"{top}:{{c-300}}:handoff", mapping={"~batch": "b2", "7:games": "4"})
    await redis.zadd(f"{top}:{{c-200}}:counted", {"moved:-300:b2": 1})
    await mig.migrate(redis, BOT)
    assert await redis.hgetall(keys.board(-200)) == {"5:games": "3", "5:wins": "1", "5:name": "Anya", "6:games": "3"}
    assert await redis.keys(f"{top}:*") == []
