"""Fixtures for the Bot API emulator's own tests."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.fakes import BotAPIEmulator  # noqa: E402


@pytest.fixture
async def emu():
    emulator = BotAPIEmulator()
    await emulator.start()
    try:
        yield emulator
    finally:
        await emulator.stop()


@pytest.fixture
async def bot(emu):
    import telegram

    b = telegram.Bot(emu.token, base_url=emu.base_url)
    await b.initialize()
    try:
        yield b
    finally:
        await b.shutdown()
