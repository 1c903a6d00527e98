"""The same module as :mod:`playground.emulator.spec` (the emulator ships with the project for the
playground); this name stays for the tests that import it."""

import sys

from playground.emulator import spec

sys.modules[__name__] = spec
