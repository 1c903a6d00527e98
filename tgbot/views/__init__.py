"""What Telegram shows of a game (board, panels, announcements, menus, answers) and the sync
that brings Telegram up to date after each commit."""
