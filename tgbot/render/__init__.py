"""What Telegram shows of a game, rendered purely from a table (and a reader's seat): text and keyboards."""
