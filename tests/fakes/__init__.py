"""Test doubles: the Bot API emulator, which lives in :mod:`playground.emulator` (installed with the
project for the playground). ``tests.fakes.botapi``, ``tests.fakes.html`` and ``tests.fakes.spec``
name the very same modules, so that the tests import it as they always did."""

import sys

from playground.emulator import botapi, html, spec
from playground.emulator.botapi import BotAPIEmulator, MessageRecord, SimChat, SimUser, TapResult
from playground.emulator.html import HTMLParseError, parse_html
from playground.emulator.spec import ApiError, Spec

for _module in (botapi, html, spec):
    sys.modules[f"{__name__}.{_module.__name__.rpartition('.')[2]}"] = _module

__all__ = [
    "ApiError",
    "BotAPIEmulator",
    "HTMLParseError",
    "MessageRecord",
    "SimChat",
    "SimUser",
    "Spec",
    "TapResult",
    "botapi",
    "html",
    "parse_html",
    "spec",
]
