"""The bot's game model, pure: a :class:`~tgbot.game.table.Table` (lobby, seats, the engine's
state, its timer) and its transitions ``(table, …) -> Change``: :mod:`~tgbot.game.lobby` before
and around the game, :mod:`~tgbot.game.play` during it, :mod:`~tgbot.game.group` for the group's
access. The game's rules stay in ``core``."""
