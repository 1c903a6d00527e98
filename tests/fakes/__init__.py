"""Test doubles: the Bot API emulator (:mod:`playground.emulator.botapi`, also importable as
:mod:`tests.fakes.botapi`).

Names are imported lazily so that importing the package stays cheap.
"""

from importlib import import_module

_EXPORTS = {
    "ApiError": "spec",
    "BotAPIEmulator": "botapi",
    "MessageRecord": "botapi",
    "SimChat": "botapi",
    "SimUser": "botapi",
    "TapResult": "botapi",
    "HTMLParseError": "html",
    "parse_html": "html",
    "Spec": "spec",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(f"playground.emulator.{_EXPORTS[name]}"), name)
    raise AttributeError(name)
