"""The per-game owner in the active process: tables kept in memory, one lock per game, the
compare-and-set commit (state, action log, outbox), and one timer per game."""
