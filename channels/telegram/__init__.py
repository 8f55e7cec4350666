"""Telegram channel on python-telegram-bot's async `Bot`."""

from channels.telegram.config import TelegramConfig

__all__ = ["TelegramConfig"]
