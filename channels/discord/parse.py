"""discord.py's Message and Interaction -> InboundMessage (pure, given the bot's id).

Conversations: a DM is one; in a server the chat is the channel (`workspace` the guild) and a
thread is a topic of its parent channel. With `thread_replies`, a top-level message in a
server channel starts its own thread: Discord gives a thread started from a message the
message's id, so its topic is known before the thread exists (the reply creates it).
"""

from __future__ import annotations

import re
import time
from typing import Any

import discord

from channels.base import Attachment, ChatRef, InboundMessage, UserRef
from channels.text import clean_input

CHANNEL = "discord"
_KINDS = {"image": "image", "audio": "audio", "video": "video"}


def mention_pattern(bot_id: int) -> re.Pattern[str]:
    return re.compile(rf"<@!?{bot_id}>")


def sender(user: discord.User | discord.Member, locale: str = "") -> UserRef:
    roles = getattr(user, "roles", None) or []
    return UserRef(
        id=str(user.id),
        name=user.display_name,
        is_bot=user.bot,
        roles=tuple(str(r.id) for r in roles if not r.is_default()),
        locale=locale,
    )


def locale_of(interaction: discord.Interaction) -> str:
    """The language hint of an interaction: the person's Discord language (`zh-CN`), else the
    server's (`guild_locale`) when Discord sent a language it does not know; messages carry
    neither."""
    known = set(discord.Locale)
    for found in (getattr(interaction, "locale", None), getattr(interaction, "guild_locale", None)):
        if found in known:
            return str(found.value)
    return ""


def chat_of(
    channel: Any, guild_id: int | None, *, own_thread: int | None = None
) -> tuple[ChatRef, bool]:
    """The message's chat and whether it is in a thread. `own_thread`: the id of the thread a
    top-level message starts (thread replies on)."""
    if guild_id is None:
        return ChatRef(channel=CHANNEL, chat_id=str(channel.id), chat_type="dm"), False
    workspace = str(guild_id)
    if isinstance(channel, discord.Thread):
        ref = ChatRef(
            channel=CHANNEL,
            chat_id=str(channel.parent_id),
            chat_type="group",
            workspace=workspace,
            topic_id=str(channel.id),
        )
        return ref, True
    topic = str(own_thread) if own_thread else None
    ref = ChatRef(channel=CHANNEL, chat_id=str(channel.id), chat_type="group", workspace=workspace)
    return ref.with_topic(topic), False


def attachment(att: discord.Attachment) -> Attachment:
    kind = (att.content_type or "").split("/", 1)[0]
    return Attachment(
        name=att.filename,
        ref=att.url,
        kind=_KINDS.get(kind, "file"),  # type: ignore[arg-type]
        mime_type=att.content_type or "",
        size=att.size,
    )


def parse_message(
    message: discord.Message, bot_id: int, *, thread_replies: bool
) -> InboundMessage | None:
    """None for what is not a user's message (system messages, our own)."""
    if message.author.id == bot_id or message.type not in (
        discord.MessageType.default,
        discord.MessageType.reply,
    ):
        return None
    guild_id = message.guild.id if message.guild else getattr(message.channel, "guild_id", None)
    mentioned = any(u.id == bot_id for u in message.mentions)
    top_level = guild_id is not None and not isinstance(message.channel, discord.Thread)
    own_thread = message.id if top_level and thread_replies else None
    chat, in_thread = chat_of(message.channel, guild_id, own_thread=own_thread)
    text = mention_pattern(bot_id).sub("", message.content).strip()
    ref = message.reference
    resolved = ref.resolved if ref is not None else None
    replies_to_bot = isinstance(resolved, discord.Message) and resolved.author.id == bot_id
    if in_thread and getattr(message.channel, "owner_id", None) == bot_id:
        replies_to_bot = True  # a thread the bot started: it answers there
    return InboundMessage(
        event_id=str(message.id),
        chat=chat,
        sender=sender(message.author),
        text=clean_input(text),
        attachments=tuple(attachment(a) for a in message.attachments),
        mentions_bot=mentioned,
        replies_to_bot=replies_to_bot,
        reply_to=str(ref.message_id) if ref is not None and ref.message_id else None,
        quoted_text=resolved.content if isinstance(resolved, discord.Message) else None,
        message_id=str(message.id),
        received_at=time.time(),
        unsupported="a sticker" if message.stickers and not text else "",
        in_main_chat=own_thread is not None,
        raw={"target": str(message.channel.id), "start_thread": own_thread is not None},
    )


def command_text(data: Any) -> str | None:
    """`/name args` of a slash command's interaction data; None when it is not ours."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    args = [str(o.get("value", "")) for o in data.get("options") or [] if isinstance(o, dict)]
    return " ".join(["/" + data["name"], *[a for a in args if a]])


def parse_interaction(
    interaction: discord.Interaction, text: str, *, thread_replies: bool, anchor: int | None
) -> InboundMessage | None:
    """A slash command or a button press as a message. `anchor`: the message the interaction
    response created (a command's echo) or the pressed message."""
    user = interaction.user
    channel = interaction.channel
    if user is None or channel is None:
        return None
    chat, in_thread = chat_of(channel, interaction.guild_id)
    in_main = interaction.guild_id is not None and not in_thread and thread_replies
    return InboundMessage(
        event_id=f"i{interaction.id}",
        chat=chat,
        sender=sender(user, locale_of(interaction)),
        text=clean_input(text),
        message_id=str(anchor) if anchor else None,
        received_at=time.time(),
        is_button=interaction.type == discord.InteractionType.component,
        in_main_chat=in_main,
        raw={"target": str(channel.id), "start_thread": False},
    )
