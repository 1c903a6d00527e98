"""The two ways in, polling and the webhook: every update is stored in a Redis Stream before
Telegram is told it arrived, then processed from there, in order per chat, exactly once."""
