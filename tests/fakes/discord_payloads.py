"""Discord payloads as the real API and Gateway send them (what discord.py parses), for the fake
Discord (tests/fakes/discord_server.py) and tests that push events into it."""

from __future__ import annotations

import base64
import itertools
from typing import Any

BOT_ID = 4242
APP_ID = 4243


def token_of(bot_id: int) -> str:
    """A bot token as Discord makes them: the bot's id (base64) first."""
    return base64.b64encode(str(bot_id).encode()).decode().rstrip("=") + ".fake.token"


TOKEN = token_of(BOT_ID)
USER_ID = 1001
GUILD_ID = 9000
CHANNEL_ID = 9001  # a text channel of the guild
ROLE_ID = 9500
EPOCH = "2026-01-01T00:00:00.000000+00:00"


def user_payload(user_id: int, name: str, *, bot: bool = False) -> dict[str, Any]:
    return {
        "id": str(user_id),
        "username": name,
        "global_name": name,
        "discriminator": "0",
        "avatar": None,
        "bot": bot,
    }


class Payloads:
    """Builders of messages, threads, the guild and interactions (ids from one counter)."""

    bot_id: int
    app_id: int
    files: dict[int, bytes]
    threads: dict[int, dict[str, Any]]
    _interactions: dict[int, dict[str, Any]]
    _ids = itertools.count(100_000)
    user_locale = "en-US"  # the person's Discord language, sent with every interaction
    guild_locale = "en-US"  # a server's language, sent with its interactions

    def next_id(self) -> int:
        return next(self._ids)

    @property
    def base(self) -> str:
        """The fake's http://127.0.0.1:port (attachment URLs); `Served`'s comes first."""
        raise NotImplementedError

    def _application(self) -> dict[str, Any]:
        return {
            "id": str(self.app_id),
            "name": "antler",
            "icon": None,
            "description": "",
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": user_payload(1, "owner"),
            "verify_key": "00",
            "flags": 0,
        }

    def mention_payload(self, text: str) -> dict[str, Any]:
        """A message in the guild's text channel that @-mentions the bot: `<@bot> text`."""
        return self.message_payload(
            CHANNEL_ID, f"<@{self.bot_id}> {text}", guild=GUILD_ID, mentions=(self.bot_id,)
        )

    def message_payload(
        self,
        channel: int,
        content: str,
        *,
        author: dict[str, Any] | None = None,
        guild: int | None = None,
        message_id: int | None = None,
        mentions: tuple[int, ...] = (),
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": str(message_id or self.next_id()),
            "channel_id": str(channel),
            "author": author or user_payload(USER_ID, "alice"),
            "content": content,
            "timestamp": EPOCH,
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [user_payload(m, "antler", bot=m == self.bot_id) for m in mentions],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
            "components": [],
        }
        if guild is not None:
            out["guild_id"] = str(guild)
            out["guild_locale"] = self.guild_locale
            out["member"] = {
                "roles": [str(ROLE_ID)],
                "joined_at": EPOCH,
                "deaf": False,
                "mute": False,
                "flags": 0,
            }
        return out

    def _attachment_payload(
        self, att_id: int, name: str, data: bytes, index: int = 0
    ) -> dict[str, Any]:
        url = f"{self.base}/attachments/{att_id}/{name}"
        return {
            "id": str(att_id),
            "filename": name,
            "size": len(data),
            "url": url,
            "proxy_url": url,
            "content_type": "text/plain",
        }

    def add_file(self, name: str, data: bytes) -> dict[str, Any]:
        att_id = self.next_id()
        self.files[att_id] = data
        return self._attachment_payload(att_id, name, data)

    def thread_payload(self, thread_id: int, parent: int, name: str) -> dict[str, Any]:
        return {
            "id": str(thread_id),
            "type": 11,
            "guild_id": str(GUILD_ID),
            "parent_id": str(parent),
            "owner_id": str(self.bot_id),
            "name": name,
            "message_count": 0,
            "member_count": 1,
            "rate_limit_per_user": 0,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": EPOCH,
                "locked": False,
            },
        }

    def guild_payload(self) -> dict[str, Any]:
        return {
            "id": str(GUILD_ID),
            "name": "Fake guild",
            "unavailable": False,
            "member_count": 2,
            "owner_id": "1",
            "features": [],
            "emojis": [],
            "stickers": [],
            "roles": [
                {
                    "id": str(GUILD_ID),
                    "name": "@everyone",
                    "permissions": "0",
                    "position": 0,
                    "color": 0,
                    "hoist": False,
                    "managed": False,
                    "mentionable": False,
                },
                {
                    "id": str(ROLE_ID),
                    "name": "team",
                    "permissions": "0",
                    "position": 1,
                    "color": 0,
                    "hoist": False,
                    "managed": False,
                    "mentionable": False,
                },
            ],
            "channels": [
                {
                    "id": str(CHANNEL_ID),
                    "type": 0,
                    "name": "general",
                    "position": 0,
                    "permission_overwrites": [],
                    "guild_id": str(GUILD_ID),
                }
            ],
            "threads": list(self.threads.values()),
            "members": [],
            "voice_states": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }

    def interaction_payload(
        self,
        kind: int,
        data: dict[str, Any],
        *,
        channel: int,
        guild: int | None = None,
        message: dict[str, Any] | None = None,
        locale: str | None = None,
    ) -> dict[str, Any]:
        interaction_id = self.next_id()
        out: dict[str, Any] = {
            "id": str(interaction_id),
            "application_id": str(self.app_id),
            "type": kind,
            "data": data,
            "channel_id": str(channel),
            "channel": {"id": str(channel), "type": 1 if guild is None else 0},
            "token": f"itoken{interaction_id}",
            "version": 1,
            "locale": locale or self.user_locale,
            "app_permissions": "0",
            "entitlements": [],
            "authorizing_integration_owners": {},
            "attachment_size_limit": 10 * 1024 * 1024,
            "context": 1 if guild is None else 0,
        }
        if guild is None:
            out["user"] = user_payload(USER_ID, "alice")
        else:
            out["guild_id"] = str(guild)
            out["guild_locale"] = self.guild_locale
            out["channel"].update(
                guild_id=str(guild), name="general", position=0, permission_overwrites=[]
            )
            out["member"] = {
                "user": user_payload(USER_ID, "alice"),
                "roles": [str(ROLE_ID)],
                "joined_at": EPOCH,
                "deaf": False,
                "mute": False,
                "flags": 0,
                "permissions": "0",
            }
        if message is not None:
            out["message"] = message
        self._interactions[interaction_id] = out
        return out
