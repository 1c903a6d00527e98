"""PTB handlers, by what the user does (lobby, play, admin, language, private, chat): they decode
an update, hand it to the game's owner and answer the tap (common). app.py wires them."""

from tgbot.handlers.app import build_application, register_commands
from tgbot.handlers.common import tell_to_tap_again
from tgbot.handlers.context import BotContext, Services

__all__ = ["BotContext", "Services", "build_application", "register_commands", "tell_to_tap_again"]
