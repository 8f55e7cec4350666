"""Discord channel on discord.py (gateway for events, REST for replies)."""

from channels.discord.config import DiscordConfig

__all__ = ["DiscordConfig"]
