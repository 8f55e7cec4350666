"""Slack: Socket Mode or HTTP Events API via slack-bolt, native streaming into threads."""

from channels.slack.config import SlackConfig

__all__ = ["SlackConfig"]
