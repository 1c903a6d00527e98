"""The per-game owner in the active process: tables in memory, one lock per game, the
compare-and-set commit, one timer per game, and Redis's clock every deadline is measured on."""
