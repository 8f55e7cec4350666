"""Feishu / Lark: long connection (or webhook) in, streaming CardKit cards out."""

from channels.feishu.config import FeishuConfig

__all__ = ["FeishuConfig"]
