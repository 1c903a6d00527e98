"""The Telegram Bot API emulator (:mod:`.botapi`), as strict as Telegram: the tests drive the bot
with it, and the playground runs the real bot against it."""
