"""The bot's game model, pure: a :class:`~tgbot.game.table.Table` and its transitions ``(table, …) ->
Change`` (:mod:`~tgbot.game.lobby`, :mod:`~tgbot.game.play`, :mod:`~tgbot.game.group`); the rules stay in ``core``."""
