"""PTB handlers, by what the user does: they decode an update, hand it to the game's owner and
answer the tap."""
