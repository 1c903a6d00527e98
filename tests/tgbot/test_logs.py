"""LOG_FORMAT=json: one JSON object a line, UTC times, secrets masked; a game's start and end
logged once each with ids only; every line about a game starts ``game=… chat=…``."""

import ast
import json
import logging
import re
from dataclasses import replace
from pathlib import Path

import pytest

from tgbot.game import lobby as game_lobby
from tgbot.game.table import Ending, Seat, Status, Table
from tests.e2e.test_full_game import open_table
from tests.tgbot.helpers import play_on
from tests.tgbot.live import running
from tgbot.logs import FloodFilter, LogFormat, about_game, setup
from tgbot.process.watch import game_committed

TOKEN = "123456:" + "A" * 35


class _Captured:
    def __init__(self, capsys):
        self.capsys = capsys

    def getvalue(self):
        return self.capsys.readouterr().err


@pytest.fixture
def captured(capsys):
    """Standard error as the root logger's handler writes it (handlers restored after)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield _Captured(capsys)
    root.handlers[:] = handlers
    root.setLevel(level)


def test_json_lines_carry_utc_time_level_logger_message_and_the_game(captured):
    setup("INFO", [TOKEN], LogFormat.JSON)
    logging.getLogger("tgbot.x").info("token %s here", TOKEN, extra={"game": "g1", "chat": -100})
    try:
        raise ValueError(f"bad {TOKEN}")
    except ValueError:
        logging.getLogger("tgbot.y").exception("failed")
    first, second = [json.loads(line) for line in captured.getvalue().splitlines()]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", first["time"])
    assert first["level"] == "INFO" and first["logger"] == "tgbot.x"
    assert first["message"] == "token 123456:*** here" and (first["game"], first["chat"]) == ("g1", -100)
    assert second["level"] == "ERROR" and "ValueError: bad 123456:***" in second["error"]
    assert TOKEN not in captured.getvalue()


def test_text_lines_are_in_utc_too(captured):
    setup("INFO", [], LogFormat.TEXT)
    logging.getLogger("tgbot.x").info("hello")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO tgbot\.x: hello\n", captured.getvalue())


def test_a_game_start_and_end_are_logged_once_each_with_ids_only(caplog):
    seats = (Seat(user_id=11, name="Alice Secret"), Seat(user_id=12, name="Bob Secret"))
    lobby = Table(id="G1", chat_id=-1001, thread_id=None, creator=11, title="Our group", seats=seats)
    playing = replace(lobby, status=Status.PLAYING)
    over = replace(playing, status=Status.OVER, ended=Ending.FINISHED)
    with caplog.at_level(logging.INFO, logger="tgbot.process.watch"):
        game_committed(None, lobby)
        game_committed(lobby, playing)
        game_committed(playing, playing)
        game_committed(playing, over)
    lines = [record.getMessage() for record in caplog.records]
    assert lines == [
        "game=G1 chat=-1001 started: 2 seats, variant russian",
        "game=G1 chat=-1001 ended: finished, 2 seats, variant russian, 0 plays",
    ]
    assert all((record.game, record.chat) == ("G1", -1001) for record in caplog.records)


#: Log methods of a logger.
_LEVELS = {"debug", "info", "warning", "error", "exception", "critical", "log"}
#: Names and ``<x>.id`` owners that stand for a game in tgbot/.
_GAME_IDS = {"game_id", "gid"}
_TABLES = {"table", "after", "before", "game"}


def _names_a_game(node: ast.AST) -> bool:
    """Whether ``node`` mentions a game's id (``game_id``, ``tap.game_id``, ``table.id``,
    ``done.change.table.id``…)."""
    for part in ast.walk(node):
        if (isinstance(part, ast.Name) and part.id in _GAME_IDS) or (
            isinstance(part, ast.Attribute) and part.attr in _GAME_IDS
        ):
            return True
        if isinstance(part, ast.Attribute) and part.attr == "id":
            owner = part.value
            if (isinstance(owner, ast.Name) and owner.id in _TABLES) or (
                isinstance(owner, ast.Attribute) and owner.attr == "table"
            ):
                return True
    return False


def _plain_log_calls_about_a_game(tree: ast.AST) -> list[int]:
    """Lines of ``log.<level>(…)`` calls on a module's logger whose arguments name a game."""
    return [
        call.lineno
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _LEVELS
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id in ("log", "logger", "logging")
        and any(_names_a_game(arg) for arg in [*call.args, *(k.value for k in call.keywords)])
    ]


