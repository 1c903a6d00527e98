"""The code that talks to Telegram: the view sync after each commit (panels, then the group's
messages), the Bot API calls it makes, what Telegram shows by game, and the rate limiter."""
