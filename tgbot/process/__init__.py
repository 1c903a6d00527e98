"""One active process per bot token: the lease, the take-over, the internal HTTP server, the
clock every deadline is measured on, and the limiter of Bot API calls."""
