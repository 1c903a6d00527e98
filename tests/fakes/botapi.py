"""The same module as :mod:`playground.emulator.botapi` (the emulator ships with the project for the
playground); this name stays for the tests that import it."""

import sys

from playground.emulator import botapi

sys.modules[__name__] = botapi
