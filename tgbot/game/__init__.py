"""The bot's game model: a table (lobby, seats, the engine's state, timers) and its
transitions, pure functions from a table to a change."""
