"""LOG_FORMAT=json: one JSON object a line, UTC times, secrets masked; a game's start and end
logged once each with ids only."""

import json
import logging
import re
from dataclasses import replace

import pytest

from tgbot.game.table import Ending, Seat, Status, Table
from tgbot.logs import LogFormat, setup
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
