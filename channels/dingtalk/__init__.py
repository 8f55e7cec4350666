"""DingTalk: Stream mode inbound (dingtalk-stream), AI-card streaming or markdown replies."""

from channels.dingtalk.config import DingTalkConfig

__all__ = ["DingTalkConfig"]