def test_every_line_about_a_game_goes_through_about_game():
    """A log call naming a game goes through ``tgbot.logs.about_game`` (``game=… chat=…`` and
    JSON's ``game`` and ``chat``), never straight to the module's logger."""
    root = Path(__file__).resolve().parents[2] / "tgbot"
    plain = {
        f"{path.relative_to(root.parent)}:{line}"
        for path in sorted(root.rglob("*.py"))
        for line in _plain_log_calls_about_a_game(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert plain == set()
    # (the scan sees such a call)
    assert _plain_log_calls_about_a_game(ast.parse('log.info("lobby %s opened", table.id)')) == [1]


def test_a_line_about_a_game_starts_with_its_ids_and_carries_them(caplog):
    logger = logging.getLogger("tgbot.test")
    with caplog.at_level(logging.INFO, logger="tgbot.test"):
        about_game(logger, "G7", -1002).info("lobby opened by %s", 11)
        about_game(logger, "G8").warning("sync failed: %s", "100% gone")
    first, second = caplog.records
    assert first.getMessage() == "game=G7 chat=-1002 lobby opened by 11"
    assert (first.game, first.chat) == ("G7", -1002)
    assert second.getMessage() == "game=G8 sync failed: 100% gone" and second.game == "G8"
    assert not hasattr(second, "chat")


async def test_the_lines_of_a_played_game_carry_its_ids(caplog):
    """A game opened, played a little and stopped, and shown: every line of the bot that names
    the game starts ``game=<id> chat=<id>`` and carries both."""
    caplog.set_level(logging.INFO)
    async with running("memory://") as live:
        group, _users = await open_table(live.emu, 3, chat_id=-1019)
        gid = (await live.store.chat_game(group.id, None)).id
        await play_on(live.store, gid, steps=3)
        await live.store.transact(gid, lambda table: game_lobby.cancel(table, None, True))  # (an admin's stop)
        live.app.bot_data["services"].syncer.request(gid)
        await live.emu.wait_for(lambda: any(r.getMessage().endswith("plays") for r in caplog.records), timeout=30)
        await live.settle()
    about = [r for r in caplog.records if r.name.startswith("tgbot") and gid in r.getMessage()]
    assert len(about) >= 3  # opened, started, ended
    for record in about:
        assert record.getMessage().startswith(f"game={gid} chat={group.id} "), record.getMessage()
        assert (record.game, record.chat) == (gid, group.id)


def test_asyncio_s_failed_accepts_are_logged_once_a_minute(captured):
    """A process out of files: asyncio logs every failed accept() with a traceback (10 MB in 30 s
    in the webhook flood of issue 26); one line a minute gets through."""
    setup("INFO", [], LogFormat.TEXT)
    for _ in range(50):
        try:
            raise OSError(24, "Too many open files")
        except OSError as error:
            logging.getLogger("asyncio").error(
                "socket.accept() out of system resource\nsocket: <fd=9>", exc_info=(type(error), error, None)
            )
    logging.getLogger("asyncio").error("another error")
    output = captured.getvalue()
    assert output.count("out of system resource") == 1 and output.count("Too many open files") == 1
    assert "another error" in output


def test_a_flood_s_next_line_says_how_many_were_dropped():
    now = [0.0]
    flood = FloodFilter(period=60, clock=lambda: now[0])

    def record() -> logging.LogRecord:
        return logging.LogRecord("asyncio", logging.ERROR, "x", 1, "socket.accept() out of system resource", None, None)

    passed = [flood.filter(record()) for _ in range(4)]
    now[0] = 61
    last = record()
    assert passed == [True, False, False, False] and flood.filter(last)
    assert last.getMessage() == "socket.accept() out of system resource (and 3 more since the last such line)"
