"""Test doubles: an in-process Telegram Bot API emulator (see :mod:`.botapi`).

Names are imported lazily so that ``python -m tests.fakes.botapi`` runs cleanly.
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
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(name)
