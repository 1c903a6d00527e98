"""The Telegram adapter of the «Верю — не верю» bot: python-telegram-bot 22 + Redis.

``python -m tgbot`` runs it; see README.md and DESIGN.md.
"""
